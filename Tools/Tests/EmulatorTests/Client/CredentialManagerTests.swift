import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// `CredentialManager` against the emulator with strict rotation (RFC 9700 §4.14.2: a reused refresh token
/// revokes its family), the setting under which racing refreshes sign users out.
@Suite("CredentialManager: one refresh at a time")
struct CredentialManagerTests {
    static var strict: EmulatorConfiguration {
        var configuration = EmulatorConfiguration.defaults
        configuration.refreshTokenReuse = .revokesFamily
        return configuration
    }

    /// Signs alice in on `emulator`; returns the client and the credential.
    static func signedIn(_ emulator: Emulator) async throws -> (OIDCClient, Credential) {
        let client = EmulatorHarness.client(emulator)
        let session = try await client.prepareAuthorization()
        guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
            throw RigFailure("expected a redirect to the app")
        }
        return (client, try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session))
    }

    /// A credential whose access token has already expired, to make every caller want a refresh.
    static func expired(_ credential: Credential) -> Credential {
        var expired = credential
        expired.expiresAt = Date().addingTimeInterval(-1)
        return expired
    }

    @Test("100 concurrent callers of an expired credential: the token endpoint sees exactly one refresh; all get its token; nobody is signed out")
    func hundredCallers() async throws {
        try await EmulatorHarness.withEmulator(configuration: Self.strict) { emulator in
            let (client, credential) = try await Self.signedIn(emulator)
            let store = InMemoryCredentialStore()
            let manager = CredentialManager(client: client, store: store, key: "main")
            try await manager.save(Self.expired(credential))
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 { group.addTask { try await manager.validCredential().accessToken } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(await emulator.refreshRequestCount() == 1)
            #expect(tokens.count == 1)
            #expect(tokens.first != credential.accessToken)
            let stored = try #require(await store.load(key: "main"))
            #expect(tokens.first == stored.accessToken, "the new access token was stored before it was handed out")
            #expect(stored.refreshToken != credential.refreshToken)
            #expect(await store.load(key: "main.refreshing") == nil)
            // The family is intact: the stored token refreshes again.
            #expect(try await manager.refresh().refreshToken != stored.refreshToken)
        }
    }

    @Test("without the manager, two refreshes racing with one token: the reuse revokes the family and the winner is signed out too")
    func racingWithoutManager() async throws {
        try await EmulatorHarness.withEmulator(configuration: Self.strict) { emulator in
            let (client, credential) = try await Self.signedIn(emulator)
            let winner = try await client.refresh(credential)
            await expectCode(.tokenEndpointError) { try await client.refresh(credential) }
            let error = await expectFailure("the family was revoked by the reuse") { try await client.refresh(winner) }
            #expect(error?.oauthError?.error == "invalid_grant")
        }
    }

    @Test("a credential another process already rotated in the shared store is used, not refreshed again (no reuse, no sign-out)")
    func rotatedElsewhere() async throws {
        try await EmulatorHarness.withEmulator(configuration: Self.strict) { emulator in
            let (client, credential) = try await Self.signedIn(emulator)
            let store = InMemoryCredentialStore()
            let app = CredentialManager(client: client, store: store, key: "main")
            let fileProvider = CredentialManager(client: client, store: store, key: "main")
            try await app.save(Self.expired(credential))
            let rotated = try await fileProvider.validCredential()
            let seen = try await app.validCredential()
            #expect(seen == rotated)
            #expect(await emulator.refreshRequestCount() == 1)
        }
    }

    @Test(
        "invalid_grant after a rotation another process stored meanwhile returns that credential; with nothing newer stored it is reauthenticationRequired"
    )
    func toldApart() async throws {
        try await EmulatorHarness.withEmulator(configuration: Self.strict) { emulator in
            let (client, credential) = try await Self.signedIn(emulator)
            // The store answers with the old credential first, as a process that read it just before the
            // other one wrote the rotated one does; the refresh is then a reuse.
            let rotated = try await client.refresh(credential)
            let store = LaggingStore(first: credential, then: rotated)
            let manager = CredentialManager(client: client, store: store, key: "main")
            #expect(try await manager.refresh() == rotated)

            // Revoked: the reuse above revoked the family, so nothing newer exists anywhere.
            let revokedStore = InMemoryCredentialStore()
            let revoked = CredentialManager(client: client, store: revokedStore, key: "main")
            try await revoked.save(rotated)
            let error = await expectFailure("a revoked grant must not look refreshed") { try await revoked.refresh() }
            #expect(error?.code == .reauthenticationRequired)
            #expect(error?.oauthError?.error == "invalid_grant")
            #expect(error?.message.contains("revoked or expired") == true)
        }
    }

    @Test(
        "a refresh cut off by termination (its mark left in the store) is tried again when the next launch needs one; a lost rotation is reported as such; a still-valid token is used meanwhile"
    )
    func cutOff() async throws {
        try await EmulatorHarness.withEmulator(configuration: Self.strict) { emulator in
            let (client, credential) = try await Self.signedIn(emulator)
            // A mark does not stop a valid access token from being used (an unreachable token endpoint
            // must not block every API call).
            let validStore = InMemoryCredentialStore()
            await validStore.save(credential, key: "main")
            await validStore.save(credential, key: "main.refreshing")
            #expect(try await CredentialManager(client: client, store: validStore, key: "main").validCredential() == credential)
            #expect(await emulator.refreshRequestCount() == 0)

            // The request never reached the provider: the next launch's retry succeeds.
            let store = InMemoryCredentialStore()
            await store.save(Self.expired(credential), key: "main")
            await store.save(credential, key: "main.refreshing")
            let relaunched = CredentialManager(client: client, store: store, key: "main")
            let recovered = try await relaunched.validCredential()
            #expect(recovered.refreshToken != credential.refreshToken)
            #expect(await store.load(key: "main.refreshing") == nil)

            // The provider rotated it but the answer was lost with the app: the retry is a reuse.
            let lostStore = InMemoryCredentialStore()
            await lostStore.save(Self.expired(credential), key: "main")
            await lostStore.save(credential, key: "main.refreshing")
            let lost = CredentialManager(client: client, store: lostStore, key: "main")
            let error = await expectFailure("a lost rotation cannot be recovered under strict reuse detection") { try await lost.validCredential() }
            #expect(error?.code == .rotationLost)
            #expect(error?.message.contains("cut off") == true)
        }
    }
}

extension CredentialManagerTests {
    @Test(
        "a sign-out, or a new sign-in, while a refresh is under way: neither is undone; the refresh's callers get the new sign-in, or notSignedIn"
    )
    func removeOrSaveDuringRefresh() async throws {
        var configuration = EmulatorConfiguration.defaults
        // The sign-out or sign-in below must land while the refresh waits for the token endpoint: 5 s, so
        // that a loaded machine's stall between the two cannot let the refresh finish first.
        configuration.slowResponseDelay = 5
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            let (client, credential) = try await Self.signedIn(emulator)
            await emulator.setFaults([.tokenSlow], forClient: "native-rs")
            for replacedBySignIn in [false, true] {
                let store = InMemoryCredentialStore()
                let manager = CredentialManager(client: client, store: store, key: "main")
                try await manager.save(Self.expired(credential))
                let refreshing = Task { try await manager.validCredential() }
                // The refresh has sent its request once its mark is in the store (the endpoint then takes 5 s).
                for _ in 0..<500 where await store.load(key: "main.refreshing") == nil { try await Task.sleep(nanoseconds: 10_000_000) }
                #expect(await store.load(key: "main.refreshing") != nil, "the refresh is under way")
                var newer = credential
                newer.accessToken = "at-newer-sign-in"
                if replacedBySignIn {
                    try await manager.save(newer)
                    #expect(try await refreshing.value.accessToken == "at-newer-sign-in", "the user who just signed in is not sent back to sign in")
                } else {
                    try await manager.remove()
                    let error = await expectFailure("the refresh must not store over a sign-out") { try await refreshing.value }
                    #expect(error?.code == .notSignedIn)
                }
                #expect(await store.load(key: "main")?.accessToken == (replacedBySignIn ? "at-newer-sign-in" : nil))
                #expect(await store.load(key: "main.refreshing") == nil)
            }
        }
    }
}

/// A store whose first load of the credential returns `first` and every later one `then`: what a process
/// sees when another one writes between its read and its refresh.
actor LaggingStore: CredentialStore {
    private var loads = 0
    private let first: Credential
    private let then: Credential
    private var marks: [String: Credential] = [:]

    init(first: Credential, then: Credential) {
        self.first = first
        self.then = then
    }

    func load(key: String) -> Credential? {
        guard key == "main" else { return marks[key] }
        loads += 1
        return loads == 1 ? first : then
    }

    func save(_ credential: Credential, key: String) { if key != "main" { marks[key] = credential } }
    func remove(key: String) { marks[key] = nil }
}
