import Foundation

/// `application/x-www-form-urlencoded` encoding and decoding, and query-string parsing.
package enum FormEncoding {
    /// Characters left unescaped in form values: RFC 3986 unreserved.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    package static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    package static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Parses `a=b&c=d` (query, fragment or form body). `+` means space only when `plusIsSpace`.
    /// Returns nil when a name or value is not valid percent-encoding.
    package static func decode(_ text: String, plusIsSpace: Bool) -> [(String, String)]? {
        var fields: [(String, String)] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = unescape(parts[0], plusIsSpace: plusIsSpace),
                let value = unescape(parts.count > 1 ? parts[1] : "", plusIsSpace: plusIsSpace)
            else { return nil }
            fields.append((name, value))
        }
        return fields
    }

    private static func unescape(_ text: Substring, plusIsSpace: Bool) -> String? {
        let spaced = plusIsSpace ? text.replacingOccurrences(of: "+", with: " ") : String(text)
        return spaced.removingPercentEncoding
    }
}
