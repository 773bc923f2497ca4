public import Foundation
@_spi(SwitchbackInternals) public import Switchback
import Crypto
import _CryptoExtras
import JWTKit

/// A throw-away signing key (RS256 or ES256) that mints JWTs and publishes its public JWK, for tests.
///
/// Signatures go through jwt-kit; ``compact(header:claims:signature:)`` builds deliberately broken
/// tokens (wrong `alg`, forged signatures) for negative tests.
public struct TestTokenSigner: Sendable {
    public enum Algorithm: String, Sendable {
        case rs256 = "RS256"
        case es256 = "ES256"
    }

    public let algorithm: Algorithm
    public let keyID: String?
    /// The public key as a JWK object.
    public let publicJWK: [String: JSONValue]
    /// The private key in PEM, for `private_key_jwt` client tests.
    public let privateKeyPEM: String
    private let keys: JWTKeyCollection

    /// Generates a fresh key pair.
    public init(_ algorithm: Algorithm, keyID: String? = nil) async throws {
        self.algorithm = algorithm
        self.keyID = keyID
        let keys = JWTKeyCollection()
        let kid = keyID.map { JWKIdentifier(string: $0) }
        var jwk: [String: JSONValue] = ["alg": .string(algorithm.rawValue), "use": .string("sig")]
        if let keyID { jwk["kid"] = .string(keyID) }
        switch algorithm {
        case .rs256:
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let primitives = try key.publicKey.getKeyPrimitives()
            jwk["kty"] = .string("RSA")
            jwk["n"] = .string(Self.base64URL(primitives.modulus))
            jwk["e"] = .string(Self.base64URL(primitives.publicExponent))
            privateKeyPEM = key.pemRepresentation
            await keys.add(rsa: try Insecure.RSA.PrivateKey(backing: key), digestAlgorithm: .sha256, kid: kid)
        case .es256:
            let key = P256.Signing.PrivateKey()
            jwk.merge(PublicJWK.p256(key.publicKey)) { $1 }
            privateKeyPEM = key.pemRepresentation
            await keys.add(ecdsa: try ES256PrivateKey(backing: key), kid: kid)
        }
        self.publicJWK = jwk
        self.keys = keys
    }

    /// A JWKS document holding the given signers' public keys (and any extra raw key objects).
    public static func jwks(_ signers: [TestTokenSigner], extraKeys: [[String: JSONValue]] = []) -> String {
        let keys = signers.map { JSONValue.object($0.publicJWK) } + extraKeys.map { JSONValue.object($0) }
        return JSONValue.object(["keys": .array(keys)]).description
    }

    /// Signs `claims` with this key; the header carries `alg`, `typ` and (when set) `kid`.
    /// `type` is the header's `typ` (`at+jwt` for an RFC 9068 access token).
    public func sign(_ claims: [String: JSONValue], includeKeyID: Bool = true, type: String = "JWT") async throws -> String {
        var header = JWTHeader()
        header.typ = type
        let kid = includeKeyID ? keyID.map { JWKIdentifier(string: $0) } : nil
        return try await keys.sign(ClaimSet(claims: claims), kid: kid, header: header)
    }

    /// Builds a compact token from raw parts, without signing.
    public static func compact(header: [String: JSONValue], claims: [String: JSONValue], signature: [UInt8]) -> String {
        [Data(JSONValue.object(header).description.utf8), Data(JSONValue.object(claims).description.utf8), Data(signature)]
            .map(base64URL)
            .joined(separator: ".")
    }

    /// An HS256 token keyed with `secret` (the classic key-confusion attack uses the public key's bytes).
    public static func hs256(header: [String: JSONValue], claims: [String: JSONValue], secret: Data) -> String {
        let unsigned = [Data(JSONValue.object(header).description.utf8), Data(JSONValue.object(claims).description.utf8)]
            .map(base64URL).joined(separator: ".")
        let mac = HMAC<SHA256>.authenticationCode(for: Data(unsigned.utf8), using: SymmetricKey(data: secret))
        return unsigned + "." + base64URL(Data(mac))
    }

    /// Base64url without padding, as JOSE uses it.
    public static func base64URL(_ data: some DataProtocol) -> String {
        Base64URL.encode(data)
    }
}
