import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport
import SwitchbackTesting

/// Locked is not signed out: before the first unlock a Keychain read fails with
/// `errSecInteractionNotAllowed`, which must never read as "no credential".
@Suite("Locked device")
struct LockedDeviceTests {
    /// A Keychain-like store: while locked every call throws what `KeychainStatus` makes of the status.
    actor LockableStore: CredentialStore {
        var locked = true
        var credentials: [String: Credential] = [:]

        func unlock() { locked = false }

        func load(key: String) throws -> Credential? {
            if locked { throw KeychainStatus.error(KeychainStatus.interactionNotAllowed, operation: "read", accessGroup: nil) }
            return credentials[key]
        }

        func save(_ credential: Credential, key: String) throws {
            if locked { throw KeychainStatus.error(KeychainStatus.interactionNotAllowed, operation: "write", accessGroup: nil) }
            credentials[key] = credential
        }

        func remove(key: String) throws {
            if locked { throw KeychainStatus.error(KeychainStatus.interactionNotAllowed, operation: "delete", accessGroup: nil) }
            credentials[key] = nil
        }
    }

    /// A gate the test opens: the device's first unlock.
    final class Unlock: ProtectedDataGate, @unchecked Sendable {  // @unchecked: `waiters` is guarded by `lock`.
        private let lock = NSLock()
        private var waiters: [CheckedContinuation<Void, Never>] = []
        private var open = false
        let store: LockableStore

        init(_ store: LockableStore) { self.store = store }

        func waitUntilAvailable() async throws {
            await withCheckedContinuation { continuation in
                let now = lock.withLock { () -> Bool in
                    if open { return true }
                    waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }

        var waiting: Int { lock.withLock { waiters.count } }

        func unlock() async {
            await store.unlock()
            let resumed = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                open = true
                defer { waiters = [] }
                return waiters
            }
            for waiter in resumed { waiter.resume() }
        }
    }

    /// A manager over `store` holding a credential valid for an hour; `provider` must outlive it.
    static func manager(_ store: LockableStore, provider: StubProvider, gate: (any ProtectedDataGate)?) async throws -> CredentialManager {
        var credential = CredentialStoreTests.credential()
        credential.expiresAt = Date().addingTimeInterval(3600)
        await store.unlock()
        try await store.save(credential, key: "main")
        await store.lockAgain()
        return CredentialManager(client: provider.client(), store: store, key: "main", protectedData: gate)
    }

    @Test("without a gate, a locked store is credentialUnavailable: typed and retryable, never nil, never storeFailed")
    func typed() async throws {
        let store = LockableStore()
        let provider = try await StubProvider()
        let manager = try await Self.manager(store, provider: provider, gate: nil)
        await expectCode(.credentialUnavailable) { _ = try await manager.validCredential() }
        await expectCode(.credentialUnavailable) { _ = try await manager.credential() }
    }

    @Test("with a gate, the manager waits for the first unlock and then returns the stored credential")
    func waits() async throws {
        let store = LockableStore()
        let gate = Unlock(store)
        let provider = try await StubProvider()
        let manager = try await Self.manager(store, provider: provider, gate: gate)
        let result = Task { try await manager.validCredential() }
        for _ in 0..<4000 where gate.waiting == 0 { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(gate.waiting == 1, "the manager is waiting, not failing")
        await gate.unlock()
        #expect(try await result.value.accessToken == "at-1")
        #expect(provider.tokenRequests.isEmpty, "a valid credential is not refreshed")
    }

    @Test(
        "what each Keychain status means: locked → credentialUnavailable, missing entitlement → entitlementMissing naming the group, other → storeFailed"
    )
    func statuses() {
        #expect(KeychainStatus.error(-25308, operation: "read", accessGroup: nil).code == .credentialUnavailable)
        let entitlement = KeychainStatus.error(-34018, operation: "write", accessGroup: "ABCDE12345.com.example.shared")
        #expect(entitlement.code == .entitlementMissing)
        #expect(entitlement.message.contains("keychain-access-groups") && entitlement.message.contains("ABCDE12345.com.example.shared"))
        #expect(KeychainStatus.error(-25299, operation: "write", accessGroup: nil).code == .storeFailed)
    }
}

extension LockedDeviceTests.LockableStore {
    func lockAgain() { locked = true }
}
