import Foundation

/// A CBOR data item (RFC 8949), as much of it as App Attest's attestation objects and assertions use.
///
/// The decoder reads definite lengths only (Apple's objects use nothing else), checks every length against
/// the bytes that remain before reading, and nests at most 16 deep, so a hostile body costs at most its own
/// size and cannot exhaust the stack.
enum CBOR: Equatable, Sendable {
    case unsigned(UInt64)
    case negative(UInt64)
    case bytes(Data)
    case text(String)
    case array([CBOR])
    case map([(key: CBOR, value: CBOR)])
    case tagged(UInt64, Box)
    case simple(UInt8)

    /// A tagged item's content (indirect, so that the enum has a fixed size).
    final class Box: Equatable, Sendable {
        let value: CBOR
        init(_ value: CBOR) { self.value = value }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs.value == rhs.value }
    }

    static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.tagged(let t, let a), .tagged(let u, let b)): t == u && a == b
        case (.simple(let a), .simple(let b)): a == b
        default: false
        }
    }

    /// The value under the text key `key` of a map.
    subscript(_ key: String) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    var bytes: Data? {
        if case .bytes(let value) = self { return value }
        return nil
    }

    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    var array: [CBOR]? {
        if case .array(let value) = self { return value }
        return nil
    }

    struct Malformed: Error, CustomStringConvertible {
        let description: String
    }

    /// Decodes exactly one item that spans all of `data`.
    static func decode(_ data: Data) throws -> CBOR {
        var reader = Reader(bytes: [UInt8](data))
        let item = try reader.item(depth: 0)
        guard reader.offset == reader.bytes.count else { throw Malformed(description: "bytes after the item") }
        return item
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw Malformed(description: "truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
            guard count <= UInt64(bytes.count - offset) else { throw Malformed(description: "a length past the end") }
            defer { offset += Int(count) }
            return bytes[offset..<offset + Int(count)]
        }

        mutating func argument(_ info: UInt8) throws -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                let width = 1 << (info - 24)
                return try take(UInt64(width)).reduce(0) { $0 << 8 | UInt64($1) }
            default: throw Malformed(description: "an indefinite or reserved length")
            }
        }

        mutating func item(depth: Int) throws -> CBOR {
            guard depth < 16 else { throw Malformed(description: "nested too deep") }
            let initial = try byte()
            let major = initial >> 5
            let info = initial & 0x1f
            if major == 7 {
                guard info < 24 else { throw Malformed(description: "a float or a reserved simple value") }
                return .simple(info)
            }
            let argument = try argument(info)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(Data(try take(argument)))
            case 3:
                guard let text = String(validating: try take(argument), as: UTF8.self) else { throw Malformed(description: "text that is not UTF-8") }
                return .text(text)
            case 4:
                // Each element takes at least one byte: a count beyond what remains is refused before allocating.
                guard argument <= UInt64(bytes.count - offset) else { throw Malformed(description: "an array longer than the data") }
                return .array(try (0..<argument).map { _ in try item(depth: depth + 1) })
            case 5:
                guard argument <= UInt64(bytes.count - offset) / 2 else { throw Malformed(description: "a map longer than the data") }
                return .map(try (0..<argument).map { _ in (try item(depth: depth + 1), try item(depth: depth + 1)) })
            default:
                return .tagged(argument, Box(try item(depth: depth + 1)))
            }
        }
    }
}
