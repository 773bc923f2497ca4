import Foundation
public import Switchback

/// A credential store on a device that has not been unlocked since it started (a prewarmed or background
/// launch): while locked, every call answers as the Keychain does, `errSecInteractionNotAllowed`, which the
/// core reads as ``SwitchbackError/Code/credentialUnavailable``. ``DeviceUnlock`` unlocks it.
public actor LockableCredentialStore: CredentialStore {
    private let base = InMemoryCredentialStore()
    private var locked = true

    public init() {}

    public func unlock() { locked = false }

    private func check(_ operation: String) throws {
        if locked { throw KeychainStatus.error(KeychainStatus.interactionNotAllowed, operation: operation, accessGroup: nil) }
    }

    /// Stores a credential as the app did before the restart, whatever the lock.
    public func preload(_ credential: Credential, key: String) async { await base.save(credential, key: key) }

    public func load(key: String) async throws -> Credential? {
        try check("read")
        return await base.load(key: key)
    }

    public func save(_ credential: Credential, key: String) async throws {
        try check("write")
        await base.save(credential, key: key)
    }

    public func remove(key: String) async throws {
        try check("delete")
        await base.remove(key: key)
    }
}

/// Protected data becoming available: the user's first unlock after a restart, which ``unlock()`` performs
/// (unlocking the stores it was given, then releasing every waiter, as `UIApplication`'s notification does).
public final class DeviceUnlock: ProtectedDataGate, @unchecked Sendable {  // @unchecked: every field is under `lock`.
    private let lock = NSLock()
    private var unlocked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private let stores: [LockableCredentialStore]

    public init(_ stores: [LockableCredentialStore]) {
        self.stores = stores
    }

    /// How many callers are waiting for the unlock.
    public var waiting: Int { lock.withLock { waiters.count } }

    /// False until ``unlock()``.
    public var isAvailable: Bool { lock.withLock { unlocked } }

    public func waitUntilAvailable() async throws {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock {
                if unlocked { return true }
                waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    public func unlock() async {
        for store in stores { await store.unlock() }
        let released = lock.withLock {
            unlocked = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in released { waiter.resume() }
    }
}
