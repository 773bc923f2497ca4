import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
@_spi(SwitchbackInternals) import Switchback

// Connecting: the URL and its TLS read into PostgresNIO's configuration, and the first connection, tried
// again while the reason may pass.
extension PostgresCompanionStore {
    /// One connection of its own before the pool, so that a failure says why (refused, TLS, the role's
    /// password, no such database), where the pool would only try again until the timeout. A reason that
    /// may pass (``mayPass(_:)``: a server still starting, a name not yet resolvable) is tried again every
    /// half second until `deadline`, as a database started beside the companion needs; one that will not
    /// ends the start at once.
    func connectFirst(until deadline: ContinuousClock.Instant, timeout: Duration) async throws {
        var reason = "no answer"
        while ContinuousClock.now < deadline {
            switch await within(
                deadline - ContinuousClock.now, { [firstConnection, logger] in try await Self.connectOnce(firstConnection, logger: logger) })
            {
            case .success: return
            case .failure(let error):
                reason = Self.describe(error)
                guard Self.mayPass(error) else { throw SwitchbackError(.storeFailed, "PostgreSQL refused the first connection: \(reason)") }
                logger.notice("PostgreSQL refused a first connection; trying again", metadata: ["reason": "\(reason)"])
                try await Task.sleep(for: .milliseconds(500))
            case nil: break
            }
        }
        throw SwitchbackError(.storeFailed, "PostgreSQL accepted no connection within \(timeout): \(reason)")
    }

    /// Whether a failed first connection may work a moment later: a connection refused or cut (a server
    /// still starting, a name not yet in DNS), or the server's "starting up" or "shutting down" (57P03, as
    /// in a restart or a failover), "too many connections" (53300) or a connection failure class (08), as
    /// PostgreSQL's "Appendix A. PostgreSQL Error Codes" names them. Not the role, its password, the
    /// database, TLS or a setting, which only an operator changes.
    static func mayPass(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError else { return false }
        if let state = error.serverInfo?[.sqlState] { return state == "57P03" || state == "53300" || state.hasPrefix("08") }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown:
            return !(error.underlying is NIOSSLError || error.underlying is NIOSSLExtraError)
        default:
            return false
        }
    }

    /// Opens one connection as the pool would (host, port, role, password, database, TLS) and closes it.
    static func connectOnce(_ configuration: PostgresConnection.Configuration, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        // It answered: a failure to close it cleanly says nothing against the pool.
        try? await connection.close()
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 63, first == 0x5F || (0x61...0x7A).contains(first) else { return false }
        return name.utf8.allSatisfy { $0 == 0x5F || (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
    }

    static func configuration(_ url: String) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""), let host = components.host,
            !host.isEmpty, let user = components.user, !user.isEmpty
        else {
            throw SwitchbackError(.invalidConfiguration, "the PostgreSQL URL must look like postgres://user@host:5432/database")
        }
        // A parameter the store does not read would be silently ignored: a password there would not be used
        // (and `--print-config` redacts only the user info's), a libpq option would not apply.
        for item in components.queryItems ?? [] where !Self.parameters.contains(item.name) {
            let hint = item.name == "password" ? "; put the password in the user info or SWITCHBACK_POSTGRES_PASSWORD" : ""
            throw SwitchbackError(
                .invalidConfiguration,
                "the PostgreSQL URL's parameter \(item.name.prefix(40)) is not one the companion reads (\(Self.parameters.sorted().joined(separator: ", ")))\(hint)"
            )
        }
        let database = String(components.path.dropFirst())
        let tls: PostgresClient.Configuration.TLS
        switch try PostgresTLS(components) {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(Self.tls(verification: .none, rootCertificate: nil))
        case .require(let verification, let rootCertificate): tls = .require(Self.tls(verification: verification, rootCertificate: rootCertificate))
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password,
            database: database.isEmpty ? nil : database, tls: tls
        )
        configuration.options.maximumConnections = try poolSize(components)
        return configuration
    }

    /// The server, role, database and TLS of `pool` (made by ``configuration(_:)`` from `url`), for a single
    /// connection.
    static func connectionConfiguration(_ pool: PostgresClient.Configuration, url: String) throws -> PostgresConnection.Configuration {
        guard let host = pool.host, let port = pool.port, let components = URLComponents(string: url) else {
            throw SwitchbackError(.invalidConfiguration, "the PostgreSQL URL must name a host")
        }
        let tls: PostgresConnection.Configuration.TLS
        switch try PostgresTLS(components) {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try .init(configuration: Self.tls(verification: .none, rootCertificate: nil)))
        case .require(let verification, let rootCertificate):
            tls = .require(try .init(configuration: Self.tls(verification: verification, rootCertificate: rootCertificate)))
        }
        return PostgresConnection.Configuration(
            host: host, port: port, username: pool.username, password: pool.password, database: pool.database, tls: tls)
    }

    /// The URL parameters the store reads.
    static let parameters: Set<String> = ["sslmode", "sslrootcert", "pool_max_conns"]

    /// The pool's size: `pool_max_conns` in the URL (the name pgx gives it), 1 to 200, else 20 connections
    /// per instance (PostgresNIO's default). Each instance opens up to this many; mind the server's
    /// `max_connections` across instances.

    static func poolSize(_ components: URLComponents) throws -> Int {
        let given = (components.queryItems ?? []).filter { $0.name == "pool_max_conns" }
        guard let item = given.first else { return 20 }
        guard given.count == 1, let value = item.value.flatMap(Int.init), (1...200).contains(value) else {
            throw SwitchbackError(.invalidConfiguration, "the PostgreSQL URL's pool_max_conns must be given once, from 1 to 200")
        }
        return value
    }

    static func tls(verification: PostgresTLS.Verification, rootCertificate: String?) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch verification {
        case .none: configuration.certificateVerification = .none
        case .certificate: configuration.certificateVerification = .noHostnameVerification
        case .certificateAndHost: configuration.certificateVerification = .fullVerification
        }
        if let rootCertificate { configuration.trustRoots = .file(rootCertificate) }
        return configuration
    }
}
