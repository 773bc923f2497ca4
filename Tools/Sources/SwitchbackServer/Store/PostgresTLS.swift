import Foundation
@_spi(SwitchbackInternals) import Switchback

/// What a PostgreSQL URL's `sslmode` (and `sslrootcert`) ask for, with libpq's meanings (PostgreSQL
/// "SSL Support", table "SSL Mode Descriptions"): `disable` no TLS; `allow` and `prefer` (libpq's default)
/// TLS when the server offers it, which someone on the path can refuse; `require` TLS without checking the
/// certificate (unless `sslrootcert` names a CA, which makes it `verify-ca`, as in libpq); `verify-ca` the
/// certificate chains to a trusted CA; `verify-full` that, and it names the host. An unknown or repeated
/// `sslmode` is refused, and so is anything but TLS to a database beyond loopback, as http issuers are:
/// someone on the path could otherwise answer the store's queries.
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
                "the database \(components.host ?? "") is beyond loopback and sslmode=\(mode) lets someone on the path read or answer its queries: use sslmode=verify-full (or verify-ca with sslrootcert)"
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
            self = .require(root == nil ? .none : .certificate, rootCertificate: root)
        case "verify-ca":
            self = .require(.certificate, rootCertificate: root)
        case "verify-full":
            self = .require(.certificateAndHost, rootCertificate: root)
        default:
            throw SwitchbackError(
                .invalidConfiguration, "the PostgreSQL URL's sslmode must be disable, allow, prefer, require, verify-ca or verify-full")
        }
    }
}
