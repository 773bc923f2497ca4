public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Writes one flat JSON object (RFC 8259) member by member: strings, numbers, booleans; a nil value is left
/// out, as `encodeIfPresent` leaves it out. For the small records and answers written on every request
/// (the companion's hand-off grants and sessions), where Foundation's `JSONEncoder` cost several times the
/// rest of the encoding. What it writes, `JSONDecoder` and ``JSONReader`` read to the same values
/// (`JSONObjectWriterTests` and the companion's record tests hold it to that).
public struct JSONObjectWriter {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    public init() { bytes.reserveCapacity(256) }

    public mutating func add(_ name: String, _ value: String?) {
        guard let value else { return }
        begin(name)
        Self.append(string: value, to: &bytes)
    }

    /// A finite number. JSON has no other kind: a NaN or an infinity is written as a string, which every
    /// reader of a number refuses, so a record holding one fails to open rather than losing the member
    /// (`null` would read as absent, and an optional expiry would silently go).
    public mutating func add(_ name: String, _ value: Double?) {
        guard let value else { return }
        begin(name)
        guard value.isFinite else {
            Self.append(string: value.description, to: &bytes)
            return
        }
        // Swift's shortest text that reads back to the same Double ("1.5", "1e-07", "1e+16"), which is
        // JSON's number grammar; a whole number loses its ".0".
        let text = value.description.utf8
        let whole = text.count >= 2 && text.suffix(2).elementsEqual(".0".utf8)
        bytes += whole ? text.dropLast(2) : text[...]
    }

    public mutating func add(_ name: String, _ value: Int?) {
        guard let value else { return }
        begin(name)
        bytes += String(value).utf8
    }

    public mutating func add(_ name: String, _ value: Bool?) {
        guard let value else { return }
        begin(name)
        bytes += (value ? "true" : "false").utf8
    }

    /// The object written so far, closed.
    public func data() -> Data {
        var data = Data(capacity: bytes.count + 1)
        data.append(contentsOf: bytes)
        data.append(UInt8(ascii: "}"))
        return data
    }

    private mutating func begin(_ name: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        Self.append(string: name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\u00XX`, everything else as UTF-8.
    private static func append(string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0..<0x20:
                bytes += "\\u00".utf8
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0xF)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
