import Crypto
import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Digests and shapes of the secrets the companion hands out or receives.
enum Secrets {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw SwitchbackError(.storeFailed, "a stored \(type) record could not be read", underlying: error)
        }
    }

    static func digest(_ secret: String) -> String {
        var secret = secret
        return Base64URL.encode(secret.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer($0)) })
    }

    /// A secret this server issued: 43 base64url characters (32 bytes).
    static func isIssued(_ secret: String) -> Bool {
        secret.utf8.count == 43 && Base64URL.isAlphabet(secret)
    }

    /// A secret from elsewhere (a `state`, a flow ID): printable, bounded.
    static func isPlausible(_ secret: String) -> Bool {
        (16...512).contains(secret.utf8.count) && secret.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
