import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// The verifier's side of DPoP (RFC 9449 §4.3) that the emulator, as the provider, and the companion, as a
/// hand-off's resource server, share; the app's proofs are the core's `DPoPTests`.
@Suite("DPoP proofs, verified")
struct DPoPProofTests {
    static func verify(_ proof: String, requiresExpiry: Bool = false, now: Date) -> String? {
        switch DPoPProof.verify(proof, method: "POST", url: "https://id.example/token", accessToken: nil, now: now, requiresExpiry: requiresExpiry) {
        case .success: nil
        case .failure(let refusal): refusal.description
        }
    }

    /// A proof with `claims`, signed by a fresh key, as another client might send it.
    static func proof(claims: [String: JSONValue]) throws -> String {
        let key = P256.Signing.PrivateKey()
        let header: JSONValue = .object(["typ": .string("dpop+jwt"), "alg": .string("ES256"), "jwk": .object(PublicJWK.p256(key.publicKey))])
        let input = Base64URL.encode(Data(header.description.utf8)) + "." + Base64URL.encode(Data(JSONValue.object(claims).description.utf8))
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    @Test("the verifier takes exp when present (after iat, at most 120 s, not past) and requires it only when told to (Singpass)")
    func expiry() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        func claims(iat: Double = 1_800_000_000, exp: Double?) -> [String: JSONValue] {
            var claims: [String: JSONValue] = [
                "jti": .string("j"), "htm": .string("POST"), "htu": .string("https://id.example/token"), "iat": .number(iat),
            ]
            claims["exp"] = exp.map(JSONValue.number)
            return claims
        }
        #expect(Self.verify(try Self.proof(claims: claims(exp: nil)), now: now) == nil, "RFC 9449 sets no exp")
        #expect(Self.verify(try Self.proof(claims: claims(exp: nil)), requiresExpiry: true, now: now)?.contains("has no exp") == true)
        #expect(Self.verify(try Self.proof(claims: claims(exp: 1_800_000_120)), requiresExpiry: true, now: now) == nil)
        for exp in [1_800_000_121, 1_800_000_000, 1_799_999_999] as [Double] {
            #expect(Self.verify(try Self.proof(claims: claims(exp: exp)), now: now)?.contains("exp") == true, "exp \(exp)")
        }
        // Past (beyond 5 s of skew) although iat alone is still within the 60 s window: refused for its exp.
        let past = try Self.proof(claims: claims(exp: 1_800_000_001))
        #expect(Self.verify(past, now: now.addingTimeInterval(6)) == nil)
        #expect(Self.verify(past, now: now.addingTimeInterval(10))?.contains("has passed") == true)
        let core = try DPoPKey().proof(method: "POST", url: try #require(URL(string: "https://id.example/token")), now: now, jti: "c")
        #expect(Self.verify(core, requiresExpiry: true, now: now) == nil)
    }

    @Test("a proof the app's key makes verifies, names its key's thumbprint, and is refused for another method, URL or access token")
    func appProofVerifies() throws {
        let key = DPoPKey()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let url = try #require(URL(string: "https://id.example/userinfo?x=1"))
        let proof = try key.proof(method: "GET", url: url, accessToken: "at-1", now: now, jti: "j-1")
        guard case .success(let verified) = DPoPProof.verify(proof, method: "GET", url: "https://id.example/userinfo", accessToken: "at-1", now: now)
        else {
            Issue.record("the app's proof does not verify")
            return
        }
        #expect(verified.thumbprint == key.thumbprint && verified.jti == "j-1")
        for (method, target, token) in [
            ("POST", "https://id.example/userinfo", "at-1"), ("GET", "https://id.example/other", "at-1"),
            ("GET", "https://id.example/userinfo", "at-2"),
        ] {
            guard case .failure = DPoPProof.verify(proof, method: method, url: target, accessToken: token, now: now) else {
                Issue.record("a proof for GET /userinfo with at-1 verified for \(method) \(target) with \(token)")
                continue
            }
        }
    }
}
