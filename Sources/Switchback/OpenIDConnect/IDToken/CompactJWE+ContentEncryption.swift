import Foundation
import Crypto
import _CryptoExtras

/// One content encryption algorithm: AES-GCM, or AES-CBC with HMAC-SHA-2 (RFC 7518 §5.2).
struct ContentEncryption {
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
