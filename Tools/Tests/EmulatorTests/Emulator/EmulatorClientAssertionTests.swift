import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// `private_key_jwt` at the emulator's PAR and token endpoints, with the core's assertion signer.
@Suite("Emulator: private_key_jwt")
struct EmulatorClientAssertionTests {
    static func withEmulator(_ body: (Emulator, EmulatorHarness.Keys) async throws -> Void) async throws {
        let keys = try await EmulatorHarness.clientKeys()
        var configuration = EmulatorConfiguration.defaults
        configuration.clients.append(
            .init(clientID: "fapi", authentication: .privateKeyJWT, redirectURIs: EmulatorConfiguration.defaultRedirectURIs, jwks: keys.jwks))
        try await EmulatorHarness.withEmulator(configuration: configuration) { try await body($0, keys) }
    }

    @Test("PAR and token requests authenticated by signed assertions; each sign-in uses fresh jtis")
    func signIn() async throws {
        try await Self.withEmulator { emulator, keys in
            let client = EmulatorHarness.client(emulator, clientID: "fapi", authentication: .privateKeyJWT(keys.signer), par: .always)
            for _ in 0..<2 {
                let credential = try await EmulatorFaultTests.signIn(client)
                #expect(credential.subject == "9b1f7c2e-alice")
            }
        }
    }

    /// POSTs to the token endpoint with `assertion` and a code that does not exist: authentication is
    /// checked first, so a 400 invalid_grant means the assertion was accepted.
    static func post(_ emulator: Emulator, assertion: String, clientID: String? = nil) async throws -> (status: Int, body: String) {
        var fields = [
            ("grant_type", "authorization_code"), ("code", "no-such-code"), ("redirect_uri", "com.example.app:/oauth/callback"),
            ("code_verifier", String(repeating: "v", count: 43)),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("client_assertion", assertion),
        ]
        if let clientID { fields.append(("client_id", clientID)) }
        let response = try await URLSessionTransport().send(.form(try #require(URL(string: emulator.issuer + "/token")), fields))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test("a replayed assertion (same jti) is invalid_client")
    func replay() async throws {
        try await Self.withEmulator { emulator, keys in
            let assertion = try await keys.signer.assertion(
                clientID: "fapi", audience: emulator.issuer + "/token", now: Date(), entropy: SystemEntropy())
            let first = try await Self.post(emulator, assertion: assertion)
            #expect(first.status == 400 && first.body.contains("invalid_grant"))
            let second = try await Self.post(emulator, assertion: assertion)
            #expect(second.status == 401 && second.body.contains("jti replay"))
        }
    }

    @Test("assertions signed by another key, for another audience, expired, or for another client_id are invalid_client")
    func refused() async throws {
        try await Self.withEmulator { emulator, keys in
            let token = emulator.issuer + "/token"
            let stranger = try await EmulatorHarness.clientKeys()  // same kid, another key
            let cases: [(String, String, String?)] = [
                (
                    try await stranger.signer.assertion(clientID: "fapi", audience: token, now: Date(), entropy: SystemEntropy()),
                    "does not verify", nil
                ),
                (
                    try await keys.signer.assertion(
                        clientID: "fapi", audience: "https://elsewhere.example", now: Date(), entropy: SystemEntropy()), "another audience", nil
                ),
                (
                    try await keys.signer.assertion(
                        clientID: "fapi", audience: token, now: Date(timeIntervalSinceNow: -600), entropy: SystemEntropy()), "expired", nil
                ),
                (
                    try await keys.signer.assertion(clientID: "fapi", audience: token, now: Date(), entropy: SystemEntropy()),
                    "iss is the client_id", "native-rs"
                ),
                ("not.a.jwt", "iss is the client_id", nil),
            ]
            for (assertion, reason, clientID) in cases {
                let response = try await Self.post(emulator, assertion: assertion, clientID: clientID)
                #expect(response.status == 401, "\(reason)")
                #expect(response.body.contains("invalid_client") && response.body.contains(reason), "\(response.body)")
            }
        }
    }
}
