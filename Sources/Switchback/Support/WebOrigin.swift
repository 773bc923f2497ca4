public import Foundation

@_spi(SwitchbackInternals)
extension URL {
    /// The URL's origin as a browser serialises it (`Origin` headers, CSP sources): `scheme://host[:port]`,
    /// lower-case, the default port left out and an IPv6 host bracketed.
    public var webOrigin: String {
        let scheme = scheme?.lowercased() ?? ""
        let host = host?.lowercased() ?? ""
        let port = port.flatMap { (scheme == "https" && $0 == 443) || (scheme == "http" && $0 == 80) ? nil : $0 }
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)\(port.map { ":\($0)" } ?? "")"
    }
}
