import Crypto
import _CryptoExtras
import Foundation
import JWTKit
@_spi(SwitchbackInternals) import Switchback
@_spi(SwitchbackInternals) import SwitchbackTesting

/// The emulator's ID-token signing keys: one RS256 and one ES256 key, generated at start, and the
/// JWKS that publishes their public halves. Keys can be rotated on demand.
actor SigningKeys {
    struct KeyPair {
        let kid: String
        let algorithm: String
        let publicJWK: [String: JSONValue]
    }

    private var keys = JWTKeyCollection()
    private(set) var current: [String: KeyPair] = [:]
    private var generation = 0

    /// Keys from `given` where it has them (kids derived from the public keys, so they stay the same
    /// across restarts), fresh ones otherwise.
    init(given: EmulatorConfiguration.SigningKeyPEMs? = nil) async throws {
        try await install(rsa: try given?.rs256.map(Self.rsaKey), ec: try given?.es256.map(Self.ecKey))
    }

    static func rsaKey(_ pem: String) throws -> _RSA.Signing.PrivateKey {
        do { return try _RSA.Signing.PrivateKey(pemRepresentation: pem) } catch { throw EmulatorError.invalidSigningKey("RS256") }
    }

    static func ecKey(_ pem: String) throws -> P256.Signing.PrivateKey {
        do { return try P256.Signing.PrivateKey(pemRepresentation: pem) } catch { throw EmulatorError.invalidSigningKey("ES256") }
    }

    /// Replaces both keys with fresh ones (new kids); tokens signed before no longer verify.
    func rotate() async throws {
        try await install(rsa: nil, ec: nil)
    }

    private func install(rsa given: _RSA.Signing.PrivateKey?, ec givenEC: P256.Signing.PrivateKey?) async throws {
        generation += 1
        let collection = JWTKeyCollection()
        var pairs: [String: KeyPair] = [:]

        let rsa = try given ?? _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rsaKid =
            given.map { "rs256-" + Base64URL.encode(SHA256.hash(data: $0.publicKey.derRepresentation)).prefix(12) }
            ?? "rs256-\(generation)-\(UUID().uuidString.prefix(8).lowercased())"
        let primitives = try rsa.publicKey.getKeyPrimitives()
        await collection.add(rsa: try Insecure.RSA.PrivateKey(backing: rsa), digestAlgorithm: .sha256, kid: JWKIdentifier(string: rsaKid))
        pairs["RS256"] = KeyPair(
            kid: rsaKid, algorithm: "RS256",
            publicJWK: [
                "kty": .string("RSA"), "use": .string("sig"), "alg": .string("RS256"), "kid": .string(rsaKid),
                "n": .string(Base64URL.encode(primitives.modulus)), "e": .string(Base64URL.encode(primitives.publicExponent)),
            ])

        let ec = givenEC ?? P256.Signing.PrivateKey()
        let ecKid =
            givenEC.map { "es256-" + Base64URL.encode(SHA256.hash(data: $0.publicKey.x963Representation)).prefix(12) }
            ?? "es256-\(generation)-\(UUID().uuidString.prefix(8).lowercased())"
        await collection.add(ecdsa: try ES256PrivateKey(backing: ec), kid: JWKIdentifier(string: ecKid))
        pairs["ES256"] = KeyPair(
            kid: ecKid, algorithm: "ES256",
            publicJWK: PublicJWK.p256(ec.publicKey).merging(["use": .string("sig"), "alg": .string("ES256"), "kid": .string(ecKid)]) { $1 }
        )
        keys = collection
        current = pairs
    }

    /// The JWKS document; with `withUnparseableKey`, first a key no one can parse (``Fault/unparseableJWK``).
    func jwks(withUnparseableKey: Bool = false) -> JSONValue {
        var keys = current.keys.sorted().compactMap { current[$0].map { JSONValue.object($0.publicJWK) } }
        if withUnparseableKey {
            keys.insert(
                .object([
                    "kty": .string("RSA"), "use": .string("sig"), "alg": .string("RS256"), "kid": .string("unparseable"),
                    "n": .string("*not base64*"), "e": .string("AQAB"),
                ]), at: 0)
        }
        return .object(["keys": .array(keys)])
    }

    /// The claims of a token these keys signed, expired or not (an `id_token_hint`); nil when the
    /// signature does not verify with the current keys.
    func verifiedClaims(_ token: String) async -> [String: JSONValue]? {
        try? await keys.verify(token, as: ClaimSet.self).claims
    }

    /// Signs `claims` with the key for `algorithm` (RS256 or ES256).
    func sign(_ claims: [String: JSONValue], algorithm: String, type: String = "JWT") async throws -> String {
        guard let pair = current[algorithm] else { throw EmulatorError.unsupportedAlgorithm(algorithm) }
        var header = JWTHeader()
        header.typ = type
        return try await keys.sign(ClaimSet(claims: claims), kid: JWKIdentifier(string: pair.kid), header: header)
    }
}

/// Why the emulator could not start or serve.
enum EmulatorError: Error, CustomStringConvertible {
    case unsupportedAlgorithm(String)
    case invalidSigningKey(String)

    var description: String {
        switch self {
        case .unsupportedAlgorithm(let alg): "the emulator signs with RS256 or ES256, not \(alg)"
        case .invalidSigningKey(let alg): "the configured \(alg) signing key is not a valid PEM private key"
        }
    }
}
