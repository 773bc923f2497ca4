#if canImport(Security)
    import Foundation
    import Security
    public import Switchback

    /// When a Keychain item can be read, and whether it leaves the device (it never does here).
    public enum KeychainAccessibility: Sendable {
        /// After the first unlock since the device started, until it restarts (the default: a journal or a
        /// refresh must work when a link or a background task launches the app while the device is locked).
        case afterFirstUnlockThisDeviceOnly
        /// Only while the device is unlocked.
        case whenUnlockedThisDeviceOnly

        var attribute: CFString {
            switch self {
            case .afterFirstUnlockThisDeviceOnly: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            case .whenUnlockedThisDeviceOnly: kSecAttrAccessibleWhenUnlockedThisDeviceOnly
            }
        }
    }

    /// Generic-password Keychain items of one service, optionally shared through an access group (an app and
    /// its extensions). What a status means is the core's decision (`KeychainStatus`): a locked device is
    /// `credentialUnavailable`, never "nothing stored".
    struct KeychainItems: Sendable {
        let service: String
        let accessGroup: String?
        var accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly

        private func query(_ account: String?) -> [String: Any] {
            var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            if let account { query[kSecAttrAccount as String] = account }
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        func write(_ data: Data, account: String) throws {
            // The accessibility class is set on every write, so a changed option reaches items stored before.
            let update: [String: Any] = [kSecValueData as String: data, kSecAttrAccessible as String: accessibility.attribute]
            var status = SecItemUpdate(query(account) as CFDictionary, update as CFDictionary)
            if status == errSecItemNotFound {
                var item = query(account)
                item[kSecValueData as String] = data
                item[kSecAttrAccessible as String] = accessibility.attribute
                status = SecItemAdd(item as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw KeychainStatus.error(status, operation: "write", accessGroup: accessGroup) }
        }

        func read(account: String) throws -> Data? {
            var item = query(account)
            item[kSecReturnData as String] = true
            item[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(item as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess else { throw KeychainStatus.error(status, operation: "read", accessGroup: accessGroup) }
            return result as? Data
        }

        func readAll() throws -> [Data] {
            var item = query(nil)
            item[kSecReturnData as String] = true
            item[kSecMatchLimit as String] = kSecMatchLimitAll
            var result: CFTypeRef?
            let status = SecItemCopyMatching(item as CFDictionary, &result)
            if status == errSecItemNotFound { return [] }
            guard status == errSecSuccess else { throw KeychainStatus.error(status, operation: "read", accessGroup: accessGroup) }
            return result as? [Data] ?? []
        }

        func delete(account: String) throws {
            let status = SecItemDelete(query(account) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw KeychainStatus.error(status, operation: "delete", accessGroup: accessGroup)
            }
        }
    }

    /// Flow journals in the Keychain, one item per flow.
    public struct KeychainFlowJournalStore: FlowJournalStore {
        private let items: KeychainItems
        private let dpopKeys: DPoPKeySource

        /// `dpopKeys` reads back the Secure Enclave DPoP keys of journaled sign-ins.
        public init(service: String = "switchback.flow-journal", accessGroup: String? = nil, dpopKeys: DPoPKeySource = .secureEnclave) {
            items = KeychainItems(service: service, accessGroup: accessGroup)
            self.dpopKeys = dpopKeys
        }

        public func save(_ journal: FlowJournal) throws {
            try items.write(try JSONEncoder().encode(journal), account: journal.flowID)
        }

        public func journals() throws -> [FlowJournal] {
            // An item that no longer decodes (another version) is skipped rather than failing every launch.
            try items.readAll().compactMap { try? dpopKeys.decoder().decode(FlowJournal.self, from: $0) }
        }

        public func remove(flowID: String) throws {
            try items.delete(account: flowID)
        }
    }

    /// Credentials in the Keychain, one item per key. Before the device's first unlock a read throws
    /// `credentialUnavailable` (give `CredentialManager` a `ProtectedDataAvailability` to wait instead); with
    /// `accessGroup` the app's extensions share the items (the app needs the keychain-access-groups
    /// entitlement; without it every call is `entitlementMissing`, which `SetupCheck.keychainProblem` reports).
    public struct KeychainCredentialStore: CredentialCollection {
        private let items: KeychainItems
        private let dpopKeys: DPoPKeySource

        /// `dpopKeys` reads back the Secure Enclave DPoP keys the credentials are bound to.
        public init(
            service: String = "switchback.credentials", accessGroup: String? = nil,
            accessibility: KeychainAccessibility = .afterFirstUnlockThisDeviceOnly, dpopKeys: DPoPKeySource = .secureEnclave
        ) {
            items = KeychainItems(service: service, accessGroup: accessGroup, accessibility: accessibility)
            self.dpopKeys = dpopKeys
        }

        /// Writes, reads back and deletes a probe item: the typed error a missing entitlement or a locked
        /// device gives, at launch rather than at the first sign-in.
        public func probe() throws {
            try items.write(Data("probe".utf8), account: ".switchback-probe")
            _ = try items.read(account: ".switchback-probe")
            try items.delete(account: ".switchback-probe")
        }

        /// The service and access group: two stores over the same items share their managers' refreshes.
        public var storageIdentity: String { "keychain:\(items.service)|\(items.accessGroup ?? "")" }

        public func load(key: String) throws -> Credential? {
            guard let data = try items.read(account: key) else { return nil }
            return try dpopKeys.decoder().decode(Credential.self, from: data)
        }

        public func save(_ credential: Credential, key: String) throws {
            try items.write(try JSONEncoder().encode(credential), account: key)
        }

        public func remove(key: String) throws {
            try items.delete(account: key)
        }

        public func allCredentials() throws -> [Credential] {
            // An item that no longer decodes (another version, the probe) is skipped.
            try items.readAll().compactMap { try? dpopKeys.decoder().decode(Credential.self, from: $0) }
        }
    }

    /// The `AccountBook`'s current account in one Keychain item, so that it survives a relaunch and, with
    /// `accessGroup`, the app's extensions see the same one.
    public struct KeychainAccountSelection: AccountSelectionStore {
        private let items: KeychainItems
        private static let account = "current-account"

        public init(service: String = "switchback.accounts", accessGroup: String? = nil) {
            items = KeychainItems(service: service, accessGroup: accessGroup)
        }

        public func load() throws -> String? {
            try items.read(account: Self.account).map { String(decoding: $0, as: UTF8.self) }
        }

        public func save(_ accountID: String?) throws {
            guard let accountID else { return try items.delete(account: Self.account) }
            try items.write(Data(accountID.utf8), account: Self.account)
        }
    }

    #if canImport(UIKit)
        import UIKit

        /// Protected data on iOS: `UIApplication.isProtectedDataAvailable`, and its notification to wait for.
        /// Give it to `CredentialManager` so that a prewarmed or background launch before the first unlock
        /// waits for the credential instead of taking the user as signed out.
        public struct ProtectedDataAvailability: ProtectedDataGate {
            public init() {}

            public var isAvailable: Bool { get async { await UIApplication.shared.isProtectedDataAvailable } }

            public func waitUntilAvailable() async throws {
                let signal = OneSignal()
                // Observe before asking, so that an unlock between the two is not missed.
                let observer = NotificationCenter.default.addObserver(
                    forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil, queue: nil
                ) { _ in signal.fire() }
                defer { NotificationCenter.default.removeObserver(observer) }
                if await UIApplication.shared.isProtectedDataAvailable { return }
                try await signal.wait()
            }
        }

        /// A refresh (or other work the core names) as a UIKit background task, so that it may finish after the
        /// app leaves the foreground; the task ends when the work does, or when the system's time runs out.
        public struct BackgroundTaskWork: BackgroundWork {
            public init() {}

            public func finish<Result: Sendable>(_ name: String, _ body: @Sendable () async throws -> Result) async throws -> Result {
                let application = await MainActor.run { UIApplication.shared }
                let task = BackgroundTask(application)
                // The expiration handler ends the task as Apple requires; the work itself goes on while it can.
                task.started(application.beginBackgroundTask(withName: name) { task.end() })
                defer { task.end() }
                return try await body()
            }
        }

        /// One background task, ended exactly once: by the work's end or by the system's expiration handler.
        final class BackgroundTask: @unchecked Sendable {  // @unchecked: `identifier` is guarded by `lock`.
            private let lock = NSLock()
            private let application: UIApplication
            private var identifier: UIBackgroundTaskIdentifier?

            init(_ application: UIApplication) { self.application = application }

            func started(_ identifier: UIBackgroundTaskIdentifier) {
                lock.withLock { self.identifier = identifier == .invalid ? nil : identifier }
            }

            func end() {
                let ending = lock.withLock { () -> UIBackgroundTaskIdentifier? in
                    defer { identifier = nil }
                    return identifier
                }
                if let ending { application.endBackgroundTask(ending) }
            }
        }

        /// Resumes one waiter once: when fired, or with `CancellationError` when the waiting task is cancelled.
        final class OneSignal: @unchecked Sendable {  // @unchecked: every field is guarded by `lock`.
            private let lock = NSLock()
            private var fired = false
            private var waiter: CheckedContinuation<Void, any Error>?

            func fire() {
                let waiting = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
                    fired = true
                    defer { waiter = nil }
                    return waiter
                }
                waiting?.resume()
            }

            func wait() async throws {
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                        let resumeNow = lock.withLock { () -> Bool in
                            if fired || Task.isCancelled { return true }
                            waiter = continuation
                            return false
                        }
                        if resumeNow { Task.isCancelled ? continuation.resume(throwing: CancellationError()) : continuation.resume() }
                    }
                } onCancel: {
                    let waiting = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
                        defer { waiter = nil }
                        return waiter
                    }
                    waiting?.resume(throwing: CancellationError())
                }
            }
        }
    #endif
#endif
