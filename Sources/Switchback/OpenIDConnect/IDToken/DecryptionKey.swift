import Foundation
import Crypto
import _CryptoExtras

/// A private key the client decrypts encrypted ID tokens with (JWE, RFC 7516): an EC key for the
/// `ECDH-ES` family (P-256, P-384, P-521) or an RSA key of 2048 bits or more for `RSA-OAEP-256`. The
/// provider encrypts to its public half, which the client registers (``publicJWK(algorithm:)``).
public struct DecryptionKey: Sendable {
    enum Material: Sendable {
        case p256(P256.KeyAgreement.PrivateKey)
        case p384(P384.KeyAgreement.PrivateKey)
        case p521(P521.KeyAgreement.PrivateKey)
        /// Kept as the Sendable signing type; the encryption view is made from its DER when needed.
        case rsa(_RSA.Signing.PrivateKey)
    }

    let material: Material
    /// The `kid` the provider names in the JWE header; when both are set they must match.
    public let keyID: String?

    /// Reads a PEM private key: EC (SEC1 or PKCS#8) on P-256, P-384 or P-521, or RSA (PKCS#1 or PKCS#8).
    public init(pem: String, keyID: String? = nil) throws {
        if let key = try? P256.KeyAgreement.PrivateKey(pemRepresentation: pem) {
            material = .p256(key)
        } else if let key = try? P384.KeyAgreement.PrivateKey(pemRepresentation: pem) {
            material = .p384(key)
        } else if let key = try? P521.KeyAgreement.PrivateKey(pemRepresentation: pem) {
            material = .p521(key)
        } else if let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) {
            material = .rsa(key)
        } else {
            throw SwitchbackError(
                .invalidConfiguration, "the decryption key is not a PEM EC (P-256, P-384, P-521) or RSA (2048 bits or more) private key")
        }
        self.keyID = keyID
    }

    /// Reads a private EC JWK (`kty` EC with `d`), as RFC 7520's examples and many registrations give keys.
    public init(jwk: [String: JSONValue]) throws {
        func bytes(_ name: String) -> Data? {
            guard case .string(let text)? = jwk[name] else { return nil }
            return Base64URL.decode(text)
        }
        guard jwk["kty"] == .string("EC"), case .string(let curve)? = jwk["crv"], let d = bytes("d") else {
            throw SwitchbackError(.invalidConfiguration, "the decryption JWK must be a private EC key (kty EC, crv, d)")
        }
        do {
            switch curve {
            case "P-256": material = .p256(try P256.KeyAgreement.PrivateKey(rawRepresentation: d))
            case "P-384": material = .p384(try P384.KeyAgreement.PrivateKey(rawRepresentation: d))
            case "P-521": material = .p521(try P521.KeyAgreement.PrivateKey(rawRepresentation: d))
            default: throw SwitchbackError(.invalidConfiguration, "unsupported decryption key curve \(curve.prefix(20))")
            }
        } catch let error as SwitchbackError {
            throw error
        } catch {
            throw SwitchbackError(.invalidConfiguration, "the decryption JWK's d is not a valid \(curve.prefix(20)) private key")
        }
        if case .string(let kid)? = jwk["kid"] { keyID = kid } else { keyID = nil }
    }

    /// Creates a fresh P-256 key, the curve Singpass's documentation shows.
    public static func generateP256(keyID: String? = nil) -> DecryptionKey {
        DecryptionKey(material: .p256(P256.KeyAgreement.PrivateKey()), keyID: keyID)
    }

    init(material: Material, keyID: String?) {
        self.material = material
        self.keyID = keyID
    }

    /// The public key to register with the provider, marked `use: enc`, with `alg` when given.
    public func publicJWK(algorithm: String? = nil) -> [String: JSONValue] {
        var jwk: [String: JSONValue]
        switch material {
        case .p256(let key): jwk = ECPoint.jwk(curve: "P-256", x963: key.publicKey.x963Representation)
        case .p384(let key): jwk = ECPoint.jwk(curve: "P-384", x963: key.publicKey.x963Representation)
        case .p521(let key): jwk = ECPoint.jwk(curve: "P-521", x963: key.publicKey.x963Representation)
        case .rsa(let key):
            jwk = ["kty": .string("RSA")]
            if let components = try? key.publicKey.getKeyPrimitives() {
                jwk["n"] = .string(Base64URL.encode(components.modulus))
                jwk["e"] = .string(Base64URL.encode(components.publicExponent))
            }
        }
        jwk["use"] = .string("enc")
        if let keyID { jwk["kid"] = .string(keyID) }
        if let algorithm { jwk["alg"] = .string(algorithm) }
        return jwk
    }

    var curve: String? {
        switch material {
        case .p256: "P-256"
        case .p384: "P-384"
        case .p521: "P-521"
        case .rsa: nil
        }
    }
}
