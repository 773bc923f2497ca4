public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Where the server may send a browser after a hand-off: a `goto` is followed only when it is an
/// absolute http(s) URL whose origin (scheme, host, port) equals an allowed entry's exactly and whose
/// path starts with that entry's path at a segment boundary. Everything that browsers or URL parsers
/// read differently — user-info, backslashes, encoded slashes, dots or percent signs, control characters, non-ASCII or
/// percent-encoded hosts, scheme-relative or other-scheme URLs — is refused outright. A host is compared
/// as written (`encodedHost`, lowercased), never decoded.
public struct RedirectAllowList: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        let scheme: String
        let host: String
        let port: Int
        let path: String
    }

    let entries: [Entry]

    /// `urls` are the allowed origins with a path prefix, such as `https://web.example.com/app`.
    public init(_ urls: [String]) throws {
        entries = try urls.map { text in
            guard let entry = Self.parse(text) else {
                throw SwitchbackError(
                    .invalidConfiguration, "allow-list entry \(text.prefix(80)) is not an absolute http(s) URL without user-info, query or fragment")
            }
            return entry
        }
    }

    /// The URL to redirect to, or nil when `candidate` is not allowed.
    public func permits(_ candidate: String) -> URL? {
        guard let target = Self.parse(candidate, allowQuery: true), let url = URL(string: candidate) else { return nil }
        let allowed = entries.contains { entry in
            entry.scheme == target.scheme && entry.host == target.host && entry.port == target.port
                && (entry.path == "/" || target.path == entry.path
                    || target.path.hasPrefix(entry.path.hasSuffix("/") ? entry.path : entry.path + "/"))
        }
        return allowed ? url : nil
    }

    private static func parse(_ text: String, allowQuery: Bool = false) -> Entry? {
        // Characters parsers disagree on are refused before any parsing: anything but printable ASCII, and
        // backslashes. The checks read bytes: Foundation's substring search goes through NSString on Linux,
        // and this runs on every redeem.
        guard !text.isEmpty, text.utf8.count <= 2048, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }),
            hasPrefix(text, lowercased: "https://") || hasPrefix(text, lowercased: "http://")
        else { return nil }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.encodedHost?.lowercased(),
            !host.isEmpty, components.user == nil, components.password == nil
        else { return nil }
        // A port is 1 to 5 digits up to 65535: URLComponents reads one past Int's range as no port at all, which
        // would stand for the scheme's default while a browser refuses the URL (a fuzz finding).
        if let range = components.rangeOfPort {
            let digits = text[range]
            guard (1...5).contains(digits.utf8.count), digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let port = Int(digits), port <= 65535,
                components.port == port
            else { return nil }
        }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        guard isPlain(path) else { return nil }
        if !allowQuery, components.percentEncodedQuery != nil || components.percentEncodedFragment != nil { return nil }
        guard scheme == "https" || EndpointSecurity.isLoopback(host) else { return nil }
        return Entry(scheme: scheme, host: host, port: components.port ?? (scheme == "https" ? 443 : 80), path: path)
    }

    /// Whether `text` starts with `prefix` (lowercase ASCII) in any case.
    private static func hasPrefix(_ text: String, lowercased prefix: StaticString) -> Bool {
        let bytes = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        return ASCIICase.equals(text.utf8.prefix(bytes.count), lowercased: bytes)
    }

    /// A path that starts with `/` and could not name another path after decoding, once or twice: no encoded
    /// separator, dot or percent sign (`%2F`, `%5C`, `%2E`, `%25` in either case: `%252E` decodes to `%2E`),
    /// no empty segment (`//`) and no dot segment (`.`, `..`).
    private static func isPlain(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") && index + 2 < bytes.count {
            let encoded = (bytes[index + 1], bytes[index + 2] | 0x20)
            if encoded == (UInt8(ascii: "2"), UInt8(ascii: "f")) || encoded == (UInt8(ascii: "5"), UInt8(ascii: "c"))
                || encoded == (UInt8(ascii: "2"), UInt8(ascii: "e")) || encoded == (UInt8(ascii: "2"), UInt8(ascii: "5"))
            {
                return false
            }
        }
        for segment in bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if segment.isEmpty && segment.startIndex != bytes.count { return false }
            if segment.elementsEqual([UInt8(ascii: ".")]) || segment.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { return false }
        }
        return true
    }
}
