public import Foundation
public import Logging
import NIOCore
import NIOSSL
import PostgresNIO
@_spi(SwitchbackInternals) import Switchback

/// The companion's records in PostgreSQL, for several server instances behind a load balancer.
///
/// One table, `switchback_records`, holds every kind. ``take(_:digest:now:)`` is one `DELETE … RETURNING`
/// statement, so the row lock makes it atomic across connections and instances. ``start()`` creates the
/// table when it is missing (instances starting together may both try) and ``stop()`` closes the pool.
///
/// The statements a request runs (insert, take, read, replace) are prepared once per connection
/// (`PostgresPreparedStatement`), so the server parses and plans them once rather than on every request;
/// their text is therefore fixed, and the table is named without a schema. A deployment or a test that
/// keeps its records apart in a shared database gives `schema`, which the connections search.
///
/// Inserts and takes, the statements of every hand-off, are batched under load (``BatchQueue``): while
/// ``lanes`` statements of one kind are running, the requests that arrive wait and then go together, up to
/// ``largest`` in one statement that writes or deletes each row by its own key. Each request still gets
/// its own answer (a key inserted twice in one batch is inserted once; a code taken twice in one batch is
/// taken by one of them), and a request that finds a lane free goes at once, alone.
///
/// ```swift
/// let store = try PostgresCompanionStore(url: "postgres://switchback@127.0.0.1:5432/switchback")
/// try await store.start()
/// ```
public final class PostgresCompanionStore: CompanionStore {
    /// The schema that holds the table, or nil for the role's own `search_path` (`public`, usually).
    public let schema: String?
    /// The table every record lives in.
    public static let table = "switchback_records"
    /// How many inserts, and how many takes, may be running at once; more requests wait and go together.
    public static let lanes = 2
    /// How many requests one batched statement carries at most.
    public static let largest = 64
    /// How many inserts, and how many takes, may wait for a lane at once; one more fails at once with
    /// ``SwitchbackError/Code/storeFailed`` (503 from the routes), so that a flood sheds load rather than
    /// queueing without bound. That is 40 full statements' worth of requests.
    public static let queued = 2_560
    /// How long an insert or take statement may go unanswered before its requests fail and its lane is free.
    public static let deadline = Duration.seconds(10)
    let client: PostgresClient
    private let pool: Pool
    let logger: Logger
    /// The settings of the one connection a start opens before the pool (``start(timeout:)``).
    private let firstConnection: PostgresConnection.Configuration
    private let runner = RunTask()
    private let inserts: BatchedStatement<Statements.Insert, Bool>
    private let takes: BatchedStatement<Statements.Take, (Data, Date)?>

    /// The keys records are sealed under: the same on every instance that shares the table.
    public let recordKeys: RecordKeys

    /// `url` is `postgres://user[:password]@host[:port]/database`; `sslmode` there means what it means to
    /// libpq. `schema`, when given, must be a plain lower-case SQL identifier of at most 36 characters; it is
    /// created when missing and is the only schema the connections search. `recordKeys` must be the same on
    /// every instance sharing the table (the configuration's `recordKeys`); the default, a key of this
    /// process, suits one instance.
    public init(
        url: String, schema: String? = nil, recordKeys: RecordKeys = .random(), logger: Logger = Logger(label: "switchback.server.postgres")
    ) throws {
        self.recordKeys = recordKeys
        if let schema {
            guard Self.isIdentifier(schema), schema.utf8.count <= 36, !schema.hasPrefix("pg_") else {
                throw SwitchbackError(.invalidConfiguration, "the schema name must match [a-z_][a-z0-9_]{0,35} and not begin with pg_")
            }
        }
        self.schema = schema
        var configuration = try Self.configuration(url)
        firstConnection = try Self.connectionConfiguration(configuration, url: url)
        if let schema { configuration.options.additionalStartupParameters.append(("search_path", schema)) }
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let pool = Pool(client: client, logger: logger)
        self.client = client
        self.pool = pool
        self.logger = logger
        self.inserts = BatchedStatement(lanes: Self.lanes, largest: Self.largest, queued: Self.queued, deadline: Self.deadline) {
            try await Self.insert($0, pool: pool, logger: logger)
        }
        self.takes = BatchedStatement(lanes: Self.lanes, largest: Self.largest, queued: Self.queued, deadline: Self.deadline) {
            try await Self.take($0, pool: pool, logger: logger)
        }
    }

    /// Starts the connection pool, creates the table and its expiry index when missing and the role may, and
    /// checks the table's columns, key and grants. Fails with ``SwitchbackError/Code/storeFailed`` when the
    /// server accepts no connection within `timeout`, refuses one for a reason that will not pass, or the
    /// table is not ready within another `timeout` or cannot serve (the message says what to change).
    public func start(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        try await connectFirst(until: deadline, timeout: timeout)
        runner.start { [client] in await client.run() }
        // The first connection can use up most of the timeout on a database still starting; the table gets
        // a timeout of its own (as before the first connection), so a start takes at most twice `timeout`.
        switch await within(timeout, { try await self.prepareTable() }) {
        case .success:
            return
        case .failure(let error):
            await stop()
            let reason = (error as? SwitchbackError)?.message ?? Self.describe(error)
            throw SwitchbackError(.storeFailed, "PostgreSQL could not be prepared: \(reason)")
        case nil:
            await stop()
            throw SwitchbackError(.storeFailed, "PostgreSQL could not be prepared: no connection within the start timeout")
        }
    }

    /// Closes every connection.
    public func stop() async {
        await runner.stop()
    }

    public func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        let inserted = try await inserts(Statements.Insert(kind: kind.rawValue, digest: digest, value: value, expiresAt: expiresAt))
        guard inserted else { throw SwitchbackError(.storeFailed, "a \(kind.rawValue) record with this key already exists") }
    }

    public func take(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        guard let (value, expiresAt) = try await takes(Statements.Take(kind: kind.rawValue, digest: digest)), expiresAt > now else { return nil }
        return value
    }

    public func read(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        try await value(of: Statements.Read(kind: kind.rawValue, digest: digest), now: now)
    }

    /// Skips rows another statement holds (a batched take of an expired code, say): it never waits for a row
    /// lock, so it cannot deadlock with the batches, and the next purge drops what this one skipped.
    @discardableResult
    public func purge(now: Date) async throws -> Int {
        let table = Self.table
        return try await count(
            """
            DELETE FROM \(unescaped: table) WHERE (kind, digest) IN
                (SELECT kind, digest FROM \(unescaped: table) WHERE expires_at <= \(now) FOR UPDATE SKIP LOCKED) RETURNING 1
            """)
    }

    public func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool {
        try await rows(of: Statements.Replace(kind: kind.rawValue, digest: digest, value: value, expiresAt: expiresAt, now: now)) == 1
    }

    public func count(_ kind: RecordKind, now: Date) async throws -> Int {
        try await Self.reporting {
            var total = 0
            for try await (count) in try await client.query(
                "SELECT count(*) FROM \(unescaped: Self.table) WHERE kind = \(kind.rawValue) AND expires_at > \(now)", logger: logger
            ).decode(Int.self) {
                total = count
            }
            return total
        }
    }

    /// The `LISTEN`/`NOTIFY` channel of this table: channels are the database's, not a schema's, so a
    /// schema names its own.
    var channel: String { (schema.map { $0 + "_" } ?? "") + Self.table + "_changes" }

    public func announce(_ kind: RecordKind, digest: String) async throws {
        _ = try await count("SELECT pg_notify(\(channel), \(kind.rawValue + " " + digest))")
    }

    /// Holds one pooled connection in `LISTEN` on the table's channel and reports each announcement.
    public func listen(
        started: @escaping @Sendable () async -> Void, _ changed: @escaping @Sendable (RecordKind, String) async -> Void
    ) async throws {
        try await client.withConnection { connection in
            try await connection.listen(on: self.channel) { notifications in
                // PostgresNIO hands the notifications over once the server has run `LISTEN`.
                await started()
                for try await notification in notifications {
                    let parts = notification.payload.split(separator: " ", maxSplits: 1)
                    guard parts.count == 2, let kind = RecordKind(rawValue: String(parts[0])) else { continue }
                    await changed(kind, String(parts[1]))
                }
            }
        }
    }

    /// How many insert and take statements have run since the store started, and how many requests they
    /// carried: their ratio is how much batching saved (the benchmark prints it).
    public var batching: (statements: Int, requests: Int) {
        let (inserts, takes) = (inserts.finished, takes.finished)
        return (inserts.statements + takes.statements, inserts.requests + takes.requests)
    }

    // MARK: Queries

    /// Inserts a batch: whether each item was inserted. Of items with one key, only the first can be.
    private static func insert(_ items: [Statements.Insert], pool: Pool, logger: Logger) async throws -> [Bool] {
        if items.count == 1 {
            return try await pool.run(Statements.Insert.self) { connection in [try await counted(connection.execute(items[0], logger: logger)) == 1] }
        }
        return try await pool.run(Statements.InsertBatch.self) { connection in
            let batch = Statements.InsertBatch(items)
            var inserted = Set<Statements.Key>()
            for try await (kind, digest) in try await connection.execute(batch, logger: logger) {
                inserted.insert(Statements.Key(kind: kind, digest: digest))
            }
            return items.map { inserted.remove($0.key) != nil }
        }
    }

    /// Takes a batch: each item's value and expiry, or nil. Of items with one key, only the first gets it.
    private static func take(_ items: [Statements.Take], pool: Pool, logger: Logger) async throws -> [(Data, Date)?] {
        if items.count == 1 {
            return try await pool.run(Statements.Take.self) { connection in
                var row: (Data, Date)?
                for try await found in try await connection.execute(items[0], logger: logger) { row = found }
                return [row]
            }
        }
        return try await pool.run(Statements.TakeBatch.self) { connection in
            var taken: [Statements.Key: (Data, Date)] = [:]
            for try await (kind, digest, value, expiresAt) in try await connection.execute(Statements.TakeBatch(items), logger: logger) {
                taken[Statements.Key(kind: kind, digest: digest)] = (value, expiresAt)
            }
            return items.map { taken.removeValue(forKey: $0.key) }
        }
    }

    private func value<Statement: PostgresPreparedStatement>(of statement: Statement, now: Date) async throws -> Data?
    where Statement.Row == (Data, Date) {
        try await pool.run(Statement.self) { [logger] connection in
            var found: Data?
            for try await (value, expiresAt) in try await connection.execute(statement, logger: logger) where expiresAt > now {
                found = value
            }
            return found
        }
    }

    private func rows<Statement: PostgresPreparedStatement>(of statement: Statement) async throws -> Int {
        try await pool.run(Statement.self) { [logger] connection in try await Self.counted(connection.execute(statement, logger: logger)) }
    }

    private func count(_ query: PostgresQuery) async throws -> Int {
        try await Self.reporting { try await Self.counted(client.query(query, logger: logger)) }
    }

    /// How many rows `rows` holds.
    private static func counted(_ rows: some AsyncSequence) async throws -> Int {
        var count = 0
        for try await _ in rows { count += 1 }
        return count
    }

    /// The pool, for the prepared statements. PostgresNIO keeps a statement's failed preparation for the
    /// connection's life: every later use of the statement there fails the same way at once, even when the
    /// cause is gone (a migration held the table past the role's `lock_timeout`, a dropped table was
    /// restored). So a statement that fails with the server's error on a connection where it never
    /// succeeded, which is how a failed preparation shows, closes that connection, and the pool opens a
    /// fresh one that prepares again. A statement that already ran there has been prepared (PostgresNIO
    /// never unprepares one), so its later errors (a `lock_timeout` on a row, a `statement_timeout`) are
    /// the execution's and keep the connection. At most one connection a second is closed this way, so a
    /// lasting fault (the table still missing) does not turn every request into a new connection.
    final class Pool: Sendable {
        private let client: PostgresClient
        private let logger: Logger
        private let lastClosed = LockedValue<ContinuousClock.Instant?>(nil)
        /// The statements that have run on each open connection, by the connection's ID.
        private let prepared = LockedValue<[PostgresConnection.ID: Set<String>]>([:])

        init(client: PostgresClient, logger: Logger) {
            self.client = client
            self.logger = logger
        }

        /// Runs `work`, which runs `Statement`, on one connection; a failure is reported as `reporting`
        /// reports it.
        func run<Statement: PostgresPreparedStatement, Result: Sendable>(
            _ statement: Statement.Type, _ work: (PostgresConnection) async throws -> Result
        ) async throws -> Result {
            try await reporting {
                try await client.withConnection { connection in
                    do {
                        let result = try await work(connection)
                        ran(Statement.name, on: connection)
                        return result
                    } catch let error as PSQLError where error.code == .server {
                        if !hasRun(Statement.name, on: connection), mayClose() {
                            logger.notice(
                                "closing a PostgreSQL connection whose statement could not be prepared, so that a new one prepares it again",
                                metadata: ["sqlstate": "\(error.serverInfo?[.sqlState] ?? "?")"])
                            try? await connection.close()
                        }
                        throw error
                    }
                }
            }
        }

        private func ran(_ name: String, on connection: PostgresConnection) {
            let first = prepared.withLock { prepared in
                defer { prepared[connection.id, default: []].insert(name) }
                return prepared[connection.id] == nil
            }
            // The connection's entry goes with it.
            if first {
                let id = connection.id
                connection.closeFuture.whenComplete { [prepared] _ in _ = prepared.withLock { $0.removeValue(forKey: id) } }
            }
        }

        private func hasRun(_ name: String, on connection: PostgresConnection) -> Bool {
            prepared.withLock { $0[connection.id]?.contains(name) ?? false }
        }

        /// Whether a connection may be closed now: none was in the last second.
        private func mayClose() -> Bool {
            let now = ContinuousClock.now
            return lastClosed.withLock { last in
                if let last, now - last < .seconds(1) { return false }
                last = now
                return true
            }
        }
    }

    /// Runs a query's work, a failure reported as ``SwitchbackError/Code/storeFailed`` with the server's
    /// message and without the query's text or bindings.
    fileprivate static func reporting<Result>(_ work: () async throws -> Result) async throws -> Result {
        do {
            return try await work()
        } catch {
            throw SwitchbackError(.storeFailed, "PostgreSQL query failed: \(Self.describe(error))")
        }
    }

    /// The server's message and SQLSTATE, else the client's error code and the error under it (a refused
    /// connection, a TLS failure); neither carries the password.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return "\(message) (\(error.serverInfo?[.sqlState] ?? "?"))" }
            return "\(error.code)" + (error.underlying.map { ": \(String(describing: $0).prefix(300))" } ?? "")
        }
        return "\(type(of: error))"
    }

    /// One connection of its own before the pool, so that a failure says why (refused, TLS, the role's
    /// password, no such database), where the pool would only try again until the timeout. A reason that
    /// may pass (``mayPass(_:)``: a server still starting, a name not yet resolvable) is tried again every
    /// half second until `deadline`, as a database started beside the companion needs; one that will not
    /// ends the start at once.
    private func connectFirst(until deadline: ContinuousClock.Instant, timeout: Duration) async throws {
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
    private static func connectOnce(_ configuration: PostgresConnection.Configuration, logger: Logger) async throws {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        // It answered: a failure to close it cleanly says nothing against the pool.
        try? await connection.close()
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

    /// The server, role, database and TLS of `pool` (made by ``configuration(_:)`` from `url`), for a single
    /// connection.
    private static func connectionConfiguration(_ pool: PostgresClient.Configuration, url: String) throws -> PostgresConnection.Configuration {
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

/// The statements a request runs, prepared once per connection. Their text names the table without a
/// schema: the connection's `search_path` finds it. Each has a short name of its own: PostgreSQL cuts a
/// statement name to 63 bytes, and PostgresNIO's default (the type's full name) made all four the same
/// name there, so the second to be prepared on a connection failed with "already exists".
enum Statements {
    /// A statement that writes one record's value and expiry, and answers a row when it did.
    protocol Write: PostgresPreparedStatement, Keyed where Row == Int {
        var value: Data { get }
        var expiresAt: Date { get }
        /// The time a record must outlive to be written, for a statement that changes a live one.
        var now: Date? { get }
    }

    struct Insert: Write {
        static let name = "switchback_insert"
        static let sql = """
            INSERT INTO switchback_records (kind, digest, value, expires_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING 1
            """
        let kind: String
        let digest: String
        let value: Data
        let expiresAt: Date
        var now: Date? { nil }
    }

    struct Replace: Write {
        static let name = "switchback_replace"
        static let sql = """
            UPDATE switchback_records SET value = $3, expires_at = $4 WHERE kind = $1 AND digest = $2 AND expires_at > $5 RETURNING 1
            """
        let kind: String
        let digest: String
        let value: Data
        let expiresAt: Date
        let now: Date?
    }

    /// A statement that finds one record by its kind and digest and answers its value and expiry.
    protocol ByKey: PostgresPreparedStatement, Keyed where Row == (Data, Date) {}

    struct Take: ByKey {
        static let name = "switchback_take"
        static let sql = "DELETE FROM switchback_records WHERE kind = $1 AND digest = $2 RETURNING value, expires_at"
        let kind: String
        let digest: String
    }

    struct Read: ByKey {
        static let name = "switchback_read"
        static let sql = "SELECT value, expires_at FROM switchback_records WHERE kind = $1 AND digest = $2"
        let kind: String
        let digest: String
    }

    /// A statement about one record, named by its kind and digest.
    protocol Keyed {
        var kind: String { get }
        var digest: String { get }
    }

    /// A record's primary key, to match a batch's rows to its requests. It compares bytes, as PostgreSQL does:
    /// Swift's `String` equality would make two canonically equal but different digests one key.
    struct Key: Hashable, Comparable {
        let kind: [UInt8]
        let digest: [UInt8]

        init(kind: String, digest: String) {
            self.kind = Array(kind.utf8)
            self.digest = Array(digest.utf8)
        }

        static func < (lhs: Key, rhs: Key) -> Bool {
            lhs.kind == rhs.kind ? lhs.digest.lexicographicallyPrecedes(rhs.digest) : lhs.kind.lexicographicallyPrecedes(rhs.kind)
        }
    }

    /// A batch's items once each, in the byte order of their keys, and a key repeated in a batch answered
    /// for its first request alone. Inserts are written in this order (`ORDER BY position`), so two insert
    /// batches never each hold a key the other waits for (a deadlock PostgreSQL would break by failing one of
    /// them, and every request it carries). Takes lock their rows in the SQL's own `ORDER BY`, the
    /// database's collation, the same for every take; a take never waits on an insert, whose row it cannot
    /// see before the commit, so no cycle forms between the two either.
    static func unique<Item: Keyed>(_ items: [Item]) -> [Item] {
        var seen = Set<Key>()
        return items.map { ($0.key, $0) }.filter { seen.insert($0.0).inserted }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Several inserts in one statement, written in the order given; it answers the key of each row it wrote.
    struct InsertBatch: PostgresPreparedStatement {
        static let name = "switchback_insert_batch"
        static let sql = """
            INSERT INTO switchback_records (kind, digest, value, expires_at)
            SELECT kind, digest, value, expires_at FROM unnest($1::text[], $2::text[], $3::bytea[], $4::timestamptz[])
                WITH ORDINALITY AS batch (kind, digest, value, expires_at, position) ORDER BY position
            ON CONFLICT DO NOTHING RETURNING kind, digest
            """
        typealias Row = (String, String)
        let items: [Insert]

        init(_ items: [Insert]) { self.items = Statements.unique(items) }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(items.map(\.kind))
            bindings.append(items.map(\.digest))
            bindings.append(items.map { ByteBuffer(bytes: $0.value) })
            bindings.append(items.map(\.expiresAt))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Several takes in one statement; it locks the rows in the order of their keys, then deletes them, and
    /// answers the key, value and expiry of each row it deleted.
    struct TakeBatch: PostgresPreparedStatement {
        static let name = "switchback_take_batch"
        static let sql = """
            DELETE FROM switchback_records AS record USING (
                SELECT held.kind, held.digest FROM switchback_records AS held
                JOIN unnest($1::text[], $2::text[]) AS wanted (kind, digest) ON held.kind = wanted.kind AND held.digest = wanted.digest
                ORDER BY held.kind, held.digest FOR UPDATE OF held) AS locked
            WHERE record.kind = locked.kind AND record.digest = locked.digest
            RETURNING record.kind, record.digest, record.value, record.expires_at
            """
        typealias Row = (String, String, Data, Date)
        let items: [Take]

        init(_ items: [Take]) { self.items = Statements.unique(items) }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(items.map(\.kind))
            bindings.append(items.map(\.digest))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}

extension Statements.Keyed {
    var key: Statements.Key { Statements.Key(kind: kind, digest: digest) }
}

extension Statements.Write {
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(kind)
        bindings.append(digest)
        try bindings.append(value)
        bindings.append(expiresAt)
        if let now { bindings.append(now) }
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int { try row.decode(Int.self) }
}

extension Statements.ByKey {
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 2)
        bindings.append(kind)
        bindings.append(digest)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> (Data, Date) { try row.decode((Data, Date).self) }
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
