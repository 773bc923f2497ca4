import Foundation
import Logging
import NIOCore
import PostgresNIO
@_spi(SwitchbackInternals) import Switchback

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
