public import Foundation
public import Logging
import NIOCore
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
    let firstConnection: PostgresConnection.Configuration
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
}
