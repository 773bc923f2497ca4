import Foundation
import Logging
import PostgresNIO
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// The table at start, on real PostgreSQL, for a role that may only use its rows: the table an
/// administrator made with Deployment.md's statements is used, and one that cannot serve is refused at
/// start with what to change.
@Suite("PostgreSQL table at start", .enabled(if: StoreKind.postgresURL != nil || StoreKind.runningInCI))
struct PostgresTableTests {
    /// A schema and a login role of their own (neither a superuser nor the schema's owner), made and
    /// dropped by the test's superuser.
    struct Place {
        let url: String
        let name = "tbl_" + SystemEntropy().randomBytes(count: 6).map { String(format: "%02x", $0) }.joined()
        var role: String { name + "_role" }
        let admin: PostgresClient
        let running: Task<Void, Never>
        static let quiet = Logger(label: "admin") { _ in SwiftLogNoOpLogHandler() }

        init() throws {
            url = try #require(StoreKind.postgresURL, "CI=true but SWITCHBACK_TEST_POSTGRES_URL is unset")
            var configuration = try PostgresCompanionStore.configuration(url)
            configuration.options.additionalStartupParameters.append(("search_path", name))
            let admin = PostgresClient(configuration: configuration)
            self.admin = admin
            running = Task { await admin.run() }
        }

        func run(_ sql: String) async throws {
            for try await _ in try await admin.query(PostgresQuery(unsafeSQL: sql), logger: Self.quiet) {}
        }

        /// The schema, empty, which the role may use and not create in; and the role.
        func make() async throws {
            try await run("CREATE SCHEMA \(name)")
            try await run("CREATE ROLE \(role) LOGIN")
            try await run("GRANT USAGE ON SCHEMA \(name) TO \(role)")
        }

        /// The store as the role sees the schema, or as the test's superuser (who may create anything).
        func store(asOwner: Bool = false, logger: Logger = Place.quiet) throws -> PostgresCompanionStore {
            var components = try #require(URLComponents(string: url))
            if !asOwner {
                components.user = role
                components.password = nil
            }
            return try PostgresCompanionStore(url: try #require(components.string), schema: name, logger: logger)
        }

        /// The start's error message, or "started".
        func start(asOwner: Bool = false, logger: Logger = Place.quiet) async -> String {
            do {
                let store = try store(asOwner: asOwner, logger: logger)
                try await store.start(timeout: .seconds(20))
                await store.stop()
                return "started"
            } catch {
                return (error as? SwitchbackError)?.message ?? "\(error)"
            }
        }

        func drop() async {
            try? await run("DROP SCHEMA \(name) CASCADE")
            try? await run("DROP OWNED BY \(role)")
            try? await run("DROP ROLE \(role)")
            running.cancel()
        }

        /// Runs `body` with the place made, and drops it after.
        static func with(_ body: (Place) async throws -> Void) async throws {
            let place = try Place()
            do {
                try await place.make()
                try await body(place)
            } catch {
                await place.drop()
                throw error
            }
            await place.drop()
        }
    }

    /// Deployment.md's statements for an administrator, for `role`.
    static func documentedStatements(for role: String) throws -> [String] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("Documentation/Deployment.md"), encoding: .utf8)
        let section = try #require(guide.components(separatedBy: "\n## PostgreSQL\n").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```sql\n").dropFirst().first?.components(separatedBy: "```").first)
        let statements = block.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
        #expect(statements.count == 3 && statements.last?.hasSuffix("TO switchback") == true, "\(statements)")
        return statements.map { $0.replacingOccurrences(of: "TO switchback", with: "TO \(role)") }
    }

    @Test("a role that may use the rows of a table made by Deployment.md's statements starts, and its records work")
    func tableMadeByAnAdministrator() async throws {
        try await Place.with { place in
            for statement in try Self.documentedStatements(for: place.role) { try await place.run(statement) }
            let log = CapturingLogHandler.Sink()
            let store = try place.store(logger: CapturingLogHandler.logger(log))
            try await store.start(timeout: .seconds(20))
            let now = Date()
            try await store.insert(.handOffCode, digest: "d1", value: Data("sealed".utf8), expiresAt: now.addingTimeInterval(60))
            #expect(try await store.take(.handOffCode, digest: "d1", now: now) == Data("sealed".utf8))
            #expect(try await store.take(.handOffCode, digest: "d1", now: now) == nil)
            #expect(!log.text.contains("no index on expires_at"), "the documented index serves the purge: \(log.text)")
            await store.stop()
        }
    }

    @Test(
        "tables made otherwise that serve as well start: the key's columns in the other order or with INCLUDE, a timestamp's precision, no expiry index (a warning)"
    )
    func usableVariants() async throws {
        let table = "kind text NOT NULL, digest text NOT NULL, value bytea NOT NULL, expires_at timestamptz NOT NULL"
        for made in [
            "(\(table), PRIMARY KEY (digest, kind))", "(\(table), PRIMARY KEY (kind, digest) INCLUDE (expires_at))",
            "(\(table.replacingOccurrences(of: "timestamptz", with: "timestamptz(3)")), PRIMARY KEY (kind, digest))",
            "(created_at timestamptz DEFAULT now(), \(table), PRIMARY KEY (kind, digest))",
        ] {
            try await Place.with { place in
                // No expiry index, and the role may not add one to a table it does not own: a warning.
                try await place.run("CREATE TABLE switchback_records \(made)")
                try await place.run("GRANT SELECT, INSERT, UPDATE, DELETE ON switchback_records TO \(place.role)")
                let log = CapturingLogHandler.Sink()
                #expect(await place.start(logger: CapturingLogHandler.logger(log)) == "started", "\(made)")
                #expect(log.text.contains("warning switchback_records has no index on expires_at"), "\(made): \(log.text)")
            }
        }
    }

    @Test("two instances starting together on an empty schema both start: the one that finds the table made uses it")
    func startingTogether() async throws {
        try await Place.with { place in
            async let first = place.start(asOwner: true)
            async let second = place.start(asOwner: true)
            #expect(await [first, second] == ["started", "started"])
        }
    }

    @Test("no table and no privilege to create one: refused at start, naming the table and the remedy")
    func noTable() async throws {
        try await Place.with { place in
            let message = await place.start()
            #expect(message.contains("may not create the table switchback_records") && message.contains("Deployment.md"), "\(message)")
        }
    }

    @Test("a table the statements cannot use is refused at start: a privilege, a column's type, the key")
    func unusableTables() async throws {
        let table = "kind text NOT NULL, digest text NOT NULL, value bytea NOT NULL, expires_at timestamptz NOT NULL"
        for (made, grants, expected) in [
            ("(\(table), PRIMARY KEY (kind, digest))", "SELECT, INSERT, UPDATE", "may not DELETE on switchback_records"),
            ("(\(table.replacingOccurrences(of: "value bytea", with: "value text")), PRIMARY KEY (kind, digest))", "ALL", "value bytea (it is text)"),
            ("(\(table.replacingOccurrences(of: ", expires_at timestamptz NOT NULL", with: "")), PRIMARY KEY (kind, digest))", "ALL", "(missing)"),
            ("(\(table))", "ALL", "primary key on (kind, digest)"),
            ("(\(table), PRIMARY KEY (digest))", "ALL", "primary key on (kind, digest)"),
            ("(\(table), PRIMARY KEY (kind, digest) DEFERRABLE)", "ALL", "primary key on (kind, digest)"),
            ("(\(table), PRIMARY KEY (kind, digest), UNIQUE (value) DEFERRABLE)", "ALL", "deferrable unique constraint"),
        ] {
            try await Place.with { place in
                try await place.run("CREATE TABLE switchback_records \(made)")
                try await place.run("CREATE INDEX switchback_records_expiry ON switchback_records (digest)")
                try await place.run("GRANT \(grants) ON switchback_records TO \(place.role)")
                let message = await place.start()
                #expect(message.contains(expected), "\(made) \(grants): \(message)")
            }
        }
    }
}
