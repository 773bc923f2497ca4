import Crypto
import _CryptoExtras
import Foundation
@_spi(SwitchbackInternals) import Switchback

/// The client's decryption keys for the `jwe` target: RFC 7520's P-384 (§5.4) and P-256 (§5.5) keys, so that
/// the RFC's examples in the corpus decrypt, and an RSA key made once per process for `RSA-OAEP-256`.
enum JWEFuzz {
    static func jwk(_ members: [String: String]) -> [String: JSONValue] { members.mapValues { .string($0) } }

    static let keys: [DecryptionKey] = [
        try! DecryptionKey(
            jwk: jwk([
                "kty": "EC", "kid": "peregrin.took@tuckborough.example", "crv": "P-384",
                "x": "YU4rRUzdmVqmRtWOs2OpDE_T5fsNIodcG8G5FWPrTPMyxpzsSOGaQLpe2FpxBmu2",
                "y": "A8-yxCHxkfBz3hKZfI1jUYMjUhsEveZ9THuwFjH2sCNdtksRJU7D5-SkgaFL1ETP",
                "d": "iTx2pk7wW-GqJkHcEkFQb2EFyYcO7RugmaW3mRrQVAOUiPommT0IdnYK2xDlZh-j",
            ])),
        try! DecryptionKey(
            jwk: jwk([
                "kty": "EC", "kid": "meriadoc.brandybuck@buckland.example", "crv": "P-256",
                "x": "Ze2loSV3wrroKUN_4zhwGhCqo3Xhu1td4QjeQ5wIVR0", "y": "HlLtdXARY_f55A3fnzQbPcm6hgr34Mp8p-nuzQCE0Zw",
                "d": "r_kHyZ-a06rmxM3yESK84r1otSg-aQcVStkRhA-iCM8",
            ])),
        try! DecryptionKey(pem: _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation, keyID: "rsa"),
    ]
    static let algorithms = CompactJWE.keyManagementAlgorithms.sorted()
    static let encryptions = CompactJWE.contentEncryptions.sorted()
}

extension FuzzTarget {
    /// Encrypted ID tokens (compact JWE), as the provider's token endpoint hands them to the app.
    static let jwe = FuzzTarget(
        "jwe",
        asserts: """
            a token (first byte even) is decrypted or refused with SwitchbackError; a plaintext (first byte odd) \
            encrypted to one of the client's keys with the pair the next two bytes pick decrypts to itself under the \
            header it was sent with, and the same token with any one byte changed (the byte after them picks it) is \
            refused with SwitchbackError
            """
    ) { input in
        guard let mode = input.first else { return }
        if mode % 2 == 0 {
            guard let token = text(input.dropFirst()) else { return }
            do {
                _ = try CompactJWE.decrypt(token, keys: JWEFuzz.keys)
            } catch is SwitchbackError {
            } catch {
                require(false, "CompactJWE.decrypt threw \(type(of: error))")
            }
            return
        }
        let bytes = Array(input.dropFirst())
        guard bytes.count >= 3 else { return }
        let alg = JWEFuzz.algorithms[Int(bytes[0]) % JWEFuzz.algorithms.count]
        let enc = JWEFuzz.encryptions[Int(bytes[1]) % JWEFuzz.encryptions.count]
        let plaintext = Data(bytes.dropFirst(3))
        // The RSA key for RSA-OAEP-256, else one of the two curves.
        let key = alg == "RSA-OAEP-256" ? JWEFuzz.keys[2] : JWEFuzz.keys[Int(bytes[2]) % 2]
        let token: String
        do {
            token = try CompactJWE.encrypt(plaintext, to: key.publicJWK(), alg: alg, enc: enc, header: ["cty": .string("JWT")])
        } catch {
            require(false, "CompactJWE.encrypt refused \(alg) \(enc): \(error)")
            return
        }
        guard let opened = try? CompactJWE.decrypt(token, keys: JWEFuzz.keys) else {
            require(false, "a token encrypted to the client's key does not decrypt (\(alg) \(enc))")
            return
        }
        require(opened.plaintext == plaintext, "a token decrypts to another plaintext (\(alg) \(enc))")
        require(opened.header["alg"] == .string(alg) && opened.header["enc"] == .string(enc), "the header read is not the one sent")
        // One byte changed, wherever it is: the protected header is the tag's additional data, the IV and the
        // ciphertext are under the tag, the encrypted key yields another content key, and base64url is read
        // only in its canonical form; a dot changed alters the parts.
        var tampered = Array(token.utf8)
        let position = (Int(bytes[2]) &* 257 &+ plaintext.count) % tampered.count
        tampered[position] = tampered[position] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        do {
            _ = try CompactJWE.decrypt(String(decoding: tampered, as: UTF8.self), keys: JWEFuzz.keys)
            require(false, "a token with byte \(position) changed still decrypts (\(alg) \(enc))")
        } catch is SwitchbackError {
        } catch {
            require(false, "CompactJWE.decrypt threw \(type(of: error)) for a changed token")
        }
    }
}
