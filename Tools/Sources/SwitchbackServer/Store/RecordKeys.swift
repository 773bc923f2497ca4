import Foundation
import Crypto
@_spi(SwitchbackInternals) import Switchback

/// The server-held keys every stored record is sealed under, beside the record's own secret: a record's
/// key is HKDF-SHA256 with one of these as the salt, the record's secret as the input and its kind as the
/// info. Whoever can write to the database but does not hold a key can therefore not make a record the
/// companion opens (a session for any subject, a hand-off grant, an "attested" key), even knowing the
/// secret it would be stored under.
///
/// The first key seals; the others, earlier keys during a rotation, only open. Each sealed value names
/// the key it was sealed under by a 4-byte identifier (a digest of the key, not the key).
public struct RecordKeys: Sendable {
    package struct Key: Sendable {
        /// What a sealed value names its key by: the first 4 bytes of SHA-256 of a label and the key.
        let id: [UInt8]
        /// HMAC-SHA256 keyed with the key, before any input: HKDF's extract step starts from here.
        let extractor: HMAC<SHA256>

        init(_ bytes: Data) {
            id = Array(SHA256.hash(data: Data("switchback record key id".utf8) + bytes).prefix(4))
            extractor = HMAC<SHA256>(key: SymmetricKey(data: bytes))
        }
    }

    package let current: Key
    let previous: [Key]

    /// `encoded` holds base64url (or base64) encodings of 32 random bytes each: the current key first, then
    /// earlier ones still accepted for opening. Throws ``SwitchbackError/Code/invalidConfiguration`` naming
    /// the position of a key that is not 32 bytes, never the key.
    public init(_ encoded: [String]) throws {
        let keys = try encoded.enumerated().map { index, text -> Key in
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = Base64URL.decode(trimmed) ?? Data(base64Encoded: trimmed), bytes.count == 32 else {
                throw SwitchbackError(
                    .invalidConfiguration, "recordKeys: key \(index + 1) is not 32 bytes in base64url (openssl rand -base64 32 makes one)")
            }
            return Key(bytes)
        }
        guard let current = keys.first else { throw SwitchbackError(.invalidConfiguration, "recordKeys holds no key") }
        guard Set(keys.map(\.id)).count == keys.count else { throw SwitchbackError(.invalidConfiguration, "recordKeys names one key twice") }
        self.current = current
        self.previous = Array(keys.dropFirst())
    }

    /// A key of this process only, for a store no other instance reads (memory).
    public static func random() -> RecordKeys {
        RecordKeys(current: Key(Data(KernelEntropy().randomBytes(count: 32))), previous: [])
    }

    private init(current: Key, previous: [Key]) {
        self.current = current
        self.previous = previous
    }

    /// The key a sealed value names.
    func key(id: some Collection<UInt8>) -> Key? {
        if current.id.elementsEqual(id) { return current }
        return previous.first { $0.id.elementsEqual(id) }
    }
}

/// A record's sealing key: the AES-256 key derived for its secret and kind, and the server key it was
/// derived under, which the sealed value names.
package struct RecordKey: Sendable, Equatable {
    let serverKeyID: [UInt8]
    let key: SymmetricKey

    /// The key as text, to keep inside another sealed record (a completion's result key).
    var encoded: String {
        key.withUnsafeBytes { Base64URL.encode(serverKeyID + Array($0)) }
    }

    init(serverKeyID: [UInt8], key: SymmetricKey) {
        self.serverKeyID = serverKeyID
        self.key = key
    }

    init?(encoded text: String) {
        guard let bytes = Base64URL.decode(text), bytes.count == 36 else { return nil }
        serverKeyID = Array(bytes.prefix(4))
        key = SymmetricKey(data: bytes.dropFirst(4))
    }
}

/// A stored value that does not open: sealed under no key this server holds (written by someone who can
/// write to the database but holds no record key, or under a key rotated out), or altered. The routes
/// answer it as they answer a secret they do not know, with 401, and count it.
struct TamperedRecord: Error, CustomStringConvertible {
    let kind: RecordKind
    var description: String { "a stored \(kind.rawValue) record does not open: sealed under no key this server holds, or altered" }
}
