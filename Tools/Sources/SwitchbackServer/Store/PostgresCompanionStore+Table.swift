import Foundation
import Logging
import PostgresNIO
@_spi(SwitchbackInternals) import Switchback

// The table at start: made when missing and the role may, and checked either way, so that a table an
// administrator made for a role that may not create one (Deployment.md, "PostgreSQL") starts, and one that
// cannot serve is refused at start with what to change, not at the first request.
extension PostgresCompanionStore {
    /// The columns the statements read and write, with their types as `regtype` prints them (without
    /// modifiers). Other columns are left alone: every statement names its columns.
    static let columns = [
        ("kind", "text"), ("digest", "text"), ("value", "bytea"), ("expires_at", "timestamp with time zone"),
    ]

    /// Creates the schema, the table and its expiry index when missing, then checks the table
    /// (``checkTable()``). Each is looked up before it is created: `CREATE … IF NOT EXISTS` needs the
    /// privilege to create even when the object exists, which a role limited to the table's rows lacks.
    /// The expiry index only speeds up the purge of expired rows: a role that may not add it is warned,
    /// not stopped.
    func prepareTable() async throws {
        let table = Self.table
        if let schema, try await !exists("SELECT to_regnamespace(\(schema)) IS NOT NULL") {
            try await create("CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)", "the schema \(schema)")
        }
        if try await !exists("SELECT to_regclass(\(table)) IS NOT NULL") {
            try await create(
                """
                CREATE TABLE IF NOT EXISTS \(unescaped: table) (
                    kind text NOT NULL, digest text NOT NULL, value bytea NOT NULL, expires_at timestamptz NOT NULL,
                    PRIMARY KEY (kind, digest))
                """, "the table \(table)")
        }
        if try await !hasExpiryIndex() {
            var reason = "it is still missing"
            do {
                try await create("CREATE INDEX IF NOT EXISTS \(unescaped: table)_expiry ON \(unescaped: table) (expires_at)", "the index")
            } catch let error as SwitchbackError {
                reason = error.message
            }
            // Made, unless an index of that name on something else was there already.
            if try await !hasExpiryIndex() {
                logger.warning(
                    "\(table) has no index on expires_at, which the purge of expired rows reads; have its owner add it (Deployment.md)",
                    metadata: ["reason": "\(reason)"])
            }
        }
        try await checkTable()
    }

    /// Whether a valid, whole btree index of the table's leads with expires_at, whatever its name.
    private func hasExpiryIndex() async throws -> Bool {
        try await exists(
            """
            SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
                JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am m ON m.oid = c.relam
                WHERE i.indrelid = to_regclass(\(Self.table)) AND a.attname = 'expires_at' AND i.indisvalid AND i.indpred IS NULL
                    AND m.amname = 'btree')
            """)
    }

    /// Refuses a table the statements cannot use: a column missing or of another type, no unique key on
    /// `(kind, digest)` (which makes a record's key single), or a privilege the role lacks.
    func checkTable() async throws {
        let table = Self.table
        var types: [String: String] = [:]
        // The type without its modifiers: timestamptz(6) is still timestamptz.
        let columns = try await client.query(
            """
            SELECT attname::text, atttypid::regtype::text FROM pg_attribute
            WHERE attrelid = to_regclass(\(table)) AND attnum > 0 AND NOT attisdropped
            """, logger: logger)
        for try await (name, type) in columns.decode((String, String).self) { types[name] = type }
        let wrong = Self.columns.filter { types[$0.0] != $0.1 }
        guard wrong.isEmpty else {
            let listed = wrong.map { "\($0.0) \($0.1)" + (types[$0.0].map { " (it is \($0))" } ?? " (missing)") }.joined(separator: ", ")
            throw SwitchbackError(.storeFailed, "\(table) needs the columns \(listed); create it as Deployment.md's \"PostgreSQL\" shows")
        }
        // A unique index (the primary key) whose key columns are exactly kind and digest, in either order, on
        // plain columns, valid. Columns it only INCLUDEs are not part of the key.
        let keyed = try await exists(
            """
            SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = to_regclass(\(table)) AND i.indisunique
                AND i.indisvalid AND i.indimmediate AND i.indnkeyatts = 2 AND i.indexprs IS NULL AND i.indpred IS NULL
                AND (SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_attribute a
                     WHERE a.attrelid = i.indrelid AND a.attnum IN (i.indkey[0], i.indkey[1])) = ARRAY['digest', 'kind'])
            """)
        guard keyed else {
            throw SwitchbackError(.storeFailed, "\(table) needs its primary key on (kind, digest); create it as Deployment.md's \"PostgreSQL\" shows")
        }
        // The inserts' `ON CONFLICT DO NOTHING` names no constraint, so it weighs every unique index, and
        // PostgreSQL refuses it outright when any of them is deferrable.
        guard try await !exists("SELECT EXISTS (SELECT 1 FROM pg_index WHERE indrelid = to_regclass(\(table)) AND NOT indimmediate)") else {
            throw SwitchbackError(
                .storeFailed, "\(table) has a deferrable unique constraint, which the inserts' ON CONFLICT cannot use; make it immediate")
        }
        // The privileges the statements need that the role lacks, in one round trip.
        var missing = ""
        let lacking = try await client.query(
            """
            SELECT coalesce(string_agg(p, ', ' ORDER BY n), '')
            FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) WITH ORDINALITY AS wanted(p, n)
            WHERE NOT has_table_privilege(to_regclass(\(table)), p)
            """, logger: logger)
        for try await listed in lacking.decode(String.self) { missing = listed }
        guard missing.isEmpty else {
            throw SwitchbackError(
                .storeFailed,
                "the role may not \(missing) on \(table): GRANT SELECT, INSERT, UPDATE, DELETE ON \(table) TO the companion's role"
            )
        }
    }

    /// The single boolean `query` answers.
    private func exists(_ query: PostgresQuery) async throws -> Bool {
        for try await answer in try await client.query(query, logger: logger).decode(Bool.self) { return answer }
        return false
    }

    /// Runs a `CREATE … IF NOT EXISTS`. Instances starting together may race on the catalog (two such
    /// statements can still collide on its unique indexes): a collision means the other instance created it,
    /// so the statement is tried again. A role without the privilege is told what to do instead.
    private func create(_ statement: PostgresQuery, _ what: String) async throws {
        for attempt in 1...3 {
            do {
                try await client.query(statement, logger: logger)
                return
            } catch let error as PSQLError where attempt < 3 && ["23505", "42P06", "42P07", "42710"].contains(error.serverInfo?[.sqlState] ?? "") {
                continue
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "42501" {
                throw SwitchbackError(
                    .storeFailed,
                    "the role may not create \(what) (\(error.serverInfo?[.message] ?? "permission denied")): have an administrator create it as Deployment.md's \"PostgreSQL\" shows, or grant the role the privilege"
                )
            }
        }
    }
}
