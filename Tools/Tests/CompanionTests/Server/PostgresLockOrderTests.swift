import Foundation
import Logging
import PostgresNIO
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import ToolsTestSupport

/// How a batched take locks its rows, against the real PostgreSQL (`SWITCHBACK_TEST_POSTGRES_URL`).
@Suite("PostgreSQL batch locking")
struct PostgresLockOrderTests {
    @Test(
        "a batched take locks its rows in key order, whatever order it is given: waiting on b, it already holds a, so two takes cannot deadlock",
        .enabled(if: StoreKind.postgresURL != nil || StoreKind.runningInCI))
    func takeLocksInKeyOrder() async throws {
        try await StoreKind.postgres.with { store, _ in
            let postgres = try #require(store as? PostgresCompanionStore)
            let schema = try #require(postgres.schema)
            var configuration = try PostgresCompanionStore.configuration(try #require(StoreKind.postgresURL))
            configuration.options.additionalStartupParameters.append(("search_path", schema))
            let client = PostgresClient(configuration: configuration)
            let running = Task { await client.run() }
            defer { running.cancel() }
            let logger = Logger(label: "lock-order") { _ in SwiftLogNoOpLogHandler() }
            for digest in ["a", "b"] {
                try await store.insert(.handOffCode, digest: digest, value: Data(digest.utf8), expiresAt: Date().addingTimeInterval(600))
            }
            try await client.withConnection { holder in
                // Someone else's transaction holds b.
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("SELECT 1 FROM switchback_records WHERE kind = 'handoff' AND digest = 'b' FOR UPDATE", logger: logger)
                // The take's statement, given b before a (the store sorts its keys too; this is the SQL's own order).
                let batch = Task {
                    var bindings = PostgresBindings()
                    bindings.append(["handoff", "handoff"])
                    bindings.append(["b", "a"])
                    var taken: [String] = []
                    for try await row in try await client.query(PostgresQuery(unsafeSQL: Statements.TakeBatch.sql, binds: bindings), logger: logger) {
                        taken.append(try row.decode((String, String, Data, Date).self).1)
                    }
                    return taken.sorted()
                }
                var waiting = 0
                for _ in 0..<1500 where waiting == 0 {
                    try await Task.sleep(for: .milliseconds(20))
                    for try await count in try await holder.query("SELECT count(*) FROM pg_locks WHERE NOT granted", logger: logger).decode(Int.self)
                    {
                        waiting = count
                    }
                }
                #expect(waiting > 0, "the take waits for b")
                // It locked a before it began to wait for b: a cannot be taken now.
                await #expect(throws: PSQLError.self) {
                    // The refusal arrives with the rows, so they are read.
                    for try await _ in try await holder.query(
                        "SELECT 1 FROM switchback_records WHERE kind = 'handoff' AND digest = 'a' FOR UPDATE NOWAIT", logger: logger)
                    {}
                }
                try await holder.query("ROLLBACK", logger: logger)
                #expect(try await batch.value == ["a", "b"], "once b is free, the take gets both")
            }
        }
    }
}
