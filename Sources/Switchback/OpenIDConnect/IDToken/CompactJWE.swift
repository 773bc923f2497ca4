public import Foundation
import Crypto
import _CryptoExtras

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
        // A loop over the string's own storage: a lazy filter over the UTF-8 view cost 5% of an RS256
        // validation, and a plain loop over the view still 4% (perf; Documentation/Decisions/0002-direct-es256-rs256-verification.md).
        func dots(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            var count = 0
            for byte in bytes where byte == UInt8(ascii: ".") { count += 1 }
            return count
        }
        let count = token.utf8.withContiguousStorageIfAvailable(dots) ?? Array(token.utf8).withUnsafeBufferPointer(dots)
        return count == 4
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
