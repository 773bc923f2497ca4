import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
package import SwitchbackServer

/// The two companion stores the same tests run against. PostgreSQL is the server scripts/test.sh starts
/// (`SWITCHBACK_TEST_POSTGRES_URL`); each test gets a schema of its own. Outside CI, without that server, the
/// PostgreSQL cases are skipped; under `CI=true` they fail instead.
package enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory
    case postgres

    package var testDescription: String { rawValue }

    package static let postgresURL = ProcessInfo.processInfo.environment["SWITCHBACK_TEST_POSTGRES_URL"]
    package static let runningInCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// The kinds this run can exercise.
    package static var available: [StoreKind] {
        postgresURL != nil || runningInCI ? allCases : [.memory]
    }

    /// A fresh, started store, stopped after `body`.
    package func with<Result>(_ body: (any CompanionStore, _ shared: () async throws -> any CompanionStore) async throws -> Result) async throws
        -> Result
    {
        switch self {
        case .memory:
            let store = InMemoryCompanionStore()
            return try await body(store, { store })
        case .postgres:
            guard let url = Self.postgresURL else {
                throw PostgresMissing(description: "CI=true but SWITCHBACK_TEST_POSTGRES_URL is unset; scripts/test.sh must start PostgreSQL")
            }
            let schema = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            // One record key for every instance of this schema, as a deployment's recordKeys gives them.
            let keys = RecordKeys.random()
            let store = try PostgresCompanionStore(url: url, schema: schema, recordKeys: keys)
            try await store.start()
            var others: [PostgresCompanionStore] = []
            do {
                // A second pool on the same schema stands for a second server instance.
                let result = try await body(
                    store,
                    {
                        let other = try PostgresCompanionStore(url: url, schema: schema, recordKeys: keys)
                        try await other.start()
                        others.append(other)
                        return other
                    })
                for other in others { await other.stop() }
                await store.stop()
                return result
            } catch {
                for other in others { await other.stop() }
                await store.stop()
                throw error
            }
        }
    }
}

package struct PostgresMissing: Error, CustomStringConvertible {
    package let description: String
}
