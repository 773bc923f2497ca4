public import Foundation

/// A strict JSON reader (RFC 8259) for the small documents inside tokens: a JWS header and its claims.
/// Reading them with Foundation's `JSONDecoder` took a quarter of an RS256 validation (Documentation/Decisions/0001-own-json-reader.md).
///
/// It decides as Foundation's decoder does, and reads to the same values: RFC 8259's grammar, plus the one
/// leniency Foundation has, a trailing comma in an object or an array; a number that does not fit a
/// `Double` (too large, or too small to be told from zero) is refused as Foundation refuses it. It refuses
/// more than Foundation where tokens call for it:
/// - a member name twice in one object (RFC 7519 §4 lets a JWT reader refuse it; Foundation keeps the
///   first, which another reader of the same token may not);
/// - nesting deeper than ``maximumDepth``;
/// - anything but UTF-8 (Foundation also reads UTF-16 and UTF-32, told by their zero bytes), and a byte
///   order mark: a token's JSON is UTF-8 (RFC 7519 §7.1, RFC 8259 §8.1).
///
/// And it takes a zero written with an exponent in every spelling RFC 8259 allows, where Foundation
/// refuses some (`0e1`, `-0.0e-999`) and takes others (`0e+1`, `0e400`).
///
/// A test feeds both the same generated and mutated documents and compares verdicts and values
/// (`JSONReaderTests`).
@_spi(SwitchbackInternals) public enum JSONReader {
    /// Deeper documents are refused; claims and headers nest two or three levels.
    public static let maximumDepth = 64

    /// The object `bytes` holds, or nil when they are not exactly one JSON object (with white space around).
    public static func object(_ bytes: Data) -> [String: JSONValue]? { object(bytes, refusingDuplicates: true) }

    /// ``object(_:)``, with duplicate member names kept (the last one) when `refusingDuplicates` is false:
    /// for the test and the fuzz target that tell this refusal from any other difference with Foundation.
    @_spi(SwitchbackInternals) public static func object(_ bytes: Data, refusingDuplicates: Bool) -> [String: JSONValue]? {
        bytes.withUnsafeBytes { buffer in
            var reader = Reader(buffer)
            reader.refusingDuplicates = refusingDuplicates
            guard case .object(let members)? = reader.document() else { return nil }
            return members
        }
    }

    /// The members of the object `bytes` holds, with the verdicts of ``object(_:)``, kept as a list rather
    /// than a dictionary: a token's header and claims are a few names each read once or twice, and
    /// comparing short names costs less than hashing every one of them twice (Documentation/Decisions/0001-own-json-reader.md).
    public static func members(_ bytes: Data) -> JSONMembers? {
        bytes.withUnsafeBytes { members(buffer: $0) }
    }

    /// ``members(_:)`` of bytes in memory the caller holds.
    static func members(buffer: UnsafeRawBufferPointer) -> JSONMembers? {
        var reader = Reader(buffer)
        reader.skipSpace()
        guard reader.index < buffer.count, buffer[reader.index] == UInt8(ascii: "{") else { return nil }
        var list = JSONMembers.Builder()
        guard reader.members(into: &list) else { return nil }
        reader.skipSpace()
        return reader.index == buffer.count ? list.members : nil
    }

    /// The value `bytes` hold, or nil when they are not exactly one JSON value.
    public static func value(_ bytes: Data) -> JSONValue? {
        bytes.withUnsafeBytes { buffer in
            var reader = Reader(buffer)
            return reader.document()
        }
    }

    /// What collects an object's members as ``Reader`` reads them.
    protocol MemberSink {
        /// Keeps a member; false refuses it (a name given twice).
        mutating func add(_ name: String, _ value: JSONValue) -> Bool
    }

    /// Members into a dictionary, a repeated name refused or (for a test) kept.
    private struct DictionarySink: MemberSink {
        var members: [String: JSONValue]
        let refusingDuplicates: Bool

        mutating func add(_ name: String, _ value: JSONValue) -> Bool {
            members.updateValue(value, forKey: name) == nil || !refusingDuplicates
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0
        var depth = 0
        var refusingDuplicates = true

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        mutating func document() -> JSONValue? {
            skipSpace()
            guard let value = value() else { return nil }
            skipSpace()
            return index == bytes.count ? value : nil
        }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value() -> JSONValue? {
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object()
            case UInt8(ascii: "["): return array()
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            default: return number()
            }
        }

        mutating func literal(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
            let count = text.utf8CodeUnitCount
            guard bytes.count - index >= count else { return nil }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return nil }
            index += count
            return value
        }

        mutating func object() -> JSONValue? {
            // The document's own object gets room for a token's claims from the start (growing a dictionary
            // rehashes every member); nested ones grow as they go, so that many small objects cost little.
            var sink = DictionarySink(members: depth == 0 ? .init(minimumCapacity: 12) : [:], refusingDuplicates: refusingDuplicates)
            guard members(into: &sink) else { return nil }
            return .object(sink.members)
        }

        /// Reads the object at `index` (its `{` included), handing each member to `sink`, which answers false
        /// to refuse it (a name given twice). False when the object is malformed or a member was refused.
        /// Generic rather than a closure: a closure mutating a captured collector paid the runtime's
        /// exclusivity checks on every member.
        mutating func members<Sink: MemberSink>(into sink: inout Sink) -> Bool {
            depth += 1
            defer { depth -= 1 }
            guard depth <= JSONReader.maximumDepth else { return false }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return true
            }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let name = string() else { return false }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                skipSpace()
                guard let value = value(), sink.add(name, value) else { return false }
                skipSpace()
                guard index < bytes.count else { return false }
                switch bytes[index] {
                case UInt8(ascii: ","):
                    index += 1
                    // A trailing comma, as Foundation's decoder takes it.
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                        index += 1
                        return true
                    }
                case UInt8(ascii: "}"):
                    index += 1
                    return true
                default: return false
                }
            }
        }

        mutating func array() -> JSONValue? {
            depth += 1
            defer { depth -= 1 }
            guard depth <= JSONReader.maximumDepth else { return nil }
            index += 1
            var elements: [JSONValue] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipSpace()
                guard let value = value() else { return nil }
                elements.append(value)
                skipSpace()
                guard index < bytes.count else { return nil }
                switch bytes[index] {
                case UInt8(ascii: ","):
                    index += 1
                    skipSpace()
                    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                        index += 1
                        return .array(elements)
                    }
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(elements)
                default: return nil
                }
            }
        }

        /// A string at `index` (its opening quote): plain ASCII is taken as it stands; escapes and other
        /// UTF-8 go through the slow path, which also checks that the UTF-8 is well formed.
        mutating func string() -> String? {
            let start = index + 1
            var end = start
            var plain = true
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 { return nil }
                if byte == UInt8(ascii: "\\") || byte >= 0x80 {
                    plain = false
                    break
                }
                end += 1
            }
            if plain {
                guard end < bytes.count else { return nil }
                index = end + 1
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
            var scalars: [UInt8] = []
            scalars.reserveCapacity(end - start + 16)
            scalars.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            index = end
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return String(decoding: scalars, as: UTF8.self)
                case ..<0x20:
                    return nil
                case UInt8(ascii: "\\"):
                    guard index + 1 < bytes.count else { return nil }
                    index += 2
                    switch bytes[index - 1] {
                    case UInt8(ascii: "\""): scalars.append(UInt8(ascii: "\""))
                    case UInt8(ascii: "\\"): scalars.append(UInt8(ascii: "\\"))
                    case UInt8(ascii: "/"): scalars.append(UInt8(ascii: "/"))
                    case UInt8(ascii: "b"): scalars.append(0x08)
                    case UInt8(ascii: "f"): scalars.append(0x0C)
                    case UInt8(ascii: "n"): scalars.append(0x0A)
                    case UInt8(ascii: "r"): scalars.append(0x0D)
                    case UInt8(ascii: "t"): scalars.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = escapedScalar() else { return nil }
                        scalars.append(contentsOf: String(scalar).utf8)
                    default: return nil
                    }
                case ..<0x80:
                    scalars.append(byte)
                    index += 1
                default:
                    guard let length = wellFormedSequence(at: index) else { return nil }
                    scalars.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + length)]))
                    index += length
                }
            }
            return nil
        }

        /// The scalar of `\uXXXX` (after its `\u`), with the second half of a surrogate pair read too; a
        /// lone surrogate is refused.
        mutating func escapedScalar() -> Unicode.Scalar? {
            guard let first = hex4() else { return nil }
            switch first {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                index += 2
                guard let second = hex4(), (0xDC00...0xDFFF).contains(second) else { return nil }
                return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            default:
                // Nil for a lone second half (DC00–DFFF): not a scalar.
                return Unicode.Scalar(first)
            }
        }

        mutating func hex4() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// The length of the well-formed UTF-8 sequence at `start` (Unicode 15, table 3-7), or nil.
        func wellFormedSequence(at start: Int) -> Int? {
            let lead = bytes[start]
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                low = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                high = 0x9F
            case 0xF0:
                length = 4
                low = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                high = 0x8F
            default: return nil
            }
            guard bytes.count - start >= length else { return nil }
            guard (low...high).contains(bytes[start + 1]) else { return nil }
            for offset in 2..<max(length, 2) where !(0x80...0xBF).contains(bytes[start + offset]) { return nil }
            return length
        }

        /// A number (RFC 8259 §6); integers of up to 15 digits are read directly, others through `Double`'s
        /// parser. A number too large for a `Double`, or so small that it reads as zero though its digits
        /// are not, is refused, as Foundation refuses it.
        mutating func number() -> JSONValue? {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) {
                while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            } else {
                return nil
            }
            var integer = true
            var mantissaEnd = index
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integer = false
                index += 1
                guard digits() else { return nil }
                mantissaEnd = index
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                integer = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard digits() else { return nil }
            }
            let negative = bytes[start] == UInt8(ascii: "-")
            if integer, index - start - (negative ? 1 : 0) <= 15 {
                var value: Int64 = 0
                for position in (negative ? start + 1 : start)..<index { value = value * 10 + Int64(bytes[position] - UInt8(ascii: "0")) }
                return .number(negative ? -Double(value) : Double(value))
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { return nil }
            if value == 0, bytes[start..<mantissaEnd].contains(where: { (UInt8(ascii: "1")...UInt8(ascii: "9")).contains($0) }) { return nil }
            return .number(value)
        }

        /// One or more digits.
        mutating func digits() -> Bool {
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index > start
        }
    }
}

/// A JSON object's members read with the types `decodeIfPresent` gives them: absent or `null` is nil, a
/// value of another type is ``Mismatch``. Claims and headers read through ``JSONReader`` keep the verdicts
/// their `Decodable` types gave.
@_spi(SwitchbackInternals) public struct JSONMembers {
    public struct Mismatch: Error { public init() {} }

    /// A short object's members in order, looked up by comparing names; nil when ``index`` holds them.
    private let list: [Member]
    /// A longer object's members by name, so that a document of many members is not read in quadratic time.
    private let index: [String: JSONValue]?
    /// Up to this many members are kept as a list.
    static let listLimit = 16

    public init(_ values: [String: JSONValue]) {
        list = []
        index = values
    }

    /// Every member by name.
    public var values: [String: JSONValue] { index ?? Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0.value) }) }

    /// One member of a list. A struct rather than a tuple: an array of tuples is destroyed element by
    /// element through the runtime's generic path, which showed in the profile.
    struct Member {
        let name: String
        let value: JSONValue
    }

    /// The member named `name`. Looked up with the dictionary's equality (canonical equivalence); in a list,
    /// names of another UTF-8 length are passed over first, which only a name with a canonical equivalent
    /// of another length could tell apart: the ASCII ones are `K`, `;` and `` ` ``, and no claim or header
    /// name is looked up with them.
    public subscript(_ name: String) -> JSONValue? {
        if let index { return index[name] }
        let length = name.utf8.count
        for member in list where member.name.utf8.count == length && member.name == name { return member.value }
        return nil
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Collects members as ``JSONReader/members(_:)`` reads them, refusing a name given twice.
    struct Builder: JSONReader.MemberSink {
        private var list: [Member] = []
        private var index: [String: JSONValue]?

        init() { list.reserveCapacity(JSONMembers.listLimit) }

        mutating func add(_ name: String, _ value: JSONValue) -> Bool {
            if index != nil { return index!.updateValue(value, forKey: name) == nil }
            for member in list where member.name == name { return false }
            list.append(Member(name: name, value: value))
            if list.count > JSONMembers.listLimit {
                index = Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0.value) })
                list = []
            }
            return true
        }

        var members: JSONMembers { JSONMembers(list: list, index: index) }
    }

    private init(list: [Member], index: [String: JSONValue]?) {
        self.list = list
        self.index = index
    }

    public func string(_ name: String) throws -> String? {
        switch self[name] {
        case nil, .null?: nil
        case .string(let value)?: value
        default: throw Mismatch()
        }
    }

    public func number(_ name: String) throws -> Double? {
        switch self[name] {
        case nil, .null?: nil
        case .number(let value)?: value
        default: throw Mismatch()
        }
    }

    public func strings(_ name: String) throws -> [String]? {
        switch self[name] {
        case nil, .null?: return nil
        case .array(let elements)?:
            return try elements.map {
                guard case .string(let value) = $0 else { throw Mismatch() }
                return value
            }
        default: throw Mismatch()
        }
    }

    /// A string or an array of strings (`aud`), as an array.
    public func stringOrStrings(_ name: String) throws -> [String]? {
        if case .string(let single)? = self[name] { return [single] }
        return try strings(name)
    }
}
