import Foundation

/// `application/x-www-form-urlencoded` encoding and decoding, and query-string parsing.
@_spi(SwitchbackInternals) public enum FormEncoding {
    /// Characters left unescaped in form values: RFC 3986 unreserved.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    @_spi(SwitchbackInternals) public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    @_spi(SwitchbackInternals) public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Parses `a=b&c=d` (query, fragment or form body). `+` means space only when `plusIsSpace`.
    /// Returns nil when a name or value is not valid percent-encoding.
    @_spi(SwitchbackInternals) public static func decode(_ text: String, plusIsSpace: Bool) -> [(String, String)]? {
        var fields: [(String, String)] = []
        // Split on the bytes `&` and `=`, as the WHATWG URL standard's parser does (a split by `Character`
        // would keep `&` with a combining mark after it, and costs grapheme breaking on every request).
        let utf8 = text.utf8
        var start = utf8.startIndex
        while start != utf8.endIndex {
            let end = utf8[start...].firstIndex(of: UInt8(ascii: "&")) ?? utf8.endIndex
            if start != end {
                let pair = text[start..<end]
                let equals = pair.utf8.firstIndex(of: UInt8(ascii: "="))
                guard let name = unescape(equals.map { pair[..<$0] } ?? pair, plusIsSpace: plusIsSpace),
                    let value = unescape(equals.map { pair[pair.utf8.index(after: $0)...] } ?? "", plusIsSpace: plusIsSpace)
                else { return nil }
                fields.append((name, value))
            }
            start = end == utf8.endIndex ? end : utf8.index(after: end)
        }
        return fields
    }

    /// Percent-decodes `text` byte by byte (Foundation's `removingPercentEncoding` goes through NSString on
    /// Linux and dominated the companion's profile). Nil for a malformed escape or bytes that are not UTF-8.
    private static func unescape(_ text: Substring, plusIsSpace: Bool) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "%") || ($0 == UInt8(ascii: "+") && plusIsSpace) }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high != utf8.endIndex else { return nil }
                let low = utf8.index(after: high)
                guard low != utf8.endIndex, let h = hexValue(utf8[high]), let l = hexValue(utf8[low]) else { return nil }
                bytes.append(h << 4 | l)
                index = utf8.index(after: low)
                continue
            }
            bytes.append(byte == UInt8(ascii: "+") && plusIsSpace ? UInt8(ascii: " ") : byte)
            index = utf8.index(after: index)
        }
        let decoded = String(decoding: bytes, as: UTF8.self)
        return decoded.utf8.elementsEqual(bytes) ? decoded : nil  // repaired bytes were not UTF-8
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
