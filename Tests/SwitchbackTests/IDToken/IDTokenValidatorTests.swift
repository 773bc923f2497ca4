import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// The OpenID relying-party conformance cases for ID tokens (conformance.md), one named test each.
@Suite("ID token validation")
struct IDTokenValidatorTests {
    private func validate(
        _ provider: StubProvider, _ claims: [String: JSONValue], expectations: IDTokenValidator.Expectations = .init(nonce: "n-0S6_WzA2Mj"),
        acr: Set<String> = []
    ) async throws -> IDToken {
        let token = try await provider.signer.sign(claims)
        return try await provider.validator(acr: acr).validate(token, expectations: expectations)
    }

    // MARK: Must accept

    @Test("accepts an ID token signed RS256")
    func acceptsRS256() async throws {
        let provider = try await StubProvider()
        let token = try await validate(provider, provider.validClaims())
        #expect(token.algorithm == "RS256")
        #expect(token.claims.sub == "user-1")
        #expect(token.keyID == "key-1")
    }

    @Test("accepts an ID token signed ES256")
    func acceptsES256() async throws {
        let provider = try await StubProvider(signer: try await TestTokenSigner(.es256, keyID: "ec-1"))
        let token = try await validate(provider, provider.validClaims())
        #expect(token.algorithm == "ES256")
        #expect(token.keyID == "ec-1")
    }

    @Test("kid absent, single key in the JWKS: that key is used")
    func kidAbsentSingleKey() async throws {
        let provider = try await StubProvider()
        let token = try await provider.signer.sign(provider.validClaims(), includeKeyID: false)
        let validated = try await provider.validator().validate(token, expectations: .init(nonce: "n-0S6_WzA2Mj"))
        #expect(validated.keyID == nil)
    }

    @Test("kid absent, several keys in the JWKS: each key of the right type is tried (documented choice)")
    func kidAbsentSeveralKeys() async throws {
        let provider = try await StubProvider()
        let other = try await TestTokenSigner(.rs256, keyID: "key-0")
        let ec = try await TestTokenSigner(.es256, keyID: "ec-0")
        provider.jwks = TestTokenSigner.jwks([other, ec, provider.signer])
        let token = try await provider.signer.sign(provider.validClaims(), includeKeyID: false)
        let validated = try await provider.validator().validate(token, expectations: .init(nonce: "n-0S6_WzA2Mj"))
        #expect(validated.claims.sub == "user-1")
    }

    @Test("JWKS with unparseable and unknown-type keys: they are skipped, the good key verifies")
    func skipsUnparseableKeys() async throws {
        let provider = try await StubProvider()
        provider.jwks = TestTokenSigner.jwks(
            [provider.signer],
            extraKeys: [
                ["kty": .string("RSA"), "kid": .string("broken"), "n": .string("%%%not-base64%%%"), "e": .string("AQAB")],
                ["kty": .string("XYZ"), "kid": .string("unknown-type"), "foo": .string("bar")],
                ["kty": .string("oct"), "kid": .string("symmetric"), "k": .string("c2VjcmV0")],
                ["kid": .string("no-kty")],
            ])
        let token = try await validate(provider, provider.validClaims())
        #expect(token.claims.sub == "user-1")
    }

    @Test("a key published for encryption (use=enc) is not used to verify")
    func skipsEncryptionKeys() async throws {
        let provider = try await StubProvider()
        var encryptionKey = provider.signer.publicJWK
        encryptionKey["use"] = .string("enc")
        provider.jwks = JSONValue.object(["keys": .array([.object(encryptionKey)])]).description
        await expectCode(.unknownSigningKey) { try await validate(provider, provider.validClaims()) }
    }

    @Test("clock skew: a token that expired less than the allowed skew ago is accepted")
    func acceptsWithinSkew() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        let now = provider.clock.now().timeIntervalSince1970
        claims["exp"] = .number(now - 30)
        claims["iat"] = .number(now + 30)
        let token = try await validate(provider, claims)
        #expect(token.claims.exp == now - 30, "the expired-within-skew token is the one accepted")
        #expect(token.claims.sub == "user-1")
        // Past the skew (60 s) the same token is refused.
        claims["exp"] = .number(now - 61)
        await expectCode(.tokenExpired) { _ = try await validate(provider, claims) }
    }

    @Test("every claim, including ones the core does not model, is available")
    func exposesAllClaims() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["email"] = .string("alice@example.com")
        let token = try await validate(provider, claims)
        #expect(token.allClaims["email"] == .string("alice@example.com"))
    }

    // MARK: Must reject: claims

    @Test("rejects a wrong iss")
    func rejectsWrongIssuer() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["iss"] = .string("https://id.example.test.evil.example")
        await expectCode(.idTokenIssuerInvalid) { try await validate(provider, claims) }
    }

    @Test("rejects a wrong aud")
    func rejectsWrongAudience() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["aud"] = .string("another-client")
        await expectCode(.audienceInvalid) { try await validate(provider, claims) }
    }

    @Test("rejects a missing aud")
    func rejectsMissingAudience() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["aud"] = nil
        await expectCode(.audienceInvalid) { try await validate(provider, claims) }
    }

    @Test("rejects several audiences without azp")
    func rejectsSeveralAudiencesWithoutAzp() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["aud"] = .array([.string(StubProvider.clientID), .string("api")])
        await expectCode(.authorizedPartyInvalid) { try await validate(provider, claims) }
    }

    @Test("accepts several audiences when azp names this client")
    func acceptsSeveralAudiencesWithAzp() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["aud"] = .array([.string(StubProvider.clientID), .string("api")])
        claims["azp"] = .string(StubProvider.clientID)
        let token = try await validate(provider, claims)
        #expect(token.claims.aud == [StubProvider.clientID, "api"])
    }

    @Test("rejects an azp naming another client")
    func rejectsForeignAzp() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["azp"] = .string("another-client")
        await expectCode(.authorizedPartyInvalid) { try await validate(provider, claims) }
    }

    @Test("rejects a missing sub")
    func rejectsMissingSubject() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["sub"] = nil
        await expectCode(.subjectMissing) { try await validate(provider, claims) }
    }

    @Test("rejects a missing iat")
    func rejectsMissingIssuedAt() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["iat"] = nil
        await expectCode(.issuedAtInvalid) { try await validate(provider, claims) }
    }

    @Test("rejects an iat in the future beyond the skew")
    func rejectsFutureIssuedAt() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["iat"] = .number(provider.clock.now().timeIntervalSince1970 + 600)
        await expectCode(.issuedAtInvalid) { try await validate(provider, claims) }
    }

    @Test("rejects an expired token and one without exp")
    func rejectsExpired() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["exp"] = .number(provider.clock.now().timeIntervalSince1970 - 61)
        await expectCode(.tokenExpired) { try await validate(provider, claims) }
        claims["exp"] = nil
        await expectCode(.tokenExpired) { try await validate(provider, claims) }
    }

    @Test("rejects a token whose nbf is in the future beyond the skew")
    func rejectsNotYetValid() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["nbf"] = .number(provider.clock.now().timeIntervalSince1970 + 120)
        await expectCode(.tokenNotYetValid) { try await validate(provider, claims) }
    }

    @Test("rejects a wrong nonce and a missing one")
    func rejectsWrongNonce() async throws {
        let provider = try await StubProvider()
        await expectCode(.nonceMismatch) { try await validate(provider, provider.validClaims(nonce: "n-other")) }
        var claims = provider.validClaims()
        claims["nonce"] = nil
        await expectCode(.nonceMismatch) { try await validate(provider, claims) }
    }

    @Test("rejects claims of the wrong JSON types as malformed")
    func rejectsWrongClaimTypes() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["exp"] = .string("tomorrow")
        await expectCode(.idTokenMalformed) { try await validate(provider, claims) }
    }

    // MARK: Must reject: signatures

    @Test("rejects a bad RS256 signature")
    func rejectsBadRS256Signature() async throws {
        let provider = try await StubProvider()
        let forger = try await TestTokenSigner(.rs256, keyID: "key-1")
        let forged = try await forger.sign(provider.validClaims())
        await expectCode(.signatureInvalid) { try await provider.validator().validate(forged, expectations: .init(nonce: nil)) }
    }

    @Test("rejects a bad ES256 signature")
    func rejectsBadES256Signature() async throws {
        let provider = try await StubProvider(signer: try await TestTokenSigner(.es256, keyID: "ec-1"))
        let forger = try await TestTokenSigner(.es256, keyID: "ec-1")
        let forged = try await forger.sign(provider.validClaims())
        await expectCode(.signatureInvalid) { try await provider.validator().validate(forged, expectations: .init(nonce: nil)) }
    }

    @Test("rejects a payload changed after signing")
    func rejectsChangedPayload() async throws {
        let provider = try await StubProvider()
        let token = try await provider.signer.sign(provider.validClaims())
        var parts = token.split(separator: ".").map(String.init)
        var claims = provider.validClaims()
        claims["sub"] = .string("admin")
        parts[1] = TestTokenSigner.base64URL(Data(JSONValue.object(claims).description.utf8))
        await expectCode(.signatureInvalid) {
            try await provider.validator().validate(parts.joined(separator: "."), expectations: .init(nonce: nil))
        }
    }

    @Test("rejects HS256, including an HMAC keyed with the provider's public key (key confusion)")
    func rejectsHS256() async throws {
        let provider = try await StubProvider()
        let publicKeyBytes = Data(provider.signer.publicJWK.description.utf8)
        let confused = TestTokenSigner.hs256(
            header: ["alg": .string("HS256"), "kid": .string("key-1")], claims: provider.validClaims(), secret: publicKeyBytes
        )
        let validator = provider.validator(algorithms: ["HS256", "RS256"])
        await expectCode(.unsupportedAlgorithm) { try await validator.validate(confused, expectations: .init(nonce: nil)) }
    }

    @Test("rejects alg none (documented choice: never accepted, not even after userinfo)")
    func rejectsAlgNone() async throws {
        let provider = try await StubProvider()
        let unsigned = TestTokenSigner.compact(header: ["alg": .string("none")], claims: provider.validClaims(), signature: [])
        await expectCode(.unsupportedAlgorithm) {
            try await provider.validator(algorithms: ["none", "RS256"]).validate(unsigned, expectations: .init(nonce: nil))
        }
    }

    @Test("rejects an algorithm outside the allow-list even with a valid signature")
    func rejectsAlgorithmOutsideAllowList() async throws {
        let provider = try await StubProvider(signer: try await TestTokenSigner(.es256, keyID: "ec-1"))
        let token = try await provider.signer.sign(provider.validClaims())
        await expectCode(.unsupportedAlgorithm) {
            try await provider.validator(algorithms: ["RS256"]).validate(token, expectations: .init(nonce: nil))
        }
    }

    @Test("rejects a token whose kid names a key of another type than its alg")
    func rejectsKeyTypeMismatch() async throws {
        let provider = try await StubProvider()
        let token = TestTokenSigner.compact(
            header: ["alg": .string("ES256"), "kid": .string("key-1")], claims: provider.validClaims(), signature: Array(repeating: 1, count: 64)
        )
        await expectCode(.unknownSigningKey) { try await provider.validator().validate(token, expectations: .init(nonce: nil)) }
    }

    @Test(
        "rejects garbage as malformed",
        arguments: [
            "not-a-jwt", "a.b", "eyJhbGciOiJSUzI1NiJ9.!!!.sig",
        ])
    func rejectsMalformed(token: String) async throws {
        let provider = try await StubProvider()
        await expectCode(.idTokenMalformed) { try await provider.validator().validate(token, expectations: .init(nonce: nil)) }
    }

    @Test("an encrypted token (five parts) for a client without a decryption key fails as undecryptable, not as a signature error")
    func rejectsEncryptedWithoutKey() async throws {
        let provider = try await StubProvider()
        await expectCode(.idTokenDecryptionFailed) { try await provider.validator().validate("a.b.c.d.e", expectations: .init(nonce: nil)) }
    }

    @Test("rejects a header marking an extension critical")
    func rejectsCriticalHeader() async throws {
        let provider = try await StubProvider()
        let token = TestTokenSigner.compact(
            header: ["alg": .string("RS256"), "crit": .array([.string("exp")]), "exp": .number(1)], claims: provider.validClaims(), signature: [1]
        )
        await expectCode(.idTokenMalformed) { try await provider.validator().validate(token, expectations: .init(nonce: nil)) }
    }

    // MARK: at_hash, c_hash, auth_time, acr

    @Test("rejects a bad at_hash, and a missing one when the flow requires it")
    func rejectsBadAccessTokenHash() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["at_hash"] = .string(try #require(IDTokenValidator.leftHalfHash(of: "another-token", algorithm: "RS256")))
        await expectCode(.accessTokenHashInvalid) {
            try await validate(provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", accessToken: "at-SlAV32hkKG"))
        }
        claims["at_hash"] = nil
        await expectCode(.accessTokenHashInvalid) {
            try await validate(
                provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", accessToken: "at-SlAV32hkKG", requireAccessTokenHash: true))
        }
    }

    @Test("accepts a matching at_hash (OpenID Connect Core §3.2.2.9 example value)")
    func acceptsAccessTokenHash() async throws {
        // The spec's example: access token jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y → at_hash 77QmUPtjPfzWtF2AnpK9RQ.
        #expect(IDTokenValidator.leftHalfHash(of: "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", algorithm: "RS256") == "77QmUPtjPfzWtF2AnpK9RQ")
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["at_hash"] = .string("77QmUPtjPfzWtF2AnpK9RQ")
        let token = try await validate(
            provider, claims,
            expectations: .init(nonce: "n-0S6_WzA2Mj", accessToken: "jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", requireAccessTokenHash: true)
        )
        #expect(token.claims.atHash == "77QmUPtjPfzWtF2AnpK9RQ")
    }

    @Test("rejects a bad c_hash, and a missing one in the hybrid flow")
    func rejectsBadCodeHash() async throws {
        let provider = try await StubProvider()
        var claims = provider.validClaims()
        claims["c_hash"] = .string(try #require(IDTokenValidator.leftHalfHash(of: "other-code", algorithm: "RS256")))
        await expectCode(.codeHashInvalid) { try await validate(provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", code: "the-code")) }
        claims["c_hash"] = nil
        await expectCode(.codeHashInvalid) {
            try await validate(provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", code: "the-code", requireCodeHash: true))
        }
        claims["c_hash"] = .string(try #require(IDTokenValidator.leftHalfHash(of: "the-code", algorithm: "RS256")))
        _ = try await validate(provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", code: "the-code", requireCodeHash: true))
    }

    @Test("max_age: auth_time is required and must be recent enough")
    func maxAge() async throws {
        let provider = try await StubProvider()
        let now = provider.clock.now().timeIntervalSince1970
        var claims = provider.validClaims()
        await expectCode(.authTimeInvalid) { try await validate(provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", maxAge: 300)) }
        claims["auth_time"] = .number(now - 3600)
        await expectCode(.authTimeInvalid) { try await validate(provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", maxAge: 300)) }
        claims["auth_time"] = .number(now - 200)
        let token = try await validate(provider, claims, expectations: .init(nonce: "n-0S6_WzA2Mj", maxAge: 300))
        #expect(token.claims.authTime == now - 200)
    }

    @Test("required acr: a missing or lower assurance level is rejected, a listed one accepted")
    func requiredACR() async throws {
        let provider = try await StubProvider()
        let high: Set<String> = ["urn:eidas:loa:high", "urn:mitid:substantial"]
        var claims = provider.validClaims()
        await expectCode(.acrNotSatisfied) { try await validate(provider, claims, acr: high) }
        claims["acr"] = .string("urn:eidas:loa:low")
        await expectCode(.acrNotSatisfied) { try await validate(provider, claims, acr: high) }
        claims["acr"] = .string("urn:mitid:substantial")
        let token = try await validate(provider, claims, acr: high)
        #expect(token.claims.acr == "urn:mitid:substantial")
    }

    // MARK: Refreshed ID tokens (OpenID Connect Core §12.2)

    @Test("a refreshed ID token with the same iss, sub and aud is accepted")
    func refreshedSame() throws {
        let previous = IDTokenClaims(iss: "i", sub: "s", aud: ["a"], authTime: 10)
        try IDTokenValidator.checkRefreshed(IDTokenClaims(iss: "i", sub: "s", aud: ["a"], authTime: 10), previous: previous)
    }

    @Test(
        "a refreshed ID token that changed iss, sub or aud, or newly carries azp, is rejected",
        arguments: [
            IDTokenClaims(iss: "other", sub: "s", aud: ["a"]),
            IDTokenClaims(iss: "i", sub: "other", aud: ["a"]),
            IDTokenClaims(iss: "i", sub: "s", aud: ["a", "b"]),
            IDTokenClaims(iss: "i", sub: "s", aud: ["a"], azp: "a"),
            IDTokenClaims(iss: "i", sub: "s", aud: ["a"], authTime: 99),
        ])
    func refreshedChanged(refreshed: IDTokenClaims) {
        let previous = IDTokenClaims(iss: "i", sub: "s", aud: ["a"], authTime: 10)
        expectCode(.refreshedIDTokenMismatch) { try IDTokenValidator.checkRefreshed(refreshed, previous: previous) }
    }
}
