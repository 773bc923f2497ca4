#if canImport(Security)
    import Foundation
    import Security
    public import Switchback

    /// Generic-password Keychain items of one service, readable on this device only after its first unlock
    /// (a journal must be readable when a link relaunches the app in the background), optionally shared
    /// through an access group.
    struct KeychainItems: Sendable {
        let service: String
        let accessGroup: String?

        private func query(_ account: String?) -> [String: Any] {
            var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            if let account { query[kSecAttrAccount as String] = account }
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        func write(_ data: Data, account: String) throws {
            let update: [String: Any] = [kSecValueData as String: data]
            var status = SecItemUpdate(query(account) as CFDictionary, update as CFDictionary)
            if status == errSecItemNotFound {
                var item = query(account)
                item[kSecValueData as String] = data
                item[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                status = SecItemAdd(item as CFDictionary, nil)
            }
            guard status == errSecSuccess else { throw SwitchbackError(.storeFailed, "the Keychain refused the write (OSStatus \(status))") }
        }

        func read(account: String) throws -> Data? {
            var item = query(account)
            item[kSecReturnData as String] = true
            item[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(item as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess else { throw SwitchbackError(.storeFailed, "the Keychain refused the read (OSStatus \(status))") }
            return result as? Data
        }

        func readAll() throws -> [Data] {
            var item = query(nil)
            item[kSecReturnData as String] = true
            item[kSecMatchLimit as String] = kSecMatchLimitAll
            var result: CFTypeRef?
            let status = SecItemCopyMatching(item as CFDictionary, &result)
            if status == errSecItemNotFound { return [] }
            guard status == errSecSuccess else { throw SwitchbackError(.storeFailed, "the Keychain refused the read (OSStatus \(status))") }
            return result as? [Data] ?? []
        }

        func delete(account: String) throws {
            let status = SecItemDelete(query(account) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw SwitchbackError(.storeFailed, "the Keychain refused the delete (OSStatus \(status))")
            }
        }
    }

    /// Flow journals in the Keychain, one item per flow.
    public struct KeychainFlowJournalStore: FlowJournalStore {
        private let items: KeychainItems

        public init(service: String = "switchback.flow-journal", accessGroup: String? = nil) {
            items = KeychainItems(service: service, accessGroup: accessGroup)
        }

        public func save(_ journal: FlowJournal) throws {
            try items.write(try JSONEncoder().encode(journal), account: journal.flowID)
        }

        public func journals() throws -> [FlowJournal] {
            // An item that no longer decodes (another version) is skipped rather than failing every launch.
            try items.readAll().compactMap { try? JSONDecoder().decode(FlowJournal.self, from: $0) }
        }

        public func remove(flowID: String) throws {
            try items.delete(account: flowID)
        }
    }

    /// Credentials in the Keychain, one item per key.
    public struct KeychainCredentialStore: CredentialStore {
        private let items: KeychainItems

        public init(service: String = "switchback.credentials", accessGroup: String? = nil) {
            items = KeychainItems(service: service, accessGroup: accessGroup)
        }

        public func load(key: String) throws -> Credential? {
            guard let data = try items.read(account: key) else { return nil }
            return try JSONDecoder().decode(Credential.self, from: data)
        }

        public func save(_ credential: Credential, key: String) throws {
            try items.write(try JSONEncoder().encode(credential), account: key)
        }

        public func remove(key: String) throws {
            try items.delete(account: key)
        }
    }
#endif
