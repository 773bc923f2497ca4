import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// Sign-out against the emulator: tokens revoked (RFC 7009), the credential gone here whatever the provider
/// says, and the provider's session ended through RP-initiated logout only where a browser session exists.
@Suite("Sign-out")
struct SignOutTests {
    static let signedOut = URL(string: "com.example.app:/oauth/signed-out")!

    @Test("revokes the refresh token (and with it the sign-in's access tokens), removes the credential, and ends the provider's session with state")
    func signOut() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (client, credential) = try await CredentialManagerTests.signedIn(emulator)
            let store = InMemoryCredentialStore()
            let manager = CredentialManager(client: client, store: store, key: "main")
            try await manager.save(credential)
            let result = try await manager.signOut(signedInWith: .systemBrowser, postLogoutRedirectURI: Self.signedOut)
            #expect(result.revoked == ["refresh_token", "access_token"])
            #expect(result.revocationError == nil)
            #expect(await store.load(key: "main") == nil)
            // Revoked at the provider: neither token works any more.
            let refused = await expectFailure("a revoked refresh token must not refresh") { try await client.refresh(credential) }
            #expect(refused?.oauthError?.error == "invalid_grant")
            await expectCode(.userInfoInvalid) { try await client.userInfo(for: credential) }

            let endSession = try #require(result.endSession)
            let query = try #require(URLComponents(url: endSession.url, resolvingAgainstBaseURL: false)?.queryItems)
            #expect(query.first { $0.name == "id_token_hint" }?.value == credential.idToken)
            #expect(query.first { $0.name == "client_id" }?.value == "native-rs")
            #expect(query.first { $0.name == "post_logout_redirect_uri" }?.value == Self.signedOut.absoluteString)
            #expect(query.first { $0.name == "state" }?.value == endSession.state)
            guard case .redirect(let location) = try await EmulatorBrowser().open(endSession.url) else {
                throw RigFailure("the provider did not send the browser back")
            }
            let returned = try #require(URL(string: location))
            try endSession.verifyReturn(returned)
        }
    }

    @Test("a return with another state, no state, two states or at another address is refused")
    func forgedReturns() throws {
        let request = EndSessionRequest(
            url: try #require(URL(string: "https://id.example/end_session")), state: "s-0123456789", postLogoutRedirectURI: Self.signedOut)
        expectCode(.stateMismatch) { try request.verifyReturn(try #require(URL(string: "com.example.app:/oauth/signed-out?state=other"))) }
        expectCode(.stateMissing) { try request.verifyReturn(try #require(URL(string: "com.example.app:/oauth/signed-out"))) }
        expectCode(.duplicateParameter) {
            try request.verifyReturn(try #require(URL(string: "com.example.app:/oauth/signed-out?state=s-0123456789&state=s-0123456789")))
        }
        expectCode(.redirectURIMismatch) { try request.verifyReturn(try #require(URL(string: "com.example.app:/oauth/callback?state=s-0123456789"))) }
        expectCode(.redirectURIMismatch) { try request.verifyReturn(try #require(URL(string: "com.evil.app:/oauth/signed-out?state=s-0123456789"))) }
    }

    @Test("a sign-in made in an ephemeral browser left no provider session: nothing to show, no sign-in prompt for a sign-out")
    func ephemeral() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (client, credential) = try await CredentialManagerTests.signedIn(emulator)
            let manager = CredentialManager(client: client, store: InMemoryCredentialStore(), key: "main")
            try await manager.save(credential)
            let result = try await manager.signOut(signedInWith: .ephemeralBrowser, postLogoutRedirectURI: Self.signedOut)
            #expect(result.endSession == nil)
            #expect(result.revoked == ["refresh_token", "access_token"])
        }
    }

    @Test("a provider without revocation or end_session: the credential is still removed, the reason is typed, no browser is needed")
    func bareProvider() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (_, credential) = try await CredentialManagerTests.signedIn(emulator)
            let metadata = ProviderMetadata(
                issuer: emulator.issuer, authorizationEndpoint: try #require(URL(string: emulator.issuer + "/authorize")),
                tokenEndpoint: try #require(URL(string: emulator.issuer + "/token")), jwksURI: try #require(URL(string: emulator.issuer + "/jwks")))
            let client = OIDCClient(
                configuration: ClientConfiguration(clientID: "native-rs", redirectURI: try #require(URL(string: "com.example.app:/oauth/callback"))),
                provider: .static(metadata))
            let store = InMemoryCredentialStore()
            let manager = CredentialManager(client: client, store: store, key: "main")
            try await manager.save(credential)
            let result = try await manager.signOut(signedInWith: .systemBrowser)
            #expect(result.revoked.isEmpty)
            #expect(result.revocationError?.code == .invalidConfiguration)
            #expect(result.endSession == nil)
            #expect(await store.load(key: "main") == nil)
        }
    }

    @Test("the emulator refuses to revoke another client's token and answers 200 for an unknown one (RFC 7009 §2.2)")
    func revocationEndpoint() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (_, credential) = try await CredentialManagerTests.signedIn(emulator)
            let other = EmulatorHarness.client(emulator, clientID: "native-es")
            let tokens = try await other.tokenClient()
            await expectCode(.tokenEndpointError) { try await tokens.revoke(try #require(credential.refreshToken), typeHint: "refresh_token") }
            try await tokens.revoke("never-issued", typeHint: "access_token")
        }
    }

    @Test("a Safari view is refused an https post-logout redirect URI before anything is revoked: iOS opens no universal link from a redirect")
    func safariViewHTTPS() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let (client, credential) = try await CredentialManagerTests.signedIn(emulator)
            let store = InMemoryCredentialStore()
            let manager = CredentialManager(client: client, store: store, key: "main")
            try await manager.save(credential)
            let coordinator = SignInCoordinator(.app(client), host: RecordingUserAgentHost(), opener: RecordingURLOpener())
            await expectCode(.strategyNotSupported) {
                _ = try await coordinator.signOut(
                    manager, signedInWith: .safariView, postLogoutRedirectURI: try #require(URL(string: "https://app.example.com/signed-out")))
            }
            await expectCode(.strategyNotSupported) {
                _ = try await coordinator.signOut(
                    manager, signedInWith: .systemBrowser, postLogoutRedirectURI: try #require(URL(string: "http://app.example.com/signed-out")))
            }
            #expect(await store.load(key: "main") == credential, "nothing was signed out")
            // Still signed in at the provider.
            _ = try await client.userInfo(for: credential)
        }
    }
}
