import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// DPoP nonces (RFC 9449 §8 and §9) against the emulator asking for them everywhere: the client retries
/// once with the server's nonce at the token endpoint and at a resource server, and an API call signed by
/// `send(_:authorizedBy:)` carries a fresh proof bound to its access token.
@Suite("DPoP nonces")
struct DPoPNonceTests {
    static var noncing: EmulatorConfiguration {
        var configuration = EmulatorConfiguration.defaults
        configuration.requiresDPoPNonce = true
        return configuration
    }

    static func client(_ emulator: Emulator, par: ClientConfiguration.PARPolicy = .never) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "native-es", redirectURI: URL(string: "com.example.app:/oauth/callback")!, scopes: ["openid", "profile"],
                pushedAuthorization: par, dpop: .perSignIn),
            provider: .discovery(issuer: emulator.issuer))
    }

    @Test("sign-in (with PAR and without), refresh and userinfo each meet use_dpop_nonce and go through with the nonce", arguments: [false, true])
    func everyEndpoint(par: Bool) async throws {
        try await EmulatorHarness.withEmulator(configuration: Self.noncing) { emulator in
            let client = Self.client(emulator, par: par ? .always : .never)
            let session = try await client.prepareAuthorization()
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                throw RigFailure("expected a redirect to the app")
            }
            let credential = try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
            #expect(credential.tokenType == "DPoP")
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.tokenType == "DPoP")
            let claims = try await client.userInfo(for: refreshed)
            #expect(claims["sub"] == .string("9b1f7c2e-alice"))
            // An API call through the helper: the userinfo endpoint stands for the app's API.
            let endpoint = try #require(URL(string: emulator.issuer + "/userinfo"))
            let response = try await client.send(HTTPRequest(method: .get, url: endpoint), authorizedBy: refreshed)
            #expect(response.status == 200)
        }
    }

    @Test("without a DPoP key nothing is retried: a Bearer client never meets the nonce")
    func bearerUntouched() async throws {
        try await EmulatorHarness.withEmulator(configuration: Self.noncing) { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                throw RigFailure("expected a redirect to the app")
            }
            let credential = try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
            #expect(credential.tokenType == "Bearer")
            #expect(try await client.userInfo(for: credential)["sub"] == .string("9b1f7c2e-alice"))
        }
    }
}
