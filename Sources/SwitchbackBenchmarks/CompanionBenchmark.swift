import Foundation
import Hummingbird
import Logging
import Switchback
import SwitchbackEmulator
import SwitchbackServer

/// Session hand-off pairs (issue with a Bearer token, then redeem) per second and their p99 latency at
/// 64 concurrent connections on loopback, for the in-memory and the PostgreSQL store, side by side with
/// a trivial Hummingbird route in the same process (the ceiling: two requests per pair, no work).
/// Issuing introspects the token at the emulator, as a real deployment asks its provider.
///
/// Run with `BENCH_ONLY=companion swift run -c release SwitchbackBenchmarks`; PostgreSQL is measured
/// when `SWITCHBACK_POSTGRES_URL` is set (scripts/postgres.sh starts one).
@available(macOS 14, iOS 17, *)
enum CompanionBenchmark {
    static let connections = 64

    static func run(seconds: Double) async throws {
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        var emulatorConfiguration = EmulatorConfiguration.defaults
        emulatorConfiguration.tokenLifetime = 3600
        let emulator = try await Emulator.start(configuration: emulatorConfiguration, logger: quiet)
        let token = try await accessToken(emulator)
        print("\nSession hand-off issue+redeem pairs at \(connections) concurrent connections, \(seconds) s per row")
        print(pad("server", 26) + pad("pairs/s", 12) + pad("p50 ms", 10) + pad("p99 ms", 10) + "of ceiling")

        let ceiling = try await measureCeiling(seconds: seconds, logger: quiet)
        print(pad("trivial route (ceiling)", 26) + pad(String(format: "%.0f", ceiling.rate), 12) + pad(ms(ceiling.p50), 10) + pad(ms(ceiling.p99), 10) + "100%")
        var stores: [(String, any CompanionStore, PostgresCompanionStore?)] = [("memory store", InMemoryCompanionStore(), nil)]
        if let url = ProcessInfo.processInfo.environment["SWITCHBACK_POSTGRES_URL"] {
            let postgres = try PostgresCompanionStore(url: url, table: "bench_records", logger: quiet)
            try await postgres.start()
            stores.append(("PostgreSQL store", postgres, postgres))
        }
        for (name, store, owned) in stores {
            let companion = try await Companion.start(
                ServerConfiguration(
                    port: 0, provider: .init(issuer: emulator.issuer, clientID: "backend", clientSecret: "backend-secret"),
                    handOff: .init(allowedRedirects: ["https://web.example.com/app"])
                ), store: store, logger: quiet
            )
            let base = companion.baseURL.absoluteString
            let result = try await measure(seconds: seconds) { transport in
                let issued = try await transport.send(Switchback.HTTPRequest(method: .post, url: URL(string: base + "/handoff")!, headers: ["Authorization": "Bearer \(token)"]))
                guard issued.status == 201, let body = try? JSONSerialization.jsonObject(with: issued.body) as? [String: Any], let code = body["handoffotp"] as? String else {
                    throw BenchmarkFailure("issue answered \(issued.status)")
                }
                let redeemed = try await transport.send(Switchback.HTTPRequest(method: .get, url: URL(string: base + "/handoff/redeem?handoffotp=\(code)&goto=https%3A%2F%2Fweb.example.com%2Fapp")!))
                guard redeemed.status == 303 else { throw BenchmarkFailure("redeem answered \(redeemed.status)") }
            }
            print(pad(name, 26) + pad(String(format: "%.0f", result.rate), 12) + pad(ms(result.p50), 10) + pad(ms(result.p99), 10) + String(format: "%.0f%%", result.rate / ceiling.rate * 100))
            await companion.stop()
            await owned?.stop()
        }
        print("goals: memory store at least 50% of the ceiling; p99 under 10 ms")
        await emulator.stop()
    }

    private static func measureCeiling(seconds: Double, logger: Logger) async throws -> (rate: Double, p50: Double, p99: Double) {
        let router = Router()
        router.get("/ping") { _, _ in "ok" }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), onServerRunning: { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }, logger: logger)
        let server = Task { try await app.runService() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        let url = URL(string: "http://127.0.0.1:\(port)/ping")!
        let result = try await measure(seconds: seconds) { transport in
            for _ in 0..<2 { _ = try await transport.send(Switchback.HTTPRequest(method: .get, url: url)) }
        }
        server.cancel()
        _ = await server.result
        return result
    }

    /// Runs `pair` on 64 workers, each with its own connection, for `seconds`; returns pairs per second and latency percentiles.
    private static func measure(seconds: Double, pair: @escaping @Sendable (URLSessionTransport) async throws -> Void) async throws -> (rate: Double, p50: Double, p99: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<connections {
                group.addTask {
                    // Its own session, so its own keep-alive connection; redirects are not followed.
                    let transport = URLSessionTransport()
                    var samples: [Double] = []
                    while ContinuousClock.now < deadline {
                        let began = ContinuousClock.now
                        try await pair(transport)
                        samples.append((ContinuousClock.now - began).seconds)
                    }
                    return samples
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }.sorted()
        }
        let elapsed = (ContinuousClock.now - start).seconds
        guard !latencies.isEmpty else { return (0, 0, 0) }
        return (Double(latencies.count) / elapsed, latencies[latencies.count / 2], latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))])
    }

    private static func accessToken(_ emulator: Emulator) async throws -> String {
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "backend", redirectURI: URL(string: "http://127.0.0.1:8080/cb")!, authentication: .clientSecretBasic(secret: "backend-secret")),
            provider: .discovery(issuer: emulator.issuer), logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        )
        let session = try await client.prepareAuthorization()
        let transport = URLSessionTransport()
        let page = try await transport.send(Switchback.HTTPRequest(method: .get, url: session.authorizationURL))
        let html = String(decoding: page.body, as: UTF8.self)
        guard let range = html.range(of: "name=\"request\" value=\""), let end = html[range.upperBound...].firstIndex(of: "\"") else {
            throw BenchmarkFailure("no login form")
        }
        let login = try await transport.send(.form(URL(string: emulator.issuer + "/login")!, [("request", String(html[range.upperBound..<end])), ("username", "alice"), ("password", "Secret-123")]))
        guard let location = login.headers["location"], let callback = URL(string: location) else { throw BenchmarkFailure("no redirect after login") }
        return try await client.completeAuthorization(.redirect(callback), session: session).accessToken
    }

    private static func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }

    private static func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0) }
}

private struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
