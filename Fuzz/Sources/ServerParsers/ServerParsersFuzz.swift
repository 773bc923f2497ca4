#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Foundation

/// The companion's parsers that the fuzz targets reach, with the properties checked inside this module, where
/// their internal types are visible. Each returns nil when the property holds, else what failed.
public enum ServerParsersFuzz {
    /// `ClientAddress` against `inet_pton` and against itself.
    public static func clientAddress(_ text: String) -> String? {
        let address = ClientAddress(text)
        if let address {
            // Its bucket names the same bucket when read again (an IPv6 /64 as its first address).
            let again = address.bucket.hasSuffix("::/64") ? ClientAddress(String(address.bucket.dropLast(3))) : ClientAddress(address.bucket)
            guard again?.bucket == address.bucket else { return "the bucket \(address.bucket) does not read back as itself" }
        }
        // A bare address (no brackets, port, zone or spaces) is read as inet_pton reads it.
        guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !text.contains("["), !text.contains("%")
        else { return nil }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let bytes = withUnsafeBytes(of: v4) { Array($0) }
            guard address?.bytes == bytes else {
                return "inet_pton reads \(text) as \(bytes), ClientAddress as \(String(describing: address?.bytes))"
            }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            var bytes = withUnsafeBytes(of: v6) { Array($0) }
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { bytes = Array(bytes.suffix(4)) }
            guard address?.bytes == bytes else {
                return "inet_pton reads \(text) as \(bytes), ClientAddress as \(String(describing: address?.bytes))"
            }
        } else if let address, text.filter({ $0 == ":" }).count != 1 {
            // One colon is IPv4 with a port, which inet_pton does not take.
            return "ClientAddress reads \(text) as \(address.bytes), which inet_pton refuses"
        }
        return nil
    }

    static let allowList = try! RedirectAllowList(["https://web.example.com/app", "https://other.example.org", "http://127.0.0.1:8080/local"])

    /// `RedirectAllowList.permits` against an independent reading of the authority as a browser does it (the
    /// WHATWG URL standard: the authority ends at `/`, `?`, `#` or `\`, user-info before its last `@`).
    public static func redirect(_ text: String) -> String? {
        guard let url = allowList.permits(text) else { return nil }
        let lowered = text.lowercased()
        let scheme = lowered.hasPrefix("https://") ? "https" : lowered.hasPrefix("http://") ? "http" : ""
        guard !scheme.isEmpty else { return "permitted a URL that is not http(s)" }
        let afterScheme = text.dropFirst(scheme.count + 3)
        let authority = afterScheme.prefix { !"/?#\\".contains($0) }
        guard !authority.contains("@") else { return "permitted a URL with user-info" }
        let rest = afterScheme.dropFirst(authority.count)
        var host = Substring(authority)
        var port = scheme == "https" ? 443 : 80
        if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            if !digits.isEmpty {  // `host:` is the scheme's default port
                guard let number = Int(digits) else { return "permitted an authority with a port that is not a number" }
                port = number
            }
        }
        let path = String(rest.prefix { !"?#".contains($0) })
        let entries: [(String, String, Int, String)] = [
            ("https", "web.example.com", 443, "/app"), ("https", "other.example.org", 443, "/"), ("http", "127.0.0.1", 8080, "/local"),
        ]
        let matches = entries.contains { entry in
            entry.0 == scheme && entry.1 == host.lowercased() && entry.2 == port
                && (entry.3 == "/" || path == entry.3 || path.hasPrefix(entry.3 + "/"))
        }
        guard matches else { return "permitted \(text), which a browser reads as host \(host), port \(port), path \(path)" }
        guard url.host?.lowercased() == host.lowercased() else { return "the URL returned names host \(url.host ?? "none")" }
        return nil
    }
}
