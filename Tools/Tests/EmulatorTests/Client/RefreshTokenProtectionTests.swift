import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// A refresh token behind Face ID / Touch ID / the passcode, against the emulator: the manager asks only
/// when a refresh needs the token, a decline changes nothing, and concurrent callers are asked once.
@Suite("CredentialManager: refresh token behind user authentication")
struct RefreshTokenProtectionTests {
    static let reason = "Unlock your session to continue"

    static func manager(_ emulator: Emulator) async throws -> (CredentialManager, InMemoryCredentialStore, ScriptedUserPresence, Credential) {
        let (client, credential) = try await CredentialManagerTests.signedIn(emulator)
        let store = InMemoryCredentialStore()
        let user = ScriptedUserPresence()
        let manager = CredentialManager(
            client: client, store: store, key: "main", protection: RefreshTokenProtection(secrets: user, reason: Self.reason))
        return (manager, store, user, credential)
    }

    @Test("saving and using a valid access token ask nothing; the store never holds the refresh token")
    func noPromptWhileValid() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (manager, store, user, credential) = try await Self.manager(emulator)
            try await manager.save(credential)
            #expect(await user.stored("main") == credential.refreshToken)
            #expect(await store.load(key: "main")?.refreshToken == nil)
            #expect(await store.load(key: "main")?.accessToken == credential.accessToken)
            for _ in 0..<10 { _ = try await manager.validCredential() }
            #expect(await user.prompts.isEmpty)
        }
    }

    @Test("an expired access token asks once, even for 50 concurrent callers; the rotated token goes back behind authentication")
    func promptOnRefresh() async throws {
        try await EmulatorHarness.withEmulator(configuration: CredentialManagerTests.strict) { emulator in
            let (manager, store, user, credential) = try await Self.manager(emulator)
            try await manager.save(CredentialManagerTests.expired(credential))
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await manager.validCredential().accessToken } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(await user.prompts == [Self.reason])
            #expect(await emulator.refreshRequestCount() == 1)
            let rotated = try #require(await user.stored("main"))
            #expect(rotated != credential.refreshToken)
            #expect(await store.load(key: "main")?.refreshToken == nil)
            #expect(await store.load(key: "main.refreshing") == nil)
        }
    }

    @Test("a decline is authenticationDeclined: nothing sent, nothing changed, and the next attempt works")
    func declined() async throws {
        try await EmulatorHarness.withEmulator(configuration: CredentialManagerTests.strict) { emulator in
            let (manager, store, user, credential) = try await Self.manager(emulator)
            try await manager.save(CredentialManagerTests.expired(credential))
            let before = await store.load(key: "main")
            await user.setAnswer(.decline)
            await expectCode(.authenticationDeclined) { _ = try await manager.validCredential() }
            #expect(await emulator.refreshRequestCount() == 0)
            #expect(await store.load(key: "main") == before)
            #expect(await store.load(key: "main.refreshing") == nil, "no refresh was marked as under way")
            #expect(await user.stored("main") == credential.refreshToken)
            await user.setAnswer(.unavailable)
            await expectCode(.authenticationUnavailable) { _ = try await manager.validCredential() }
            await user.setAnswer(.approve)
            #expect(try await manager.validCredential().accessToken != credential.accessToken)
        }
    }

    @Test("a protected token that is gone (a biometry change invalidated it) is reauthenticationRequired; sign-out asks nothing")
    func goneAndSignOut() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (manager, _, user, credential) = try await Self.manager(emulator)
            try await manager.save(CredentialManagerTests.expired(credential))
            await user.remove(key: "main")
            await expectCode(.reauthenticationRequired) { _ = try await manager.validCredential() }
            try await manager.save(credential)
            let signedOut = try await manager.signOut(signedInWith: .ephemeralBrowser)
            #expect(signedOut.revoked == ["access_token"], "the refresh token is not read (no prompt) at sign-out")
            #expect(await user.prompts.isEmpty)
            #expect(await user.stored("main") == nil)
            #expect(try await manager.credential() == nil)
        }
    }

    @Test("a refresh token stored before protection was turned on moves behind it at the next use, without a prompt")
    func migrates() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (manager, store, user, credential) = try await Self.manager(emulator)
            await store.save(credential, key: "main")
            _ = try await manager.validCredential()
            #expect(await store.load(key: "main")?.refreshToken == nil)
            #expect(await user.stored("main") == credential.refreshToken)
            #expect(await user.prompts.isEmpty)
        }
    }

    @Test("a new sign-in saved while refreshes are asked for is never mixed with the old one (each result is one account's)")
    func saveDuringRefresh() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (manager, store, user, credential) = try await Self.manager(emulator)
            let (_, second) = try await CredentialManagerTests.signedIn(emulator)
            for _ in 0..<20 {
                try await manager.save(CredentialManagerTests.expired(credential))
                async let refreshed = try? manager.validCredential()
                try await manager.save(second)
                _ = await refreshed
                // The last save wins whole: a refresh of the first sign-in that ran meanwhile stored nothing, so
                // the store and the protected token are both the second sign-in's, never one of each.
                #expect(await store.load(key: "main")?.accessToken == second.accessToken)
                #expect(await user.stored("main") == second.refreshToken)
            }
        }
    }
}
