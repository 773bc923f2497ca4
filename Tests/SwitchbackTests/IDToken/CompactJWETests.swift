import Crypto
import _CryptoExtras
import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// Encrypted ID tokens (RFC 7516 compact JWE): RFC 7520's published examples decrypt to their published
/// plaintext, every supported algorithm pair round-trips, and tampering or a wrong key fails typed.
@Suite("Compact JWE")
struct CompactJWETests {
    /// RFC 7520's plaintext for its JWE examples (§5).
    static let plaintext =
        "You can trust us to stick with you through thick and thin–to the bitter end. And you can trust us to keep any secret of yours–closer than you keep it yourself. But you cannot trust us to let you face trouble alone, and go off without a word. We are your friends, Frodo."

    /// RFC 7520 §5.4: ECDH-ES+A128KW with A128GCM, to Peregrin Took's P-384 key.
    static let example54Key: [String: JSONValue] = strings([
        "kty": "EC", "kid": "peregrin.took@tuckborough.example", "use": "enc", "crv": "P-384",
        "x": "YU4rRUzdmVqmRtWOs2OpDE_T5fsNIodcG8G5FWPrTPMyxpzsSOGaQLpe2FpxBmu2",
        "y": "A8-yxCHxkfBz3hKZfI1jUYMjUhsEveZ9THuwFjH2sCNdtksRJU7D5-SkgaFL1ETP",
        "d": "iTx2pk7wW-GqJkHcEkFQb2EFyYcO7RugmaW3mRrQVAOUiPommT0IdnYK2xDlZh-j",
    ])
    static let example54 = [
        "eyJhbGciOiJFQ0RILUVTK0ExMjhLVyIsImtpZCI6InBlcmVncmluLnRvb2tAdHVja2Jvcm91Z2guZXhhbXBsZSIsImVwayI6eyJrdHkiOiJFQyIsImNydiI6IlAtMzg0IiwieCI6InVCbzRrSFB3Nmtiang1bDB4b3dyZF9vWXpCbWF6LUdLRlp1NHhBRkZrYllpV2d1dEVLNml1RURzUTZ3TmROZzMiLCJ5Ijoic3AzcDVTR2haVkMyZmFYdW1JLWU5SlUyTW84S3BvWXJGRHI1eVBOVnRXNFBnRXdaT3lRVEEtSmRhWTh0YjdFMCJ9LCJlbmMiOiJBMTI4R0NNIn0",
        "0DJjBXri_kBcC46IkU5_Jk9BqaQeHdv2",
        "mH-G2zVqgztUtnW_",
        "tkZuOO9h95OgHJmkkrfLBisku8rGf6nzVxhRM3sVOhXgz5NJ76oID7lpnAi_cPWJRCjSpAaUZ5dOR3Spy7QuEkmKx8-3RCMhSYMzsXaEwDdXta9Mn5B7cCBoJKB0IgEnj_qfo1hIi-uEkUpOZ8aLTZGHfpl05jMwbKkTe2yK3mjF6SBAsgicQDVCkcY9BLluzx1RmC3ORXaM0JaHPB93YcdSDGgpgBWMVrNU1ErkjcMqMoT_wtCex3w03XdLkjXIuEr2hWgeP-nkUZTPU9EoGSPj6fAS-bSz87RCPrxZdj_iVyC6QWcqAu07WNhjzJEPc4jVntRJ6K53NgPQ5p99l3Z408OUqj4ioYezbS6vTPlQ",
        "WuGzxmcreYjpHGJoa17EBg",
    ].joined(separator: ".")

    /// RFC 7520 §5.5: ECDH-ES (direct agreement) with A128CBC-HS256, to Meriadoc Brandybuck's P-256 key.
    static let example55Key: [String: JSONValue] = strings([
        "kty": "EC", "kid": "meriadoc.brandybuck@buckland.example", "use": "enc", "crv": "P-256",
        "x": "Ze2loSV3wrroKUN_4zhwGhCqo3Xhu1td4QjeQ5wIVR0", "y": "HlLtdXARY_f55A3fnzQbPcm6hgr34Mp8p-nuzQCE0Zw",
        "d": "r_kHyZ-a06rmxM3yESK84r1otSg-aQcVStkRhA-iCM8",
    ])
    static let example55 = [
        "eyJhbGciOiJFQ0RILUVTIiwia2lkIjoibWVyaWFkb2MuYnJhbmR5YnVja0BidWNrbGFuZC5leGFtcGxlIiwiZXBrIjp7Imt0eSI6IkVDIiwiY3J2IjoiUC0yNTYiLCJ4IjoibVBVS1RfYkFXR0hJaGcwVHBqanFWc1AxclhXUXVfdndWT0hIdE5rZFlvQSIsInkiOiI4QlFBc0ltR2VBUzQ2ZnlXdzVNaFlmR1RUMElqQnBGdzJTUzM0RHY0SXJzIn0sImVuYyI6IkExMjhDQkMtSFMyNTYifQ",
        "",
        "yc9N8v5sYyv3iGQT926IUg",
        "BoDlwPnTypYq-ivjmQvAYJLb5Q6l-F3LIgQomlz87yW4OPKbWE1zSTEFjDfhU9IPIOSA9Bml4m7iDFwA-1ZXvHteLDtw4R1XRGMEsDIqAYtskTTmzmzNa-_q4F_evAPUmwlO-ZG45Mnq4uhM1fm_D9rBtWolqZSF3xGNNkpOMQKF1Cl8i8wjzRli7-IXgyirlKQsbhhqRzkv8IcY6aHl24j03C-AR2le1r7URUhArM79BY8soZU0lzwI-sD5PZ3l4NDCCei9XkoIAfsXJWmySPoeRb2Ni5UZL4mYpvKDiwmyzGd65KqVw7MsFfI_K767G9C9Azp73gKZD0DyUn1mn0WW5LmyX_yJ-3AROq8p1WZBfG-ZyJ6195_JGG2m9Csg",
        "WCCkNa-x4BeB9hIDIfFuhg",
    ].joined(separator: ".")

    @Test("RFC 7520 §5.4 (ECDH-ES+A128KW, A128GCM, P-384) and §5.5 (ECDH-ES, A128CBC-HS256, P-256) decrypt to the published plaintext")
    func rfc7520() throws {
        for (key, token) in [(Self.example54Key, Self.example54), (Self.example55Key, Self.example55)] {
            let decrypted = try CompactJWE.decrypt(token, keys: [try DecryptionKey(jwk: key)])
            #expect(String(decoding: decrypted.plaintext, as: UTF8.self) == Self.plaintext)
        }
    }

    struct JoserfcFixture: Decodable {
        struct Key: Decodable {
            let kid: String
            let pem: String
        }

        struct Token: Decodable {
            let key: String
            let alg: String
            let enc: String
            let jwe: String
        }

        let plaintext: String
        let keys: [String: Key]
        let tokens: [Token]
    }

    @Test("every pair as joserfc (an independent JOSE library) encrypts it decrypts to joserfc's plaintext (scripts/make_jwe_fixtures.py)")
    func joserfc() throws {
        let fixture = try JSONDecoder().decode(JoserfcFixture.self, from: Fixtures.data("joserfc-jwe.json"))
        let keys = try fixture.keys.mapValues { try DecryptionKey(pem: $0.pem, keyID: $0.kid) }
        #expect(fixture.tokens.count == 78)
        var covered: Set<String> = []
        for token in fixture.tokens {
            let decrypted = try CompactJWE.decrypt(token.jwe, keys: Array(keys.values))
            #expect(String(decoding: decrypted.plaintext, as: UTF8.self) == fixture.plaintext, "\(token.key) \(token.alg) \(token.enc)")
            #expect(decrypted.header["kid"] == .string(try #require(keys[token.key]?.keyID)))
            covered.insert("\(token.alg) \(token.enc)")
        }
        #expect(covered.count == Self.pairs.count)
    }

    static let pairs: [(String, String)] = CompactJWE.keyManagementAlgorithms.sorted().flatMap { alg in
        CompactJWE.contentEncryptions.sorted().map { (alg, $0) }
    }

    @Test("every key management and content encryption pair round-trips, on every curve and RSA-OAEP-256")
    func roundTrip() throws {
        let rsaPEM = try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation
        let keys = [
            DecryptionKey.generateP256(keyID: "p256"),
            try DecryptionKey(pem: P384.KeyAgreement.PrivateKey().pemRepresentation, keyID: "p384"),
            try DecryptionKey(pem: P521.KeyAgreement.PrivateKey().pemRepresentation, keyID: "p521"),
            try DecryptionKey(pem: rsaPEM, keyID: "rsa"),
        ]
        var checked = 0
        for (alg, enc) in Self.pairs {
            for key in keys where (alg == "RSA-OAEP-256") == (key.curve == nil) {
                let token = try CompactJWE.encrypt(
                    Data("inner.jws.token".utf8), to: key.publicJWK(), alg: alg, enc: enc, header: ["cty": .string("JWT")])
                #expect(CompactJWE.isEncrypted(token))
                let decrypted = try CompactJWE.decrypt(token, keys: keys)
                #expect(String(decoding: decrypted.plaintext, as: UTF8.self) == "inner.jws.token", "\(alg) \(enc) \(key.keyID ?? "")")
                #expect(decrypted.header["kid"] == .string(key.keyID ?? ""))
                checked += 1
            }
        }
        #expect(checked == 4 * 6 * 3 + 6)
    }

    @Test("a flipped bit in the tag, ciphertext, IV or encrypted key, another key, zip, crit and unknown algorithms are refused, typed")
    func refusals() throws {
        let key = DecryptionKey.generateP256(keyID: "k")
        for enc in ["A256GCM", "A256CBC-HS512"] {
            let token = try CompactJWE.encrypt(Data("secret".utf8), to: key.publicJWK(), alg: "ECDH-ES+A256KW", enc: enc)
            var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            for index in 1...4 {
                var tampered = parts
                var bytes = try #require(Base64URL.decode(tampered[index]))
                bytes[bytes.startIndex] ^= 0x01
                tampered[index] = Base64URL.encode(bytes)
                #expect(throws: SwitchbackError.self) { try CompactJWE.decrypt(tampered.joined(separator: "."), keys: [key]) }
                do {
                    _ = try CompactJWE.decrypt(tampered.joined(separator: "."), keys: [key])
                } catch let error as SwitchbackError {
                    #expect(error.code == .idTokenDecryptionFailed, "part \(index) of \(enc): \(error)")
                }
            }
            let stranger = DecryptionKey.generateP256(keyID: "k")
            #expect(Self.code { try CompactJWE.decrypt(token, keys: [stranger]) } == .idTokenDecryptionFailed)
            #expect(Self.code { try CompactJWE.decrypt(token, keys: [DecryptionKey.generateP256(keyID: "other")]) } == .idTokenDecryptionFailed)
            parts[0] = Base64URL.encode(Data(#"{"alg":"ECDH-ES+A256KW","enc":"A256GCM","zip":"DEF"}"#.utf8))
            #expect(Self.code { try CompactJWE.decrypt(parts.joined(separator: "."), keys: [key]) } == .unsupportedAlgorithm)
            parts[0] = Base64URL.encode(Data(#"{"alg":"RSA1_5","enc":"A256GCM"}"#.utf8))
            #expect(Self.code { try CompactJWE.decrypt(parts.joined(separator: "."), keys: [key]) } == .unsupportedAlgorithm)
            parts[0] = Base64URL.encode(Data(#"{"alg":"dir","enc":"A256GCM"}"#.utf8))
            #expect(Self.code { try CompactJWE.decrypt(parts.joined(separator: "."), keys: [key]) } == .unsupportedAlgorithm)
        }
        #expect(Self.code { try CompactJWE.decrypt("a.b.c", keys: [key]) } == .idTokenMalformed)
        #expect(Self.code { try CompactJWE.decrypt("!.b.c.d.e", keys: [key]) } == .idTokenMalformed)
    }

    @Test("an ephemeral key off the curve, or on another curve, is refused before any agreement")
    func invalidEphemeralKey() throws {
        let key = DecryptionKey.generateP256(keyID: "k")
        let token = try CompactJWE.encrypt(Data("secret".utf8), to: key.publicJWK(), alg: "ECDH-ES", enc: "A128GCM")
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let header = try JSONDecoder().decode([String: JSONValue].self, from: try #require(Base64URL.decode(parts[0])))
        guard case .object(var epk)? = header["epk"] else {
            Issue.record("no epk")
            return
        }
        epk["y"] = .string(Base64URL.encode(Data(repeating: 7, count: 32)))  // not a point on P-256
        for bad in [epk, epk.merging(["crv": .string("P-384")]) { $1 }] {
            var changed = header
            changed["epk"] = .object(bad)
            parts[0] = Base64URL.encode(Data(JSONValue.object(changed).description.utf8))
            #expect(Self.code { try CompactJWE.decrypt(parts.joined(separator: "."), keys: [key]) } == .idTokenDecryptionFailed)
        }
    }

    static func strings(_ object: [String: String]) -> [String: JSONValue] { object.mapValues(JSONValue.string) }

    static func code(_ body: () throws -> Any) -> SwitchbackError.Code? {
        do {
            _ = try body()
            return nil
        } catch let error as SwitchbackError {
            return error.code
        } catch {
            return nil
        }
    }
}
