import Crypto
import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

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
        #expect(claims["exp"] == .number(1_800_000_060), "exp is iat + 60 s (Singpass refuses a proof without exp, and allows at most 2 minutes)")
        #expect(try Self.signerThumbprint(proof) == key.thumbprint)
    }

    /// The RFC 7638 thumbprint of the key in `proof`'s header, after checking that the proof's ES256 signature
    /// verifies with it; nil when it does not. The verifier's own rules (RFC 9449 §4.3) are the tools'
    /// `DPoPProof`, tested with its package.
    static func signerThumbprint(_ proof: String) throws -> String? {
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, case .object(let jwk)? = try decode(parts[0])["jwk"],
            case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"]
        else { return nil }
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: try #require(Base64URL.decode(x)) + (try #require(Base64URL.decode(y))))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64URL.decode(parts[2])))
        guard publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)) else { return nil }
        return DPoPKey.thumbprint(of: .object(jwk))
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
        #expect(try DPoPKey(privateKeyPEM: try #require(key.privateKeyPEM)).thumbprint == key.thumbprint)
        #expect(DPoPKey().thumbprint != key.thumbprint)
        #expect(key.thumbprint.count == 43)
        #expect(DPoPKey.thumbprint(of: .object(["kty": .string("RSA"), "n": .string("x"), "e": .string("AQAB")])) == nil)
        #expect("\(key)".contains(key.thumbprint) && !"\(key)".contains("PRIVATE"))
        // dump and debuggers walk a mirror: it shows the thumbprint, never the key's storage.
        var dumped = ""
        dump(key, to: &dumped)
        #expect(dumped.contains(key.thumbprint) && !dumped.lowercased().contains("privatekey") && !dumped.contains("backing"))
        expectCode(.invalidConfiguration) { try DPoPKey(privateKeyPEM: "not a key") }
    }

    @Test("a sign-in's DPoP key goes in dpop_jkt and proofs, and a Bearer token in return is refused")
    func unboundTokenRefused() async throws {
        let key = DPoPKey()
        let configuration = ClientConfiguration(clientID: "c", redirectURI: try #require(URL(string: "com.example.app:/cb")), dpop: .perSignIn)
        let metadata = ProviderMetadata(
            issuer: "https://id.example", authorizationEndpoint: try #require(URL(string: "https://id.example/authorize")),
            tokenEndpoint: try #require(URL(string: "https://id.example/token")), jwksURI: try #require(URL(string: "https://id.example/jwks"))
        )
        let parameters = try AuthorizationRequestBuilder(configuration: configuration, metadata: metadata)
            .parameters(state: "s", nonce: "n", pkce: PKCE(entropy: SystemEntropy()), dpopKey: key, options: AuthorizationOptions())
        #expect(parameters.contains { $0 == ("dpop_jkt", key.thumbprint) })
        let transport = StubTransport { _ in
            HTTPResponse(status: 200, headers: ["content-type": "application/json"], body: Data(#"{"access_token":"a","token_type":"Bearer"}"#.utf8))
        }
        let tokens = TokenClient(
            configuration: configuration, metadata: metadata, transport: transport, clock: SystemClock(), entropy: SystemEntropy(),
            logger: .init(label: "test"))
        await expectCode(.invalidTokenResponse) { try await tokens.refresh(refreshToken: "r", dpop: key) }
        let sent = try #require(transport.requests.first)
        #expect(sent.headers["DPoP"]?.split(separator: ".").count == 3)
    }

    @Test("with DPoPPolicy.perSignIn each prepared sign-in gets a new key, named by dpop_jkt; the key survives a journal round trip")
    func keyPerSignIn() async throws {
        let metadata = ProviderMetadata(
            issuer: "https://id.example", authorizationEndpoint: try #require(URL(string: "https://id.example/authorize")),
            tokenEndpoint: try #require(URL(string: "https://id.example/token")), jwksURI: try #require(URL(string: "https://id.example/jwks"))
        )
        let redirect = try #require(URL(string: "com.example.app:/cb"))
        let bound = OIDCClient(
            configuration: ClientConfiguration(clientID: "c", redirectURI: redirect, dpop: .perSignIn), provider: .static(metadata))
        let first = try await bound.prepareAuthorization()
        let second = try await bound.prepareAuthorization()
        let firstKey = try #require(first.dpopKey)
        #expect(firstKey != (try #require(second.dpopKey)))
        #expect(first.authorizationURL.absoluteString.contains("dpop_jkt=\(firstKey.thumbprint)"))
        let restored = try JSONDecoder().decode(AuthorizationSession.self, from: try JSONEncoder().encode(first))
        #expect(restored == first && restored.dpopKey == firstKey)
        #expect(!"\(first)".contains("BEGIN"), "the description shows no key")
        let unbound = OIDCClient(configuration: ClientConfiguration(clientID: "c", redirectURI: redirect), provider: .static(metadata))
        let plain = try await unbound.prepareAuthorization()
        #expect(plain.dpopKey == nil && !plain.authorizationURL.absoluteString.contains("dpop_jkt"))
        // A journal written before sessions carried keys still reads.
        var object = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(plain)) as? [String: Any])
        object["dpopKey"] = nil
        #expect(try JSONDecoder().decode(AuthorizationSession.self, from: try JSONSerialization.data(withJSONObject: object)).dpopKey == nil)
    }
}
