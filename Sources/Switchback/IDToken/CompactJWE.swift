public import Foundation
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

/// Compact JWE (RFC 7516) with the algorithms OpenID providers use to encrypt ID tokens (RFC 7518):
/// key management `ECDH-ES`, `ECDH-ES+A128KW`, `ECDH-ES+A192KW`, `ECDH-ES+A256KW` and `RSA-OAEP-256`;
/// content `A128GCM`, `A192GCM`, `A256GCM`, `A128CBC-HS256`, `A192CBC-HS384` and `A256CBC-HS512`.
/// Compression (`zip`) and critical extensions (`crit`) are refused.
@_spi(SwitchbackInternals) public enum CompactJWE {
    @_spi(SwitchbackInternals) public static let keyManagementAlgorithms: Set<String> = [
        "ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW", "RSA-OAEP-256",
    ]
    @_spi(SwitchbackInternals) public static let contentEncryptions: Set<String> = [
        "A128GCM", "A192GCM", "A256GCM", "A128CBC-HS256", "A192CBC-HS384", "A256CBC-HS512",
    ]

    /// A compact JWE has five parts; a compact JWS three.
    @_spi(SwitchbackInternals) public static func isEncrypted(_ token: String) -> Bool {
        token.utf8.lazy.filter { $0 == UInt8(ascii: ".") }.count == 4
    }

    /// The plaintext and the protected header of `token`, decrypted with whichever of `keys` it names.
    @_spi(SwitchbackInternals) public static func decrypt(_ token: String, keys: [DecryptionKey]) throws -> (
        header: [String: JSONValue], plaintext: Data
    ) {
        func malformed(_ why: String) -> SwitchbackError { SwitchbackError(.idTokenMalformed, "the encrypted ID token is malformed: \(why)") }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5 else { throw malformed("a compact JWE has five parts") }
        guard let headerData = Base64URL.decode(parts[0]), let encryptedKey = Base64URL.decode(parts[1]), let iv = Base64URL.decode(parts[2]),
            let ciphertext = Base64URL.decode(parts[3]), let tag = Base64URL.decode(parts[4])
        else { throw malformed("a part is not base64url") }
        guard case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerData),
            case .string(let alg)? = header["alg"], case .string(let enc)? = header["enc"]
        else { throw malformed("the protected header lacks alg or enc") }
        guard keyManagementAlgorithms.contains(alg), let content = ContentEncryption(enc) else {
            throw SwitchbackError(.unsupportedAlgorithm, "unsupported ID token encryption \(alg.prefix(24)) / \(enc.prefix(24))")
        }
        guard header["zip"] == nil, header["crit"] == nil else {
            throw SwitchbackError(.unsupportedAlgorithm, "compressed (zip) or critical-extension (crit) JWEs are refused")
        }
        let kid: String? = if case .string(let value)? = header["kid"] { value } else { nil }
        let candidates = keys.filter { key in
            guard kid == nil || key.keyID == nil || key.keyID == kid else { return false }
            return alg == "RSA-OAEP-256" ? key.curve == nil : key.curve != nil
        }
        guard !candidates.isEmpty else {
            throw SwitchbackError(
                .idTokenDecryptionFailed, "no decryption key matches the ID token's \(alg)\(kid.map { " and kid \($0.prefix(40))" } ?? "")")
        }
        let aad = Data(parts[0].utf8)
        for key in candidates {
            guard let cek = try? contentKey(alg: alg, content: content, header: header, encryptedKey: encryptedKey, key: key) else { continue }
            if let plaintext = try? content.open(ciphertext: ciphertext, iv: iv, tag: tag, aad: aad, key: cek) {
                return (header, plaintext)
            }
        }
        throw SwitchbackError(.idTokenDecryptionFailed, "the ID token does not decrypt with the client's keys (wrong key, or tampered)")
    }

    /// The content encryption key: agreed (ECDH-ES), unwrapped (ECDH-ES+AxxxKW), or decrypted (RSA-OAEP-256).
    private static func contentKey(alg: String, content: ContentEncryption, header: [String: JSONValue], encryptedKey: Data, key: DecryptionKey)
        throws -> SymmetricKey
    {
        if alg == "RSA-OAEP-256" {
            guard case .rsa(let signing) = key.material else { throw CryptoKitError.incorrectKeySize }
            let rsa = try _RSA.Encryption.PrivateKey(derRepresentation: signing.derRepresentation)
            // RFC 7516 §11.5: a failed unwrap continues with a random key, so that the failure shows only
            // at the tag check and its timing does not reveal which step failed.
            guard let cek = try? rsa.decrypt(encryptedKey, padding: .PKCS1_OAEP_SHA256), cek.count == content.keyLength else {
                return SymmetricKey(size: SymmetricKeySize(bitCount: content.keyLength * 8))
            }
            return SymmetricKey(data: cek)
        }
        guard case .object(let epk)? = header["epk"], let curve = key.curve, epk["kty"] == .string("EC"), epk["crv"] == .string(curve) else {
            throw CryptoKitError.incorrectParameterSize
        }
        let z = try ECPoint.agree(key: key.material, with: epk)
        let apu = try partyInfo(header["apu"])
        let apv = try partyInfo(header["apv"])
        if alg == "ECDH-ES" {
            guard encryptedKey.isEmpty else { throw CryptoKitError.incorrectParameterSize }
            return ConcatKDF.derive(z: z, bytes: content.keyLength, algorithmID: content.name, apu: apu, apv: apv)
        }
        let kekLength = Int(alg.dropFirst("ECDH-ES+A".count).prefix(3))! / 8
        let kek = ConcatKDF.derive(z: z, bytes: kekLength, algorithmID: alg, apu: apu, apv: apv)
        let cek = try AES.KeyWrap.unwrap(encryptedKey, using: kek)
        guard cek.bitCount == content.keyLength * 8 else { throw CryptoKitError.incorrectKeySize }
        return cek
    }

    private static func partyInfo(_ value: JSONValue?) throws -> Data {
        guard let value else { return Data() }
        guard case .string(let text) = value, let data = Base64URL.decode(text) else { throw CryptoKitError.incorrectParameterSize }
        return data
    }

    /// Encrypts `plaintext` to the public JWK `recipient` (EC for the ECDH-ES family, RSA for
    /// RSA-OAEP-256), with `header` fields added to the protected header. The emulator issues encrypted
    /// ID tokens with it; the core itself only decrypts.
    @_spi(SwitchbackInternals) public static func encrypt(
        _ plaintext: Data, to recipient: [String: JSONValue], alg: String, enc: String, header extra: [String: JSONValue] = [:]
    ) throws -> String {
        guard keyManagementAlgorithms.contains(alg), let content = ContentEncryption(enc) else {
            throw SwitchbackError(.unsupportedAlgorithm, "unsupported encryption \(alg) / \(enc)")
        }
        var header = extra
        header["alg"] = .string(alg)
        header["enc"] = .string(enc)
        if case .string(let kid)? = recipient["kid"] { header["kid"] = .string(kid) }
        let cek: SymmetricKey
        var encryptedKey = Data()
        if alg == "RSA-OAEP-256" {
            guard case .string(let n)? = recipient["n"], case .string(let e)? = recipient["e"], let modulus = Base64URL.decode(n),
                let exponent = Base64URL.decode(e)
            else {
                throw SwitchbackError(.invalidConfiguration, "RSA-OAEP-256 needs an RSA public JWK")
            }
            cek = SymmetricKey(size: SymmetricKeySize(bitCount: content.keyLength * 8))
            let key = try _RSA.Encryption.PublicKey(n: modulus, e: exponent)
            encryptedKey = try cek.withUnsafeBytes { try key.encrypt(Data($0), padding: .PKCS1_OAEP_SHA256) }
        } else {
            let (z, epk) = try ECPoint.ephemeralAgreement(with: recipient)
            header["epk"] = .object(epk)
            if alg == "ECDH-ES" {
                cek = ConcatKDF.derive(z: z, bytes: content.keyLength, algorithmID: content.name, apu: Data(), apv: Data())
            } else {
                let kekLength = Int(alg.dropFirst("ECDH-ES+A".count).prefix(3))! / 8
                let kek = ConcatKDF.derive(z: z, bytes: kekLength, algorithmID: alg, apu: Data(), apv: Data())
                cek = SymmetricKey(size: SymmetricKeySize(bitCount: content.keyLength * 8))
                encryptedKey = try AES.KeyWrap.wrap(cek, using: kek)
            }
        }
        let protected = Base64URL.encode(Data(JSONValue.object(header).description.utf8))
        let (iv, ciphertext, tag) = try content.seal(plaintext, aad: Data(protected.utf8), key: cek)
        return [protected, Base64URL.encode(encryptedKey), Base64URL.encode(iv), Base64URL.encode(ciphertext), Base64URL.encode(tag)].joined(
            separator: ".")
    }
}

/// One content encryption algorithm: AES-GCM, or AES-CBC with HMAC-SHA-2 (RFC 7518 §5.2).
private struct ContentEncryption {
    let name: String
    /// Bytes of the content encryption key (for CBC-HMAC, MAC key and encryption key together).
    let keyLength: Int
    let gcm: Bool

    init?(_ name: String) {
        switch name {
        case "A128GCM": (keyLength, gcm) = (16, true)
        case "A192GCM": (keyLength, gcm) = (24, true)
        case "A256GCM": (keyLength, gcm) = (32, true)
        case "A128CBC-HS256": (keyLength, gcm) = (32, false)
        case "A192CBC-HS384": (keyLength, gcm) = (48, false)
        case "A256CBC-HS512": (keyLength, gcm) = (64, false)
        default: return nil
        }
        self.name = name
    }

    func open(ciphertext: Data, iv: Data, tag: Data, aad: Data, key: SymmetricKey) throws -> Data {
        guard key.bitCount == keyLength * 8 else { throw CryptoKitError.incorrectKeySize }
        if gcm {
            guard iv.count == 12, tag.count == 16 else { throw CryptoKitError.incorrectParameterSize }
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: ciphertext, tag: tag)
            return try AES.GCM.open(box, using: key, authenticating: aad)
        }
        guard iv.count == 16 else { throw CryptoKitError.incorrectParameterSize }
        let (macKey, encryptionKey) = split(key)
        // The tag is checked, in constant time, before anything is decrypted.
        guard ConstantTime.equals(Array(authenticationTag(aad: aad, iv: iv, ciphertext: ciphertext, macKey: macKey)), Array(tag)) else {
            throw CryptoKitError.authenticationFailure
        }
        return try AES._CBC.decrypt(ciphertext, using: encryptionKey, iv: AES._CBC.IV(ivBytes: iv))
    }

    func seal(_ plaintext: Data, aad: Data, key: SymmetricKey) throws -> (iv: Data, ciphertext: Data, tag: Data) {
        if gcm {
            let box = try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: aad)
            return (Data(box.nonce), box.ciphertext, box.tag)
        }
        let (macKey, encryptionKey) = split(key)
        let iv = AES._CBC.IV()
        let ivData = Data(iv)
        let ciphertext = try AES._CBC.encrypt(plaintext, using: encryptionKey, iv: iv)
        return (ivData, ciphertext, authenticationTag(aad: aad, iv: ivData, ciphertext: ciphertext, macKey: macKey))
    }

    /// MAC key first, encryption key second, each half of the content encryption key.
    private func split(_ key: SymmetricKey) -> (SymmetricKey, SymmetricKey) {
        key.withUnsafeBytes { bytes in
            let half = bytes.count / 2
            return (SymmetricKey(data: Data(bytes.prefix(half))), SymmetricKey(data: Data(bytes.suffix(half))))
        }
    }

    /// HMAC over AAD ‖ IV ‖ ciphertext ‖ AAD length in bits (64-bit big-endian), its first half.
    private func authenticationTag(aad: Data, iv: Data, ciphertext: Data, macKey: SymmetricKey) -> Data {
        var input = aad + iv + ciphertext
        withUnsafeBytes(of: UInt64(aad.count * 8).bigEndian) { input.append(contentsOf: $0) }
        let half = keyLength / 2
        switch keyLength {
        case 32: return Data(HMAC<SHA256>.authenticationCode(for: input, using: macKey)).prefix(half)
        case 48: return Data(HMAC<SHA384>.authenticationCode(for: input, using: macKey)).prefix(half)
        default: return Data(HMAC<SHA512>.authenticationCode(for: input, using: macKey)).prefix(half)
        }
    }
}

/// The Concat KDF of NIST SP 800-56A as JWA §4.6.2 uses it, with SHA-256.
private enum ConcatKDF {
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
private enum ECPoint {
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
