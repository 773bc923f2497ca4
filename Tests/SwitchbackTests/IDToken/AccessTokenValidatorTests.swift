import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting

/// RFC 9068 JWT access tokens, as the companion's hand-off checks them in `jwt` mode.
@Suite("AccessTokenValidator")
struct AccessTokenValidatorTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func claims(_ changes: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": .string("https://id.example.com"), "aud": .string("https://api.example.com"), "sub": .string("alice"),
            "client_id": .string("native-rs"), "exp": .number(now.timeIntervalSince1970 + 300), "iat": .number(now.timeIntervalSince1970),
        ]
        claims.merge(changes) { $1 }
        return claims
    }

    @Test("a signed at+jwt for this audience passes; each broken property is its own typed error")
    func validation() async throws {
        let signer = try await TestTokenSigner(.es256, keyID: "k1")
        let other = try await TestTokenSigner(.es256, keyID: "k1")
        let keys = try JWKSCache(jwksJSON: Data(TestTokenSigner.jwks([signer]).utf8), clock: ManualClock(Self.now), logger: Logger(label: "test"))
        let validator = AccessTokenValidator(
            issuer: "https://id.example.com", audience: "https://api.example.com", keys: keys, clock: ManualClock(Self.now))

        let good = try await validator.validate(try await signer.sign(Self.claims(), type: "at+jwt"))
        #expect(good.sub == "alice")
        #expect(good.clientID == "native-rs")

        let cases: [(String, SwitchbackError.Code)] = [
            (try await signer.sign(Self.claims(), type: "JWT"), .idTokenMalformed),
            (try await other.sign(Self.claims(), type: "at+jwt"), .signatureInvalid),
            (try await signer.sign(Self.claims(["iss": .string("https://evil.example")]), type: "at+jwt"), .idTokenIssuerInvalid),
            (try await signer.sign(Self.claims(["aud": .string("https://other.example.com")]), type: "at+jwt"), .audienceInvalid),
            (try await signer.sign(Self.claims(["exp": .number(Self.now.timeIntervalSince1970 - 120)]), type: "at+jwt"), .tokenExpired),
            ("not.a.token", .idTokenMalformed),
        ]
        for (token, code) in cases {
            await #expect(throws: SwitchbackError.self) { _ = try await validator.validate(token) }
            do {
                _ = try await validator.validate(token)
            } catch let error as SwitchbackError {
                #expect(error.code == code, "\(error)")
            }
        }
    }
}
