public import Foundation
public import Crypto

/// Public keys written as JWK members (RFC 7518 §6), for every place that publishes one: DPoP proofs,
/// the emulator's JWKS, the testing product's signer.
@_spi(SwitchbackInternals) public enum PublicJWK {
    /// `kty`, `crv`, `x` and `y` of a P-256 key.
    @_spi(SwitchbackInternals) public static func p256(_ key: P256.Signing.PublicKey) -> [String: JSONValue] {
        let point = key.x963Representation
        return [
            "kty": .string("EC"), "crv": .string("P-256"),
            "x": .string(Base64URL.encode(point[1..<33])), "y": .string(Base64URL.encode(point[33..<65])),
        ]
    }

    /// `kty`, `crv`, `x` and `y` of an EC key on `curve` given as its uncompressed point.
    @_spi(SwitchbackInternals) public static func ec(curve: String, x963: Data) -> [String: JSONValue] {
        ECPoint.jwk(curve: curve, x963: x963)
    }
}
