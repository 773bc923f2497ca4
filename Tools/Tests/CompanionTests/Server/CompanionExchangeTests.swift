import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// A confidential client's sign-in from the app: the coordinator checks the callback, the companion redeems
/// the code with the secret (`POST /exchange`), and the app validates the ID token it gets back.
@Suite("Coordinator with the companion's code exchange")
struct CompanionExchangeTests {
    /// The app's view of the backend's client: its ID, no secret, no PAR (which needs the secret).
    static func client(_ rig: CompanionRig) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "backend", redirectURI: URL(string: CompanionRig.appRedirect)!, pushedAuthorization: .never),
            provider: .discovery(issuer: rig.emulator.issuer)
        )
    }

    /// Signs alice in through `coordinator`, playing the browser; returns the result and the callback URL.
    static func signIn(_ coordinator: SignInCoordinator, host: RecordingUserAgentHost) async throws -> (Result<Credential, any Error>, URL) {
        let task = Task { try await coordinator.signIn(SignInRequest(provider: "generic", strategy: .systemBrowser)) }
        var presented: URL?
        for _ in 0..<6000 where presented == nil {  // at least 30 s: a loaded machine is slow, a hang fails
            if case .present(let url, _)? = host.calls.first { presented = url } else { try await Task.sleep(nanoseconds: 5_000_000) }
        }
        let authorizationURL = try #require(presented)
        guard case .redirect(let location) = try await EmulatorBrowser().signIn(authorizationURL), let callback = URL(string: location) else {
            throw RigFailure("the provider did not redirect")
        }
        let events = try #require(host.events)
        await events.callback(.redirect(callback))
        let credential = await task.result.flatMap { result in
            result.credential.map { .success($0) } ?? .failure(RigFailure("the sign-in ended without a credential"))
        }
        return (credential, callback)
    }

    @Test("the companion redeems, the app validates: signed in with the provider's tokens; the callback again is refused")
    func signsIn() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let host = RecordingUserAgentHost()
            let coordinator = SignInCoordinator(
                .app(Self.client(rig), redeemingCodesAt: CompanionClient(rig.companion.baseURL)), host: host, opener: RecordingURLOpener())
            let (result, callback) = try await Self.signIn(coordinator, host: host)
            let credential = try result.get()
            #expect(credential.subject == "9b1f7c2e-alice" && credential.refreshToken != nil)
            await expectCode(.callbackReplayed) { _ = try await coordinator.handle(url: callback) }
            // Without the companion the app's own client cannot redeem: it holds no secret.
            let alone = RecordingUserAgentHost()
            let (refused, _) = try await Self.signIn(
                SignInCoordinator(.app(Self.client(rig)), host: alone, opener: RecordingURLOpener()), host: alone)
            #expect((refused.failure as? SwitchbackError)?.code == .tokenEndpointError)
        }
    }

    @Test("a companion that answers with a session, or refuses, fails the sign-in with a typed error")
    func refusals() async throws {
        try await CompanionRig.with(returns: .session) { sessions in
            let host = RecordingUserAgentHost()
            let coordinator = SignInCoordinator(
                .app(Self.client(sessions), redeemingCodesAt: CompanionClient(sessions.companion.baseURL)), host: host, opener: RecordingURLOpener())
            let (session, _) = try await Self.signIn(coordinator, host: host)
            #expect((session.failure as? SwitchbackError)?.code == .invalidTokenResponse)

            // The companion's allow-list does not hold this redirect URI.
            try await CompanionRig.with(
                returns: .tokens, change: { $0.exchange = .init(redirectURIs: ["com.example.other:/cb"], returns: .tokens) }
            ) { refusing in
                let other = RecordingUserAgentHost()
                let refused = SignInCoordinator(
                    .app(Self.client(refusing), redeemingCodesAt: CompanionClient(refusing.companion.baseURL)), host: other,
                    opener: RecordingURLOpener())
                let (result, _) = try await Self.signIn(refused, host: other)
                let error = result.failure as? SwitchbackError
                #expect(error?.code == .tokenEndpointError && error?.httpStatus == 400)
            }
        }
    }
    @Test(
        "sign-out of an app whose codes the companion redeems: revoked through the companion (RFC 7009 with the secret the app lacks); malformed revocations are refused, an unknown token is 200"
    )
    func signOutThroughCompanion() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let host = RecordingUserAgentHost()
            let companion = CompanionClient(rig.companion.baseURL)
            let client = Self.client(rig)
            let coordinator = SignInCoordinator(.app(client, redeemingCodesAt: companion), host: host, opener: RecordingURLOpener())
            let credential = try await Self.signIn(coordinator, host: host).0.get()
            #expect(try await client.userInfo(for: credential)["sub"] == .string("9b1f7c2e-alice"))

            // The app's own client cannot: it holds no secret.
            let alone = CredentialManager(client: client, store: InMemoryCredentialStore(), key: "alone")
            try await alone.save(credential)
            let refused = try await alone.signOut(signedInWith: .ephemeralBrowser)
            #expect(refused.revoked.isEmpty && refused.revocationError?.code == .tokenEndpointError && refused.revokedThrough == .provider)

            let manager = CredentialManager(client: client, store: InMemoryCredentialStore(), key: "main")
            try await manager.save(credential)
            let signOut = try await manager.signOut(signedInWith: .ephemeralBrowser, revokingThrough: companion)
            #expect(signOut.revoked == ["refresh_token", "access_token"])
            #expect(signOut.revokedThrough == .companion(rig.companion.baseURL))
            #expect(signOut.revocationError == nil)
            await expectCode(.userInfoInvalid) { _ = try await client.userInfo(for: credential) }

            for body in [
                ["token": "", "token_type_hint": "access_token"], ["token": "t", "token_type_hint": "id_token"], ["token_type_hint": "access_token"],
                ["token": String(repeating: "t", count: 8193), "token_type_hint": "access_token"],
            ] {
                #expect(try await rig.post("/revoke", body).response.status == 400, "\(body.keys.sorted())")
            }
            let unknown = try await rig.post("/revoke", ["token": "never-issued", "token_type_hint": "refresh_token"])
            #expect(unknown.response.status == 200, "RFC 7009 §2.2: an unknown token is not an error, and says nothing of which exist")
            // Another client's token, which the provider refuses to revoke for this one: answered as an unknown one.
            let other = EmulatorHarness.client(rig.emulator)
            let started = try await other.prepareAuthorization()
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(started.authorizationURL) else {
                throw RigFailure("no redirect for the other client")
            }
            let foreign = try await other.completeAuthorization(.redirect(try #require(URL(string: location))), session: started)
            let refusedByProvider = try await rig.post("/revoke", ["token": foreign.accessToken, "token_type_hint": "access_token"])
            #expect(refusedByProvider.response.status == 200 && refusedByProvider.json["error"] == nil, "\(refusedByProvider.json)")
            #expect(try await other.userInfo(for: foreign)["sub"] != nil, "the other client's token was not revoked")
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

}
