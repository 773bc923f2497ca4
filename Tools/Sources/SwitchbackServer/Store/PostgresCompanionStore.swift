public import Foundation
public import Logging
import NIOSSL
import PostgresNIO
@_spi(SwitchbackInternals) import Switchback

/// The companion's records in PostgreSQL, for several server instances behind a load balancer.
///
/// One table holds every kind. ``take(_:digest:now:)`` is one `DELETE … RETURNING` statement, so the
/// row lock makes it atomic across connections and instances. ``start()`` creates the table when it is
/// missing (instances starting together may both try) and ``stop()`` closes the pool.
///
/// ```swift
/// let store = try PostgresCompanionStore(url: "postgres://switchback@127.0.0.1:5432/switchback")
/// try await store.start()
/// ```
public final class PostgresCompanionStore: CompanionStore {
    public let table: String
    private let client: PostgresClient
    private let logger: Logger
    private let runner = RunTask()

    /// `url` is `postgres://user[:password]@host[:port]/database`; TLS is off unless `?sslmode=require`.
    /// `table` must be a plain lower-case SQL identifier.
    public init(url: String, table: String = "switchback_records", logger: Logger = Logger(label: "switchback.server.postgres")) throws {
        guard Self.isIdentifier(table) else {
            throw SwitchbackError(.invalidConfiguration, "the table name must match [a-z_][a-z0-9_]{0,62}")
        }
        self.table = table
        self.client = PostgresClient(configuration: try Self.configuration(url), backgroundLogger: logger)
        self.logger = logger
    }

    /// Starts the connection pool and creates the table and its expiry index when missing. Fails with
    /// ``SwitchbackError/Code/storeFailed`` when the server cannot be reached within `timeout`.
    public func start(timeout: Duration = .seconds(30)) async throws {
        runner.start { [client] in await client.run() }
        switch await within(timeout, { try await self.createSchema() }) {
        case .success:
            return
        case .failure(let error):
            await stop()
            throw SwitchbackError(.storeFailed, "PostgreSQL could not be prepared: \(Self.describe(error))")
        case nil:
            await stop()
            throw SwitchbackError(.storeFailed, "PostgreSQL could not be prepared: no connection within the start timeout")
        }
    }

    /// Creates the table and its index when missing. Instances starting together may race on the
    /// catalog (two `CREATE … IF NOT EXISTS` can still collide on its unique indexes): a collision means the
    /// other instance created it, so the statement is tried again. No lock is held across statements, so
    /// a start that times out leaves nothing behind that blocks the next one.
    private func createSchema() async throws {
        let statements: [PostgresQuery] = [
            """
            CREATE TABLE IF NOT EXISTS \(unescaped: table) (
                kind text NOT NULL, digest text NOT NULL, value bytea NOT NULL, expires_at timestamptz NOT NULL,
                PRIMARY KEY (kind, digest))
            """,
            "CREATE INDEX IF NOT EXISTS \(unescaped: table)_expiry ON \(unescaped: table) (expires_at)",
        ]
        for statement in statements {
            for attempt in 1...3 {
                do {
                    try await client.query(statement, logger: logger)
                    break
                } catch let error as PSQLError where attempt < 3 && ["23505", "42P07", "42710"].contains(error.serverInfo?[.sqlState] ?? "") {
                    continue
                }
            }
        }
    }

    /// Closes every connection.
    public func stop() async {
        await runner.stop()
    }

    public func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        let inserted = try await count(
            """
            INSERT INTO \(unescaped: table) (kind, digest, value, expires_at) VALUES (\(kind.rawValue), \(digest), \(value), \(expiresAt))
            ON CONFLICT DO NOTHING RETURNING 1
            """)
        guard inserted == 1 else { throw SwitchbackError(.storeFailed, "a \(kind.rawValue) record with this key already exists") }
    }

    public func take(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        try await value("DELETE FROM \(unescaped: table) WHERE kind = \(kind.rawValue) AND digest = \(digest) RETURNING value, expires_at", now: now)
    }

    public func read(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        try await value("SELECT value, expires_at FROM \(unescaped: table) WHERE kind = \(kind.rawValue) AND digest = \(digest)", now: now)
    }

    @discardableResult
    public func purge(now: Date) async throws -> Int {
        try await count("DELETE FROM \(unescaped: table) WHERE expires_at <= \(now) RETURNING 1")
    }

    public func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool {
        try await count(
            """
            UPDATE \(unescaped: table) SET value = \(value), expires_at = \(expiresAt)
            WHERE kind = \(kind.rawValue) AND digest = \(digest) AND expires_at > \(now) RETURNING 1
            """) == 1
    }

    public func count(_ kind: RecordKind, now: Date) async throws -> Int {
        do {
            var total = 0
            for try await (count) in try await client.query(
                "SELECT count(*) FROM \(unescaped: table) WHERE kind = \(kind.rawValue) AND expires_at > \(now)", logger: logger
            ).decode(Int.self) {
                total = count
            }
            return total
        } catch {
            throw SwitchbackError(.storeFailed, "PostgreSQL query failed: \(Self.describe(error))")
        }
    }

    /// The `LISTEN`/`NOTIFY` channel of this table.
    var channel: String { table + "_changes" }

    public func announce(_ kind: RecordKind, digest: String) async throws {
        _ = try await count("SELECT pg_notify(\(channel), \(kind.rawValue + " " + digest))")
    }

    /// Holds one pooled connection in `LISTEN` on the table's channel and reports each announcement.
    public func listen(_ changed: @escaping @Sendable (RecordKind, String) async -> Void) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: self.channel) { notifications in
                for try await notification in notifications {
                    let parts = notification.payload.split(separator: " ", maxSplits: 1)
                    guard parts.count == 2, let kind = RecordKind(rawValue: String(parts[0])) else { continue }
                    await changed(kind, String(parts[1]))
                }
            }
        }
    }

    // MARK: Queries

    private func value(_ query: PostgresQuery, now: Date) async throws -> Data? {
        do {
            var found: Data?
            for try await (value, expiresAt) in try await client.query(query, logger: logger).decode((Data, Date).self) where expiresAt > now {
                found = value
            }
            return found
        } catch {
            throw SwitchbackError(.storeFailed, "PostgreSQL query failed: \(Self.describe(error))")
        }
    }

    private func count(_ query: PostgresQuery) async throws -> Int {
        do {
            var rows = 0
            for try await _ in try await client.query(query, logger: logger) { rows += 1 }
            return rows
        } catch {
            throw SwitchbackError(.storeFailed, "PostgreSQL query failed: \(Self.describe(error))")
        }
    }

    /// The server's message without the query text or its bindings.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            return error.serverInfo?[.message].map { "\($0) (\(error.serverInfo?[.sqlState] ?? "?"))" } ?? "\(error.code)"
        }
        return "\(type(of: error))"
    }

    private static func isIdentifier(_ name: String) -> Bool {
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

    /// The pool's size: `pool_max_conns` in the URL (the name pgx gives it), 1 to 200, else 20 connections
    /// per instance (PostgresNIO's default). Each instance opens up to this many; mind the server's
    /// `max_connections` across instances.
    /// The URL parameters the store reads.
    static let parameters: Set<String> = ["sslmode", "sslrootcert", "pool_max_conns"]

    static func poolSize(_ components: URLComponents) throws -> Int {
        let given = (components.queryItems ?? []).filter { $0.name == "pool_max_conns" }
        guard let item = given.first else { return 20 }
        guard given.count == 1, let value = item.value.flatMap(Int.init), (1...200).contains(value) else {
            throw SwitchbackError(.invalidConfiguration, "the PostgreSQL URL's pool_max_conns must be given once, from 1 to 200")
        }
        return value
    }

    private static func tls(verification: PostgresTLS.Verification, rootCertificate: String?) -> TLSConfiguration {
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

/// The task running the connection pool, started once and cancelled on stop.
private struct RunTask: Sendable {
    private let task = LockedValue<Task<Void, Never>?>(nil)

    func start(_ body: @escaping @Sendable () async -> Void) {
        task.withLock { task in
            if task == nil { task = Task { await body() } }
        }
    }

    func stop() async {
        let running = task.withLock { task in
            defer { task = nil }
            return task
        }
        running?.cancel()
        await running?.value
    }
}
