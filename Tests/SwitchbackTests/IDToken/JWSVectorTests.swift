import Crypto
import Foundation
import JWTKit
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// The published JWS examples of RFC 7515 Appendix A and RFC 7520 §4, verified through the same
/// key handling the ID-token validator uses.
@Suite("JWS test vectors")
struct JWSVectorTests {
    static let asymmetric = [
        ("jws-vectors.json", "RFC7515-A.2 RS256"),
        ("jws-vectors.json", "RFC7515-A.3 ES256"),
        ("jws-vectors.json", "RFC7515-A.4 ES512"),
        ("rfc7520-vectors.json", "RFC7520-4.1 RS256"),
        ("rfc7520-vectors.json", "RFC7520-4.3 ES512"),
    ]
    static let symmetric = [
        ("jws-vectors.json", "RFC7515-A.1 HS256"),
        ("rfc7520-vectors.json", "RFC7520-4.4 HS256"),
    ]

    private func vector(_ file: String, _ name: String) throws -> Fixtures.JWSVector {
        try #require(try Fixtures.jwsVectors(file)[name])
    }

    private func validator(for vector: Fixtures.JWSVector, allowing algorithms: Set<String>) throws -> IDTokenValidator {
        IDTokenValidator(
            issuer: "joe", clientID: "unused", allowedAlgorithms: algorithms,
            keys: try JWKSCache(jwksJSON: vector.jwks, logger: Logger(label: "test")), clock: ManualClock()
        )
    }

    @Test("asymmetric vector verifies and yields its payload", arguments: asymmetric)
    func asymmetricVerifies(file: String, name: String) async throws {
        let vector = try vector(file, name)
        let payload = try await validator(for: vector, allowing: [vector.alg])
            .verifiedPayload(of: vector.jws, allowed: [vector.alg], malformed: .idTokenMalformed)
        #expect(payload == vector.payload)
    }

    @Test("asymmetric vector fails once one signature character changes", arguments: asymmetric)
    func asymmetricTampered(file: String, name: String) async throws {
        let vector = try vector(file, name)
        let tampered = vector.withChangedSignature
        #expect(tampered != vector.jws)
        await expectCode(.signatureInvalid) {
            try await validator(for: vector, allowing: [vector.alg])
                .verifiedPayload(of: tampered, allowed: [vector.alg], malformed: .idTokenMalformed)
        }
    }

    @Test("HMAC vector verifies with its shared key, and fails once one signature character changes", arguments: symmetric)
    func hmacVerifiesWithSharedKey(file: String, name: String) async throws {
        let vector = try vector(file, name)
        guard case .object(let jwk) = vector.jwkPublic, case .string(let k)? = jwk["k"] else {
            Issue.record("the vector has no symmetric key")
            return
        }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: try #require(Base64URL.decode(k))), digestAlgorithm: .sha256, kid: "vector")
        let hmac = try await keys.getKey(for: "vector", alg: "HS256")
        for (token, expected) in [(vector.jws, true), (vector.withChangedSignature, false)] {
            let jws = try CompactJWS(token, malformed: .idTokenMalformed)
            #expect(try hmac.verify(jws.signature, signs: jws.signingInput) == expected)
        }
    }

    @Test("HMAC vector is refused even when its key is in the JWKS and HS256 is asked for", arguments: symmetric)
    func hmacRefusedByValidator(file: String, name: String) async throws {
        let vector = try vector(file, name)
        let validator = try validator(for: vector, allowing: ["HS256", "RS256"])
        #expect(validator.allowedAlgorithms == ["RS256"])
        await expectCode(.unsupportedAlgorithm) {
            try await validator.verifiedPayload(of: vector.jws, allowed: ["HS256"], malformed: .idTokenMalformed)
        }
    }
}
