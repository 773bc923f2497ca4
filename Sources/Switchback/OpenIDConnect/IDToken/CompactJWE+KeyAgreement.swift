import Foundation
import Crypto
import _CryptoExtras

/// The Concat KDF of NIST SP 800-56A as JWA §4.6.2 uses it, with SHA-256.
enum ConcatKDF {
    static func derive(z: Data, bytes: Int, algorithmID: String, apu: Data, apv: Data) -> SymmetricKey {
        func lengthPrefixed(_ data: Data) -> Data { bigEndian(UInt32(data.count)) + data }
        func bigEndian(_ value: UInt32) -> Data { withUnsafeBytes(of: value.bigEndian) { Data($0) } }
        let otherInfo = lengthPrefixed(Data(algorithmID.utf8)) + lengthPrefixed(apu) + lengthPrefixed(apv) + bigEndian(UInt32(bytes * 8))
        var output = Data()
        var counter: UInt32 = 1
        while output.count < bytes {
            var hash = SHA256()
            hash.update(data: bigEndian(counter))
            hash.update(data: z)
            hash.update(data: otherInfo)
            output.append(contentsOf: hash.finalize())
            counter += 1
        }
        return SymmetricKey(data: output.prefix(bytes))
    }
}

/// EC public keys as JWKs, and the ECDH agreements on them.
enum ECPoint {
    static func jwk(curve: String, x963: Data) -> [String: JSONValue] {
        let coordinate = (x963.count - 1) / 2
        return [
            "kty": .string("EC"), "crv": .string(curve),
            "x": .string(Base64URL.encode(x963.dropFirst().prefix(coordinate))), "y": .string(Base64URL.encode(x963.suffix(coordinate))),
        ]
    }

    /// The uncompressed point of a public EC JWK, checked for the curve's coordinate size.
    static func x963(_ jwk: [String: JSONValue], coordinate: Int) throws -> Data {
        guard case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"], let xBytes = Base64URL.decode(x), let yBytes = Base64URL.decode(y),
            xBytes.count == coordinate, yBytes.count == coordinate
        else { throw CryptoKitError.incorrectParameterSize }
        return Data([0x04]) + xBytes + yBytes
    }

    /// The shared secret Z of `key` and the sender's ephemeral key; swift-crypto rejects points off the curve.
    static func agree(key: DecryptionKey.Material, with epk: [String: JSONValue]) throws -> Data {
        let secret: SharedSecret
        switch key {
        case .p256(let key):
            secret = try key.sharedSecretFromKeyAgreement(with: P256.KeyAgreement.PublicKey(x963Representation: x963(epk, coordinate: 32)))
        case .p384(let key):
            secret = try key.sharedSecretFromKeyAgreement(with: P384.KeyAgreement.PublicKey(x963Representation: x963(epk, coordinate: 48)))
        case .p521(let key):
            secret = try key.sharedSecretFromKeyAgreement(with: P521.KeyAgreement.PublicKey(x963Representation: x963(epk, coordinate: 66)))
        case .rsa: throw CryptoKitError.incorrectKeySize
        }
        return secret.withUnsafeBytes { Data($0) }
    }

    /// A fresh ephemeral key on the recipient's curve: the shared secret and the `epk` to send.
    static func ephemeralAgreement(with recipient: [String: JSONValue]) throws -> (Data, [String: JSONValue]) {
        switch recipient["crv"] {
        case .string("P-256")?:
            let ephemeral = P256.KeyAgreement.PrivateKey()
            let secret = try ephemeral.sharedSecretFromKeyAgreement(
                with: P256.KeyAgreement.PublicKey(x963Representation: x963(recipient, coordinate: 32)))
            return (secret.withUnsafeBytes { Data($0) }, jwk(curve: "P-256", x963: ephemeral.publicKey.x963Representation))
        case .string("P-384")?:
            let ephemeral = P384.KeyAgreement.PrivateKey()
            let secret = try ephemeral.sharedSecretFromKeyAgreement(
                with: P384.KeyAgreement.PublicKey(x963Representation: x963(recipient, coordinate: 48)))
            return (secret.withUnsafeBytes { Data($0) }, jwk(curve: "P-384", x963: ephemeral.publicKey.x963Representation))
        case .string("P-521")?:
            let ephemeral = P521.KeyAgreement.PrivateKey()
            let secret = try ephemeral.sharedSecretFromKeyAgreement(
                with: P521.KeyAgreement.PublicKey(x963Representation: x963(recipient, coordinate: 66)))
            return (secret.withUnsafeBytes { Data($0) }, jwk(curve: "P-521", x963: ephemeral.publicKey.x963Representation))
        default:
            throw SwitchbackError(.invalidConfiguration, "ECDH-ES needs a P-256, P-384 or P-521 public JWK")
        }
    }
}
