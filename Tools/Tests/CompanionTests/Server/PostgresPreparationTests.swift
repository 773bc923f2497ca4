import Foundation
import Logging
import PostgresNIO
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// A prepared statement whose preparation failed, against the real PostgreSQL (`SWITCHBACK_TEST_POSTGRES_URL`).
@Suite("PostgreSQL prepared statements")
struct PostgresPreparationTests {
    @Test(
        "a statement whose preparation failed works again once the cause is gone (its connection is replaced); a prepared statement's error keeps the connection",
        .enabled(if: StoreKind.postgresURL != nil || StoreKind.runningInCI))
    func failedPreparation() async throws {
        let url = try #require(StoreKind.postgresURL, "CI=true but SWITCHBACK_TEST_POSTGRES_URL is unset")
        let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // One connection, so that the request after the failure runs where the failure was.
        var components = try #require(URLComponents(string: url))
        components.queryItems =
            (components.queryItems ?? []).filter { $0.name != "pool_max_conns" } + [URLQueryItem(name: "pool_max_conns", value: "1")]
        let sink = CapturingLogHandler.Sink()
        let store = try PostgresCompanionStore(url: try #require(components.string), schema: schema, logger: CapturingLogHandler.logger(sink))
        let closings = { sink.all.filter { $0.contains("closing a PostgreSQL connection") }.count }
        try await store.start()
        var configuration = try PostgresCompanionStore.configuration(url)
        configuration.options.additionalStartupParameters.append(("search_path", schema))
        let admin = PostgresClient(configuration: configuration)
        let running = Task { await admin.run() }
        defer { running.cancel() }
        let logger = Logger(label: "preparation") { _ in SwiftLogNoOpLogHandler() }
        do {
            let expiry = Date().addingTimeInterval(600)
            try await store.insert(.session, digest: "a", value: Data("a".utf8), expiresAt: expiry)
            // The table goes (a migration, an operator's mistake) before the connection has prepared a read.
            try await admin.query("DROP TABLE switchback_records", logger: logger)
            await #expect(throws: SwitchbackError.self) { _ = try await store.read(.session, digest: "a", now: Date()) }
            // It is back. PostgresNIO would keep answering the read's failed preparation on that connection.
            try await Self.restoreTable(admin, logger: logger)
            #expect(try await store.read(.session, digest: "a", now: Date()) == nil, "the read runs again, and the old row is gone")
            #expect(closings() == 1, "\(sink.text)")
            try await store.insert(.session, digest: "b", value: Data("b".utf8), expiresAt: expiry)
            #expect(try await store.read(.session, digest: "b", now: Date()) == Data("b".utf8))

            // The read has run on this connection, so it is prepared there: when the table goes now, its error
            // is the execution's, which PostgresNIO does not keep, and the connection stays.
            try await Task.sleep(for: .milliseconds(1100))
            try await admin.query("DROP TABLE switchback_records", logger: logger)
            await #expect(throws: SwitchbackError.self) { _ = try await store.read(.session, digest: "b", now: Date()) }
            try await Self.restoreTable(admin, logger: logger)
            #expect(try await store.read(.session, digest: "b", now: Date()) == nil)
            #expect(closings() == 1, "an execution's error closes nothing: \(sink.text)")
        } catch {
            await store.stop()
            throw error
        }
        await store.stop()
    }

    /// The table as the store creates it, as an operator restoring it would.
    private static func restoreTable(_ admin: PostgresClient, logger: Logger) async throws {
        try await admin.query(
            """
            CREATE TABLE switchback_records (
                kind text NOT NULL, digest text NOT NULL, value bytea NOT NULL, expires_at timestamptz NOT NULL,
                PRIMARY KEY (kind, digest))
            """, logger: logger)
    }
}
