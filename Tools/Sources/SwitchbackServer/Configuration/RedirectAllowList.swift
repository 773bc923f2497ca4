public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Where the server may send a browser after a hand-off: a `goto` is followed only when it is an
/// absolute http(s) URL whose origin (scheme, host, port) equals an allowed entry's exactly and whose
/// path starts with that entry's path at a segment boundary. Everything that browsers or URL parsers
/// read differently — user-info, backslashes, encoded slashes or dots, control characters, non-ASCII
/// hosts, scheme-relative or other-scheme URLs — is refused outright.
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
        // Characters parsers disagree on are refused before any parsing.
        guard !text.isEmpty, text.utf8.count <= 2048, text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value != 0x7F }),
            !text.contains("\\")
        else { return nil }
        let lowered = text.lowercased()
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://") else { return nil }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(),
            !host.isEmpty, components.user == nil, components.password == nil
        else { return nil }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        // Encoded separators or dots, and dot segments, could name another path after decoding.
        let encoded = path.lowercased()
        guard path.hasPrefix("/"), !encoded.contains("%2f"), !encoded.contains("%5c"), !encoded.contains("%2e"),
            !path.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0 == "." || $0 == ".." }), !path.contains("//")
        else { return nil }
        if !allowQuery, components.percentEncodedQuery != nil || components.percentEncodedFragment != nil { return nil }
        guard scheme == "https" || EndpointSecurity.isLoopback(host) else { return nil }
        return Entry(scheme: scheme, host: host, port: components.port ?? (scheme == "https" ? 443 : 80), path: path)
    }
}
