import Foundation
@_spi(SwitchbackInternals) import Switchback

/// What a PostgreSQL URL's `sslmode` (and `sslrootcert`) ask for, with libpq's meanings (PostgreSQL
/// "SSL Support", table "SSL Mode Descriptions"): `disable` no TLS; `allow` and `prefer` (libpq's default)
/// TLS when the server offers it, which someone on the path can refuse; `require` TLS without checking the
/// certificate (unless `sslrootcert` names a CA, which makes it `verify-ca`, as in libpq); `verify-ca` the
/// certificate chains to a trusted CA; `verify-full` that, and it names the host. An unknown or repeated
/// `sslmode` is refused. Beyond loopback only a verified server is accepted: `verify-full`, or `verify-ca`
/// (or `require`) with `sslrootcert`. Anything less lets someone on the path answer the store's queries,
/// and read the password the server may ask for in clear text: `require` checks no certificate, and
/// `verify-ca` without a root file would check the chain against every publicly trusted CA and not the
/// host, which libpq never does (without `sslrootcert` it reads its own `root.crt`, and
/// `sslrootcert=system` needs `verify-full`).
enum PostgresTLS: Equatable {
    case disable
    case prefer
    case require(Verification, rootCertificate: String?)

    enum Verification: Equatable {
        case none
        case certificate
        case certificateAndHost
    }

    init(_ components: URLComponents) throws {
        let items = components.queryItems ?? []
        let modes = items.filter { $0.name == "sslmode" }
        let roots = items.filter { $0.name == "sslrootcert" }
        guard modes.count <= 1, roots.count <= 1 else {
            throw SwitchbackError(.invalidConfiguration, "the PostgreSQL URL names sslmode or sslrootcert twice")
        }
        let mode = modes.first?.value ?? "prefer"
        let root = roots.first?.value
        if let root, root.isEmpty || !FileManager.default.isReadableFile(atPath: root) {
            throw SwitchbackError(.invalidConfiguration, "the PostgreSQL URL's sslrootcert is not a readable file")
        }
        let loopback = EndpointSecurity.isLoopback(components.host)
        func needsTLS() -> SwitchbackError {
            SwitchbackError(
                .invalidConfiguration,
                "the database \(components.host ?? "") is beyond loopback and sslmode=\(mode)\(mode.hasPrefix("verify") || mode == "require" ? " without sslrootcert" : "") does not verify who answers: someone on the path could read the password and answer the store's queries. Use sslmode=verify-full"
            )
        }
        switch mode {
        case "disable":
            guard loopback else { throw needsTLS() }
            self = .disable
        case "allow", "prefer":
            guard loopback else { throw needsTLS() }
            self = .prefer
        case "require":
            guard loopback || root != nil else { throw needsTLS() }
            self = .require(root == nil ? .none : .certificate, rootCertificate: root)
        case "verify-ca":
            // Without a root file the chain would be checked against the whole system store and the host
            // not at all: a publicly issued certificate for any name would pass.
            guard loopback || root != nil else { throw needsTLS() }
            self = .require(.certificate, rootCertificate: root)
        case "verify-full":
            self = .require(.certificateAndHost, rootCertificate: root)
        default:
            throw SwitchbackError(
                .invalidConfiguration, "the PostgreSQL URL's sslmode must be disable, allow, prefer, require, verify-ca or verify-full")
        }
    }
}
