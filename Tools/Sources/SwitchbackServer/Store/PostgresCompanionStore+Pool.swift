import Foundation
import Logging
import NIOCore
import PostgresNIO
@_spi(SwitchbackInternals) import Switchback

extension PostgresCompanionStore {
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
    static func reporting<Result>(_ work: () async throws -> Result) async throws -> Result {
        do {
            return try await work()
        } catch {
            throw SwitchbackError(.storeFailed, "PostgreSQL query failed: \(Self.describe(error))")
        }
    }

    /// The server's message and SQLSTATE, else the client's error code and the error under it (a refused
    /// connection, a TLS failure); neither carries the password.
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return "\(message) (\(error.serverInfo?[.sqlState] ?? "?"))" }
            return "\(error.code)" + (error.underlying.map { ": \(String(describing: $0).prefix(300))" } ?? "")
        }
        return "\(type(of: error))"
    }
}

/// The task running the connection pool, started once and cancelled on stop.
struct RunTask: Sendable {
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
