import Crypto
import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting

/// The core's DPoP key and proofs (RFC 9449), without a server; the emulator's singpass tests verify
/// the proofs end to end.
@Suite("DPoP")
struct DPoPTests {
    static func decode(_ part: Substring) throws -> [String: JSONValue] {
        guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: try #require(Base64URL.decode(part))) else { return [:] }
        return object
    }

    @Test("a proof names the request without its query, binds the access token, carries the public key only, and verifies")
    func proofShape() throws {
        let key = DPoPKey()
        let url = try #require(URL(string: "https://id.example/userinfo?x=1#f"))
        let proof = try key.proof(
            method: "GET", url: url, accessToken: "at-1", nonce: "n-1", now: Date(timeIntervalSince1970: 1_800_000_000), jti: "j-1")
        let parts = proof.split(separator: ".")
        #expect(parts.count == 3)
        let header = try Self.decode(parts[0])
        let claims = try Self.decode(parts[1])
        #expect(header["typ"] == .string("dpop+jwt") && header["alg"] == .string("ES256"))
        guard case .object(let jwk)? = header["jwk"] else {
            Issue.record("the header carries the public JWK")
            return
        }
        #expect(jwk["d"] == nil)
        #expect(claims["htu"] == .string("https://id.example/userinfo") && claims["htm"] == .string("GET"))
        #expect(claims["ath"] == .string(Base64URL.encode(SHA256.hash(data: Data("at-1".utf8)))))
        #expect(claims["nonce"] == .string("n-1") && claims["jti"] == .string("j-1") && claims["iat"] == .number(1_800_000_000))
        // The signature verifies with the key in the header.
        guard case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"] else { return }
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: try #require(Base64URL.decode(x)) + (try #require(Base64URL.decode(y))))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        #expect(DPoPKey.thumbprint(of: .object(jwk)) == key.thumbprint)
    }

    @Test(
        "the thumbprint of RFC 9449's example key (Figure 2) is the jkt RFC 9449 publishes for it (Figure 9), in any member order and with extra members"
    )
    func publishedThumbprint() {
        let members: [String: JSONValue] = [
            "kty": .string("EC"), "crv": .string("P-256"),
            "x": .string("l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs"), "y": .string("9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA"),
        ]
        #expect(DPoPKey.thumbprint(of: .object(members)) == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        var extended = members
        extended["kid"] = .string("k1")
        extended["use"] = .string("sig")
        #expect(
            DPoPKey.thumbprint(of: .object(extended)) == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I",
            "only the required members count (RFC 7638 §3.2)")
    }

    @Test("the thumbprint is RFC 7638's: stable across a PEM round trip, different per key, nil for non-P-256 keys")
    func thumbprint() throws {
        let key = DPoPKey()
        #expect(try DPoPKey(privateKeyPEM: key.privateKeyPEM).thumbprint == key.thumbprint)
        #expect(DPoPKey().thumbprint != key.thumbprint)
        #expect(key.thumbprint.count == 43)
        #expect(DPoPKey.thumbprint(of: .object(["kty": .string("RSA"), "n": .string("x"), "e": .string("AQAB")])) == nil)
        #expect("\(key)".contains(key.thumbprint) && !"\(key)".contains("PRIVATE"))
        expectCode(.invalidConfiguration) { try DPoPKey(privateKeyPEM: "not a key") }
    }

    @Test("a client with a DPoP key sends dpop_jkt and proofs, and refuses a Bearer token in return")
    func unboundTokenRefused() async throws {
        let key = DPoPKey()
        let configuration = ClientConfiguration(clientID: "c", redirectURI: try #require(URL(string: "com.example.app:/cb")), dpop: key)
        let metadata = ProviderMetadata(
            issuer: "https://id.example", authorizationEndpoint: try #require(URL(string: "https://id.example/authorize")),
            tokenEndpoint: try #require(URL(string: "https://id.example/token")), jwksURI: try #require(URL(string: "https://id.example/jwks"))
        )
        let parameters = try AuthorizationRequestBuilder(configuration: configuration, metadata: metadata)
            .parameters(state: "s", nonce: "n", pkce: PKCE(entropy: SystemEntropy()), options: AuthorizationOptions())
        #expect(parameters.contains { $0 == ("dpop_jkt", key.thumbprint) })
        let transport = StubTransport { _ in
            HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: Data(#"{"access_token":"a","token_type":"Bearer"}"#.utf8))
        }
        let tokens = TokenClient(
            configuration: configuration, metadata: metadata, transport: transport, clock: SystemClock(), entropy: SystemEntropy(),
            logger: .init(label: "test"))
        await expectCode(.invalidTokenResponse) { try await tokens.refresh(refreshToken: "r") }
        let sent = try #require(transport.requests.first)
        #expect(sent.headers["DPoP"]?.split(separator: ".").count == 3)
    }
}
