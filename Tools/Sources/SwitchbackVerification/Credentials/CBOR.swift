public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// A CBOR data item (RFC 8949), as ISO/IEC 18013-5 mdoc credentials are written: what an OpenID4VP verifier
/// reads from a wallet's `DeviceResponse` and writes to check its signatures (COSE `Sig_structure`,
/// `SessionTranscript`, `DeviceAuthentication`).
public indirect enum CBOR: Sendable, Equatable {
    // Equality compares text by its UTF-8 bytes, as CBOR writes it, not by Unicode equivalence as `String`
    // does: a map key or a namespace written otherwise is another key (see `==` below).
    case unsigned(UInt64)
    /// The integer -1 - n.
    case negative(UInt64)
    case bytes(Data)
    case text(String)
    case array([CBOR])
    /// Keys and values in the order they were written (COSE headers and mdoc maps are small).
    case map([Pair])
    case tagged(UInt64, CBOR)
    case bool(Bool)
    case null
    case undefined
    case float(Double)

    public struct Pair: Sendable, Equatable {
        public var key: CBOR
        public var value: CBOR

        public init(_ key: CBOR, _ value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// An integer item.
    public static func int(_ value: Int) -> CBOR { value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value)) }

    /// The integer this item is, when it is one that fits an `Int`.
    public var int: Int? {
        switch self {
        case .unsigned(let value): value <= UInt64(Int.max) ? Int(value) : nil
        case .negative(let value): value <= UInt64(Int.max) ? -1 - Int(value) : nil
        default: nil
        }
    }

    public var text: String? { if case .text(let value) = self { value } else { nil } }
    public var bytes: Data? { if case .bytes(let value) = self { value } else { nil } }
    public var array: [CBOR]? { if case .array(let value) = self { value } else { nil } }

    /// The value under `key` in a map (nil for anything else, or a key it does not have).
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    public subscript(key: String) -> CBOR? { self[.text(key)] }

    /// The bytes an "embedded CBOR" item (tag 24 over a byte string, RFC 8949 §3.4.5.1) wraps.
    public var embedded: Data? {
        if case .tagged(24, .bytes(let inner)) = self { inner } else { nil }
    }
}

/// Why bytes are not one CBOR item this reader takes.
public struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension CBOR {
    /// Deeper items are refused; an mdoc `DeviceResponse` nests about eight levels.
    public static let maximumDepth = 24
    /// Larger maps are refused; an mdoc's largest (the digests of one namespace) has tens of pairs.
    public static let maximumMapSize = 4096

    /// The one item `data` holds. Refused: trailing bytes, a truncated item, indefinite lengths, a map key
    /// given twice, text that is not UTF-8, reserved encodings, nesting deeper than ``maximumDepth``, a
    /// length longer than what is left, and embedded CBOR (tag 24) whose heads are not the shortest, since
    /// its bytes are hashed as ``encoded`` writes them again.
    public static func decode(_ data: Data) throws -> CBOR {
        try data.withUnsafeBytes { buffer in
            var reader = Reader(bytes: buffer)
            let item = try reader.item(depth: 0)
            guard reader.index == buffer.count else { throw CBORError("bytes follow the CBOR item") }
            return item
        }
    }

    /// The item, written with the shortest lengths (RFC 8949 §4.1's preferred serialization) and its maps
    /// in their order.
    public var encoded: Data {
        var out = Data()
        encode(into: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, into out: inout Data) {
        let type = major << 5
        switch value {
        case 0..<24: out.append(type | UInt8(value))
        case 24...0xFF: out.append(contentsOf: [type | 24, UInt8(value)])
        case 0x100...0xFFFF:
            out.append(type | 25)
            out.append(contentsOf: withUnsafeBytes(of: UInt16(value).bigEndian, Array.init))
        case 0x1_0000...0xFFFF_FFFF:
            out.append(type | 26)
            out.append(contentsOf: withUnsafeBytes(of: UInt32(value).bigEndian, Array.init))
        default:
            out.append(type | 27)
            out.append(contentsOf: withUnsafeBytes(of: value.bigEndian, Array.init))
        }
    }

    private func encode(into out: inout Data) {
        switch self {
        case .unsigned(let value): Self.head(0, value, into: &out)
        case .negative(let value): Self.head(1, value, into: &out)
        case .bytes(let value):
            Self.head(2, UInt64(value.count), into: &out)
            out.append(value)
        case .text(let value):
            let utf8 = Data(value.utf8)
            Self.head(3, UInt64(utf8.count), into: &out)
            out.append(utf8)
        case .array(let items):
            Self.head(4, UInt64(items.count), into: &out)
            for item in items { item.encode(into: &out) }
        case .map(let pairs):
            Self.head(5, UInt64(pairs.count), into: &out)
            for pair in pairs {
                pair.key.encode(into: &out)
                pair.value.encode(into: &out)
            }
        case .tagged(let tag, let item):
            Self.head(6, tag, into: &out)
            item.encode(into: &out)
        case .bool(let value): out.append(value ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case .float(let value):
            out.append(0xFB)
            out.append(contentsOf: withUnsafeBytes(of: value.bitPattern.bigEndian, Array.init))
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        mutating func take(_ count: Int) throws -> UnsafeRawBufferPointer {
            guard count >= 0, count <= bytes.count - index else { throw CBORError("the CBOR item is cut short") }
            defer { index += count }
            return UnsafeRawBufferPointer(rebasing: bytes[index..<index + count])
        }

        mutating func number(_ count: Int) throws -> UInt64 {
            try take(count).reduce(0) { $0 << 8 | UInt64($1) }
        }

        /// The argument of a head whose low five bits are `info`.
        mutating func argument(_ info: UInt8) throws -> UInt64 {
            switch info {
            case 0..<24: UInt64(info)
            case 24: try number(1)
            case 25: try number(2)
            case 26: try number(4)
            case 27: try number(8)
            case 31: throw CBORError("indefinite lengths are not taken")
            default: throw CBORError("a reserved CBOR encoding")
            }
        }

        mutating func length(_ info: UInt8) throws -> Int {
            let value = try argument(info)
            guard value <= UInt64(bytes.count - index) else { throw CBORError("a CBOR length is longer than what follows") }
            return Int(value)
        }

        mutating func item(depth: Int) throws -> CBOR {
            guard depth <= CBOR.maximumDepth else { throw CBORError("CBOR nested deeper than \(CBOR.maximumDepth)") }
            let initial = try take(1)[0]
            let (major, info) = (initial >> 5, initial & 0x1F)
            switch major {
            case 0: return .unsigned(try argument(info))
            case 1: return .negative(try argument(info))
            case 2: return .bytes(Data(try take(try length(info))))
            case 3:
                guard let text = String(validating: try take(try length(info)), as: UTF8.self) else {
                    throw CBORError("a CBOR text string is not UTF-8")
                }
                return .text(text)
            case 4:
                // Every item takes at least one byte, so a count past what is left is refused; the capacity
                // reserved is bounded all the same, since nested arrays would each reserve their count.
                let count = try length(info)
                var items: [CBOR] = []
                items.reserveCapacity(min(count, 256))
                for _ in 0..<count { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                let count = try length(info)
                guard count <= CBOR.maximumMapSize else { throw CBORError("a CBOR map has more than \(CBOR.maximumMapSize) pairs") }
                var pairs: [Pair] = []
                pairs.reserveCapacity(min(count, 64))
                // Duplicates are told by the keys' shortest encodings, in one pass: comparing each key with every
                // earlier one made a 150 KB map cost seconds, and comparing the bytes as written let one key
                // written with a longer head than needed (`18 00` beside `00`) pass as another (found by fuzzing).
                var seen: Set<Data> = []
                for _ in 0..<count {
                    let key = try item(depth: depth + 1)
                    guard seen.insert(key.encoded).inserted else { throw CBORError("a CBOR map has a key twice") }
                    pairs.append(Pair(key, try item(depth: depth + 1)))
                }
                return .map(pairs)
            case 6:
                let start = index - 1
                let tag = try argument(info)
                let tagged = CBOR.tagged(tag, try item(depth: depth + 1))
                // Embedded CBOR is hashed and signed as it is written again (mdoc digests, COSE payloads):
                // one written with longer lengths than needed would hash otherwise than it was sent.
                guard tag != 24 || tagged.encoded.elementsEqual(bytes[start..<index]) else {
                    throw CBORError("embedded CBOR is written with non-shortest lengths")
                }
                return tagged
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 23: return .undefined
                case 25: return .float(Self.half(UInt16(try number(2))))
                case 26: return .float(Double(Float(bitPattern: UInt32(try number(4)))))
                case 27: return .float(Double(bitPattern: try number(8)))
                default: throw CBORError("a CBOR simple value this reader does not take")
                }
            }
        }

        /// An IEEE 754 half-precision number (RFC 8949 Appendix D), without `Float16`, which Intel Macs lack.
        static func half(_ bits: UInt16) -> Double {
            let exponent = Int(bits >> 10) & 0x1F
            let mantissa = Double(bits & 0x3FF)
            let magnitude: Double =
                switch exponent {
                case 0: mantissa * 0x1p-24
                case 31: mantissa == 0 ? .infinity : .nan
                default: (1 + mantissa / 1024) * Double(sign: .plus, exponent: exponent - 15, significand: 1)
                }
            return bits & 0x8000 == 0 ? magnitude : -magnitude
        }
    }
}

extension CBOR {
    /// Items are equal when they are written alike: text by its UTF-8 bytes (`"K"` is not the Kelvin sign),
    /// maps by their pairs in order.
    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): a == b
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a.utf8.elementsEqual(b.utf8)
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a == b
        case (.tagged(let t, let a), .tagged(let u, let b)): t == u && a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null), (.undefined, .undefined): true
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        default: false
        }
    }
}

extension CBOR: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
}
