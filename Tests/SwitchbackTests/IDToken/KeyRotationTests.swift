import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// Key rotation and the JWKS refetch rate limit (conformance.md, "Key rotation").
@Suite("JWKS cache and key rotation")
struct KeyRotationTests {
    @Test("the OP rotates its key after the first login: unknown kid → one refetch, then the token verifies")
    func rotationAfterFirstLogin() async throws {
        let provider = try await StubProvider()
        let validator = provider.validator()
        _ = try await validator.validate(try await provider.signer.sign(provider.validClaims()), expectations: .init(nonce: nil))
        #expect(provider.jwksFetches == 1)

        let rotated = try await TestTokenSigner(.rs256, keyID: "key-2")
        provider.jwks = TestTokenSigner.jwks([rotated])
        let token = try await validator.validate(try await rotated.sign(provider.validClaims()), expectations: .init(nonce: nil))
        #expect(token.keyID == "key-2")
        #expect(provider.jwksFetches == 2)
    }

    @Test("the OP rotates just before signing a kid-less token: no cached key verifies → one refetch, then it verifies")
    func rotationJustBeforeSigningWithoutKid() async throws {
        let provider = try await StubProvider()
        let validator = provider.validator()
        _ = try await validator.validate(try await provider.signer.sign(provider.validClaims(), includeKeyID: false), expectations: .init(nonce: nil))

        let rotated = try await TestTokenSigner(.rs256, keyID: "key-2")
        provider.jwks = TestTokenSigner.jwks([rotated])
        let token = try await validator.validate(try await rotated.sign(provider.validClaims(), includeKeyID: false), expectations: .init(nonce: nil))
        #expect(token.claims.sub == "user-1")
        #expect(provider.jwksFetches == 2)
    }

    @Test("the OP rotates just before signing: a cold cache fetches once and verifies with the new key")
    func rotationBeforeFirstUse() async throws {
        let provider = try await StubProvider()
        let rotated = try await TestTokenSigner(.es256, keyID: "ec-2")
        provider.jwks = TestTokenSigner.jwks([provider.signer, rotated])
        let token = try await provider.validator().validate(try await rotated.sign(provider.validClaims()), expectations: .init(nonce: nil))
        #expect(token.algorithm == "ES256")
        #expect(provider.jwksFetches == 1)
    }

    @Test("tokens with random kids cannot force a JWKS fetch per request")
    func refetchIsRateLimited() async throws {
        let provider = try await StubProvider()
        let validator = provider.validator(refetchInterval: 60)
        _ = try await validator.validate(try await provider.signer.sign(provider.validClaims()), expectations: .init(nonce: nil))
        for index in 0..<25 {
            let header: [String: JSONValue] = ["alg": .string("RS256"), "kid": .string("random-\(index)"), "typ": .string("JWT")]
            let token = TestTokenSigner.compact(header: header, claims: provider.validClaims(), signature: Array(repeating: 7, count: 256))
            await expectCode(.unknownSigningKey) { try await validator.validate(token, expectations: .init(nonce: nil)) }
            provider.clock.advance(by: 1)
        }
        // 25 s of attack: the first unknown kid refetched (it might have been a rotation), the other 24
        // fell within the 60 s interval after that refetch.
        #expect(provider.jwksFetches == 2)
        provider.clock.advance(by: 35)
        let token = TestTokenSigner.compact(
            header: ["alg": .string("RS256"), "kid": .string("late")], claims: provider.validClaims(), signature: [1])
        await expectCode(.unknownSigningKey) { try await validator.validate(token, expectations: .init(nonce: nil)) }
        #expect(provider.jwksFetches == 3)
        await expectCode(.unknownSigningKey) { try await validator.validate(token, expectations: .init(nonce: nil)) }
        #expect(provider.jwksFetches == 3)
    }

    @Test(
        "a key already in use: a forged signature naming it is refused at once (no refetch, even with the interval over), a kid-less forgery refetches once, and the key still verifies"
    )
    func knownKeyForgeries() async throws {
        let provider = try await StubProvider()
        let validator = provider.validator(refetchInterval: 60)
        _ = try await validator.validate(try await provider.signer.sign(provider.validClaims()), expectations: .init(nonce: nil))
        _ = try await validator.validate(try await provider.signer.sign(provider.validClaims(), includeKeyID: false), expectations: .init(nonce: nil))
        #expect(provider.jwksFetches == 1)
        let genuine = try await provider.signer.sign(provider.validClaims())
        let parts = genuine.split(separator: ".")
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[signature.count - 1] ^= 1
        let named = "\(parts[0]).\(parts[1]).\(Base64URL.encode(signature))"
        for _ in 0..<3 {
            provider.clock.advance(by: 61)
            await expectCode(.signatureInvalid) { try await validator.validate(named, expectations: .init(nonce: nil)) }
        }
        #expect(provider.jwksFetches == 1, "a token naming a known key never refetches")
        let unnamed = try await provider.signer.sign(provider.validClaims(), includeKeyID: false).split(separator: ".")
        let forged = "\(unnamed[0]).\(unnamed[1]).\(Base64URL.encode(signature))"
        await expectCode(.signatureInvalid) { try await validator.validate(forged, expectations: .init(nonce: nil)) }
        #expect(provider.jwksFetches == 2, "no key verified a token without kid: the keys may have rotated")
        await expectCode(.signatureInvalid) { try await validator.validate(forged, expectations: .init(nonce: nil)) }
        #expect(provider.jwksFetches == 2, "within the interval")
        #expect(try await validator.validate(genuine, expectations: .init(nonce: nil)).keyID == "key-1")
    }

    @Test("concurrent validations naming an unknown kid share one refetch")
    func concurrentRefetchIsCoalesced() async throws {
        let provider = try await StubProvider()
        let validator = provider.validator()
        _ = try await validator.validate(try await provider.signer.sign(provider.validClaims()), expectations: .init(nonce: nil))
        let rotated = try await TestTokenSigner(.rs256, keyID: "key-2")
        provider.jwks = TestTokenSigner.jwks([rotated])
        let token = try await rotated.sign(provider.validClaims())
        let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { try await validator.validate(token, expectations: .init(nonce: nil)).keyID == "key-2" }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(successes == 20)
        #expect(provider.jwksFetches == 2)
    }

    @Test("a JWKS endpoint that fails surfaces jwksFetchFailed, and a broken document too")
    func fetchFailures() async throws {
        let provider = try await StubProvider()
        provider.jwks = "<html>maintenance</html>"
        let token = try await provider.signer.sign(provider.validClaims())
        await expectCode(.jwksFetchFailed) { try await provider.validator().validate(token, expectations: .init(nonce: nil)) }
    }

    @Test("a fixed key set (from a file) is never refetched")
    func fixedKeySetIsNotRefetched() async throws {
        let signer = try await TestTokenSigner(.es256, keyID: "ec-1")
        let keys = try JWKSCache(jwksJSON: Data(TestTokenSigner.jwks([signer]).utf8), logger: .init(label: "test"))
        let other = try await TestTokenSigner(.es256, keyID: "ec-2")
        let clock = ManualClock()
        let validator = IDTokenValidator(
            issuer: StubProvider.issuer, clientID: StubProvider.clientID, allowedAlgorithms: ["ES256"], keys: keys, clock: clock)
        let claims: [String: JSONValue] = [
            "iss": .string(StubProvider.issuer), "aud": .string(StubProvider.clientID), "sub": .string("s"),
            "iat": .number(clock.now().timeIntervalSince1970), "exp": .number(clock.now().timeIntervalSince1970 + 60),
        ]
        _ = try await validator.validate(try await signer.sign(claims), expectations: .init(nonce: nil))
        await expectCode(.unknownSigningKey) { try await validator.validate(try await other.sign(claims), expectations: .init(nonce: nil)) }
        #expect(await keys.fetchCount == 0)
    }
}
