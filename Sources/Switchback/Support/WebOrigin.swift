public import Foundation

@_spi(SwitchbackInternals)
extension URL {
    /// The URL's origin as a browser serialises it (`Origin` headers, CSP sources): `scheme://host[:port]`,
    /// lower-case, the default port left out and an IPv6 host bracketed.
    public var webOrigin: String {
        let scheme = scheme?.lowercased() ?? ""
        let host = host?.lowercased() ?? ""
        let port = port.flatMap { (scheme == "https" && $0 == 443) || (scheme == "http" && $0 == 80) ? nil : $0 }
        return "\(scheme)://\(URLHost.bracketed(host))\(port.map { ":\($0)" } ?? "")"
    }
}

/// A host as a URL's authority writes it.
@_spi(SwitchbackInternals) public enum URLHost {
    /// `host` with an IPv6 address in brackets (RFC 3986 §3.2.2), once, and a zone index's `%` written
    /// `%25` (RFC 6874: `fe80::1%eth0` is `[fe80::1%25eth0]`): a name, an IPv4 address or an address
    /// already in brackets is returned as it is.
    public static func bracketed(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host.replacingOccurrences(of: "%", with: "%25"))]" : host
    }
}
