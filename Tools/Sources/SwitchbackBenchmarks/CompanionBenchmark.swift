import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting

/// Session hand-off pairs (issue with a Bearer token, then redeem) per second and their p99 latency at
/// 64 concurrent keep-alive connections on loopback: the memory store with local JWT validation and with
/// introspection at the emulator, and the PostgreSQL store, side by side with a trivial Hummingbird route
/// (the ceiling: two requests per pair, no work). The load comes from a second process (this executable
/// with `companion-load`) over NIO, so the client shares neither event loops nor heap with the server.
/// The ceiling and the memory row run in turns `BENCH_ROUNDS` times (3), and the goal line gives the
/// median of their ratios with the range. One more row sends the pair's requests to routes that do no work,
/// to split the gap to the ceiling into HTTP and the route's own work.
///
/// Run with `BENCH_ONLY=companion swift run -c release --package-path Tools SwitchbackBenchmarks`; PostgreSQL is measured
/// when `SWITCHBACK_TEST_POSTGRES_URL` is set (scripts/postgres.sh starts one).
enum CompanionBenchmark {
    static let connections = 64
    static let goto = "https://web.example.com/app"

    static func run(seconds: Double) async throws {
        let quiet = Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        var emulatorConfiguration = EmulatorConfiguration.defaults
        emulatorConfiguration.tokenLifetime = 3600
        emulatorConfiguration.accessTokenAudience = "https://api.example.com"
        let emulator = try await Emulator.start(configuration: emulatorConfiguration, logger: quiet)
        let token = try await accessToken(emulator)
        try await measureRecords()
        print("\nSession hand-off issue+redeem pairs at \(connections) connections from a second process, \(seconds) s per row")
        print(
            pad("server", 36) + pad("pairs/s", 12) + pad("p50 ms", 10) + pad("p99 ms", 10) + pad("of ceiling", 12)
                + "CPU µs/pair: server, load    switches/pair: server, load")

        // The ceiling and the memory row the goals compare run in turns, `rounds` times: this machine's speed
        // drifts by 10-20% within a minute, and a ratio of two rows run side by side moves less than either.
        var ratios: [(rate: Double, p99: Double, cpu: Double)] = []
        var memoryRates: [Double] = []
        var ceiling: LoadResult?
        for _ in 0..<rounds {
            let trivial = try await measureCeiling(seconds: seconds, logger: quiet)
            print(
                pad("trivial route (ceiling)", 36) + pad(String(format: "%.0f", trivial.rate), 12) + pad(ms(trivial.p50), 10)
                    + pad(ms(trivial.p99), 10) + pad("100%", 12) + cpu(trivial))
            let result = try await measure(
                "memory store, JWT validation", store: InMemoryCompanionStore(), validation: .jwt, metrics: false, ceiling: trivial,
                emulator: emulator, token: token, seconds: seconds, logger: quiet)
            ratios.append((result.rate / trivial.rate, result.p99 / trivial.p99, result.serverCPU / trivial.serverCPU))
            memoryRates.append(result.rate)
            ceiling = ceiling ?? trivial
        }
        guard let ceiling else { return }
        let shape = try await measureShape(seconds: seconds, logger: quiet)
        print(
            pad("the pair's HTTP alone (no work)", 36) + pad(String(format: "%.0f", shape.rate), 12) + pad(ms(shape.p50), 10) + pad(ms(shape.p99), 10)
                + pad(String(format: "%.0f%%", shape.rate / ceiling.rate * 100), 12) + cpu(shape))
        _ = try await measure(
            "same, Prometheus metrics on", store: InMemoryCompanionStore(), validation: .jwt, metrics: true, ceiling: ceiling, emulator: emulator,
            token: token, seconds: seconds, logger: quiet)
        _ = try await measure(
            "memory store, introspection", store: InMemoryCompanionStore(), validation: .introspection, metrics: false, ceiling: ceiling,
            emulator: emulator, token: token, seconds: seconds, logger: quiet)
        var postgres: (result: LoadResult, batching: (statements: Int, requests: Int))?
        if let url = ProcessInfo.processInfo.environment["SWITCHBACK_TEST_POSTGRES_URL"] {
            let store = try PostgresCompanionStore(url: url, schema: "bench", logger: quiet)
            try await store.start()
            let result = try await measure(
                "PostgreSQL store, JWT validation", store: store, validation: .jwt, metrics: false, ceiling: ceiling, emulator: emulator,
                token: token, seconds: seconds, logger: quiet)
            postgres = (result, store.batching)
            await store.stop()
        }
        // The goal BENCHMARKS.md states (p99) and the rate it watches (its 60% goal is retired:
        // Documentation/Decisions/0010-handoff-rate-goal-retired.md), with this run's figures: the median of
        // the rounds, and their range.
        let rates = ratios.map(\.rate).sorted()
        let p99s = ratios.map(\.p99).sorted()
        print(
            String(
                format:
                    "memory store, JWT: %.0f%% of the ceiling (rounds %.0f-%.0f%%; watched, not a goal); goal: its p99 at most 2x the ceiling's (here %.1fx, rounds %.1f-%.1fx)",
                rates[rates.count / 2] * 100, rates[0] * 100, rates[rates.count - 1] * 100, p99s[p99s.count / 2], p99s[0], p99s[p99s.count - 1]))
        // Not a goal: the server's CPU per pair over the ceiling's in the same round moves less with the
        // machine's drift than the rates do, so it shows a change to the route that the rates hide.
        let cpus = ratios.map(\.cpu).sorted()
        print(
            String(
                format: "       the server's CPU per pair, over the ceiling's in the same round: %.2fx (rounds %.2f-%.2fx)", cpus[cpus.count / 2],
                cpus[0], cpus[cpus.count - 1]))
        if let (result, batching) = postgres {
            print(
                String(
                    format:
                        "       PostgreSQL store at least 0.5x the memory store's median (here %.2fx); %.1f requests per insert or take statement",
                    result.rate / memoryRates.sorted()[memoryRates.count / 2], Double(batching.requests) / Double(max(batching.statements, 1))))
        }
        await emulator.stop()
    }

    /// The records a pair writes and reads, in this process on one core, without HTTP: a grant issued (a
    /// secret drawn, a key derived, the grant sealed and stored), redeemed (taken and opened), and a second
    /// record issued as the session is. Then the secret's 32 random bytes alone, from each source.
    static func measureRecords() async throws {
        let store = InMemoryCompanionStore()
        let now = Date()
        let grant = HandOffGrant(
            subject: "9b1f7c2e-alice", clientID: "backend", issuedAt: now, expiresAt: now.addingTimeInterval(120), displayName: "alice",
            tokenExpiresAt: now.addingTimeInterval(3600))
        var issued = 0
        let pairs = try await Benchmarks.rate {
            let code = try await store.issue(grant)
            guard try await store.redeem(code, now: now) != nil else { throw BenchmarkFailure("the grant did not redeem") }
            _ = try await store.issue(.session, grant, expiresAt: grant.expiresAt)
            // The sessions are dropped now and then, so that the store stays small.
            issued += 1
            if issued % 1024 == 0 { await store.purge(now: grant.expiresAt.addingTimeInterval(1)) }
        }
        // A record key for one secret: RecordSealing's derivation (HKDF-SHA256, its extract keyed once per
        // server key) beside swift-crypto's HKDF in one call, the reference it must equal.
        let salt = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
        let recordKeys = try RecordKeys([Base64URL.encode(salt)])
        let secret = Base64URL.encode(Data((0..<32).map { UInt8($0) }))
        let (derived, reference) = try await Benchmarks.alternating(
            { _ = RecordSealing.key(for: secret, kind: .handOffCode, under: recordKeys.current) },
            {
                _ = HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: SymmetricKey(data: Data(secret.utf8)), salt: salt, info: Data(RecordKind.handOffCode.rawValue.utf8),
                    outputByteCount: 32)
            })
        let (kernel, system) = try await Benchmarks.alternating(
            { _ = KernelEntropy().randomBytes(count: 32) }, { _ = SystemEntropy().randomBytes(count: 32) })
        print("\nA hand-off pair's records in process, one core, no HTTP (grant issued and redeemed, a session issued)")
        print(String(format: "  records of one pair: %.1f µs", 1e6 / pairs))
        print(String(format: "  32 random bytes: KernelEntropy %.2f µs, SystemEntropy %.2f µs", 1e6 / kernel, 1e6 / system))
        print(String(format: "  one record key: RecordSealing.key %.2f µs, swift-crypto's HKDF.deriveKey %.2f µs", 1e6 / derived, 1e6 / reference))
    }

    /// How many times the ceiling and the memory row run in turns (`BENCH_ROUNDS`, 3 unless set).
    static let rounds = max(1, Int(ProcessInfo.processInfo.environment["BENCH_ROUNDS"] ?? "") ?? 3)

    /// One row: a companion on `store` under the hand-off load, printed beside `ceiling`.
    private static func measure(
        _ name: String, store: any CompanionStore, validation: ServerConfiguration.TokenValidation, metrics: Bool, ceiling: LoadResult,
        emulator: Emulator, token: String, seconds: Double, logger: Logger
    ) async throws -> LoadResult {
        let companion = try await Companion.start(
            ServerConfiguration(
                port: 0, provider: .init(issuer: emulator.issuer, clientID: "backend", clientSecret: "backend-secret"),
                handOff: .init(validation: validation, audience: "https://api.example.com", allowedRedirects: [goto]),
                // The load comes from one address: the per-address limits would measure the limiter.
                limits: .init(startsPerMinutePerAddress: 0, startsPerMinute: 0),
                metrics: metrics ? .init(host: "127.0.0.1", port: 0) : nil
            ), store: store, logger: logger
        )
        let result = try await load(kind: "handoff", port: companion.baseURL.port ?? 0, token: token, seconds: seconds)
        print(
            pad(name, 36) + pad(String(format: "%.0f", result.rate), 12) + pad(ms(result.p50), 10) + pad(ms(result.p99), 10)
                + pad(String(format: "%.0f%%", result.rate / ceiling.rate * 100), 12) + cpu(result))
        await companion.stop()
        return result
    }

    /// One row's figures: pairs per second, the median and 99th-percentile pair latency (s), and the CPU time
    /// per pair (s) of this process (the server) and of the load generator. The two share the machine's cores,
    /// so a pair's cost to the load generator lowers the row's rate as well. The context switches per pair
    /// count each time a thread of the process gave up its core: a task waking another thread on the way
    /// pays one.
    struct LoadResult {
        let rate: Double
        let p50: Double
        let p99: Double
        let serverCPU: Double
        let loadCPU: Double
        let serverSwitches: Double
        let loadSwitches: Double
    }

    private static func cpu(_ result: LoadResult) -> String {
        String(
            format: "%.0f, %.0f    %.1f, %.1f", result.serverCPU * 1e6, result.loadCPU * 1e6, result.serverSwitches, result.loadSwitches)
    }

    private static func measureCeiling(seconds: Double, logger: Logger) async throws -> LoadResult {
        let router = Router()
        router.get("/ping") { _, _ in "ok" }
        return try await serve(router, kind: "ping", seconds: seconds, logger: logger)
    }

    /// The hand-off pair's HTTP without its work: the same requests, read whole, answered with what the
    /// companion answers (a 201 with the JSON code, a 303 with the session cookie and the same headers), and
    /// nothing checked, sealed or stored. Between the ceiling and this row is what the pair's larger
    /// messages cost Hummingbird and the load generator; between this row and the memory row, the route's work.
    private static func measureShape(seconds: Double, logger: Logger) async throws -> LoadResult {
        let code = String(repeating: "c", count: 43)
        let router = Router()
        router.post("/handoff") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 16_384)
            var headers: HTTPFields = [.cacheControl: "no-store", .init("Pragma")!: "no-cache"]
            headers[.contentType] = "application/json"
            let body = "{\"expires_in\":120,\"handoffotp\":\"\(code)\"}"
            return Response(status: .created, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        router.post("/handoff/redeem") { request, _ -> Response in
            _ = try await request.body.collect(upTo: 16_384)
            var headers: HTTPFields = [.cacheControl: "no-store", .init("Pragma")!: "no-cache"]
            headers[.location] = goto
            headers[.init("Referrer-Policy")!] = "no-referrer"
            headers[.setCookie] = "__Host-switchback_session=\(code); Path=/; Max-Age=28800; Secure; HttpOnly; SameSite=Lax"
            return Response(status: .seeOther, headers: headers)
        }
        return try await serve(router, kind: "handoff", seconds: seconds, logger: logger)
    }

    /// Serves `router` on a free loopback port while the load generator drives `kind` against it.
    private static func serve(_ router: Router<BasicRequestContext>, kind: String, seconds: Double, logger: Logger) async throws -> LoadResult {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let server = Task { try await app.runService() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        let result = try await load(kind: kind, port: port, token: "-", seconds: seconds)
        server.cancel()
        _ = await server.result
        return result
    }

    /// Runs the load generator in a child process against `port` and reads its figures.
    private static func load(kind: String, port: Int, token: String, seconds: Double) async throws -> LoadResult {
        let serverStart = HandOffBenchmark.processCPUSeconds()
        let switchesStart = HandOffBenchmark.processContextSwitches()
        let outcome = try await ChildProcess.run(
            ProcessInfo.processInfo.arguments[0], ["companion-load", kind, String(port), token, String(seconds)])
        guard outcome.status == 0, let line = outcome.stdout.split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") }) else {
            throw BenchmarkFailure("the load generator failed (\(outcome.status)): \(outcome.stderr.prefix(300))")
        }
        let serverCPU = HandOffBenchmark.processCPUSeconds() - serverStart
        let serverSwitches = HandOffBenchmark.processContextSwitches() - switchesStart
        let figures = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard figures.count == 6, figures[4] > 0 else { throw BenchmarkFailure("unexpected load output: \(line)") }
        return LoadResult(
            rate: figures[0], p50: figures[1], p99: figures[2], serverCPU: serverCPU / figures[4], loadCPU: figures[3] / figures[4],
            serverSwitches: serverSwitches / figures[4], loadSwitches: figures[5] / figures[4])
    }

    /// The child's side: `companion-load KIND PORT TOKEN SECONDS` drives 64 keep-alive connections and
    /// prints `RESULT pairs/s p50 p99 cpu pairs switches` (seconds; `cpu` and `switches` are the generator's own
    /// CPU time and context switches).
    static func generateLoad(_ arguments: [String]) async throws {
        guard arguments.count == 4, let port = Int(arguments[1]), let seconds = Double(arguments[3]) else {
            throw BenchmarkFailure("usage: companion-load ping|handoff PORT TOKEN SECONDS")
        }
        let kind = arguments[0]
        let token = arguments[2]
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let start = ContinuousClock.now
        let cpuStart = HandOffBenchmark.processCPUSeconds()
        let switchesStart = HandOffBenchmark.processContextSwitches()
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<connections {
                group.addTask {
                    try await TestClient.withClient(host: "127.0.0.1", port: port) { client in
                        var samples: [Double] = []
                        while ContinuousClock.now < deadline {
                            let began = ContinuousClock.now
                            if kind == "ping" {
                                for _ in 0..<2 { _ = try await client.get("/ping") }
                            } else {
                                try await handOffPair(client, token: token, port: port)
                            }
                            samples.append((ContinuousClock.now - began).seconds)
                        }
                        return samples
                    }
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }.sorted()
        }
        let elapsed = (ContinuousClock.now - start).seconds
        guard !latencies.isEmpty else { throw BenchmarkFailure("no pair completed") }
        let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
        let cpu = HandOffBenchmark.processCPUSeconds() - cpuStart
        let switches = HandOffBenchmark.processContextSwitches() - switchesStart
        print("RESULT \(Double(latencies.count) / elapsed) \(latencies[latencies.count / 2]) \(p99) \(cpu) \(latencies.count) \(switches)")
    }

    /// Issue, then the interstitial's confirmation (a same-origin POST); the page's GET is not measured.
    private static func handOffPair(_ client: TestClient, token: String, port: Int) async throws {
        let issued = try await client.execute(
            .init(
                "/handoff", method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: "{}")))
        guard issued.status == .created, let body = issued.body,
            // The generator's own reading of the answer is part of each pair's CPU on these shared cores: the
            // token reader, not JSONSerialization.
            case .string(let code)? = JSONReader.object(Data(body.readableBytesView))?["handoffotp"]
        else {
            throw BenchmarkFailure("issue answered \(issued.status.code)")
        }
        let redeemed = try await client.execute(
            .init(
                "/handoff/redeem", method: .post, headers: [.origin: "http://127.0.0.1:\(port)", .contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "handoffotp=\(code)&goto=https%3A%2F%2Fweb.example.com%2Fapp")
            )
        )
        guard redeemed.status == .seeOther else { throw BenchmarkFailure("redeem answered \(redeemed.status.code)") }
    }

    private static func accessToken(_ emulator: Emulator) async throws -> String {
        let client = OIDCClient(
            configuration: ClientConfiguration(
                clientID: "backend", redirectURI: URL(string: "http://127.0.0.1:8080/cb")!,
                authentication: .clientSecretBasic(secret: "backend-secret")),
            provider: .discovery(issuer: emulator.issuer), logger: Logger(label: "bench") { _ in SwiftLogNoOpLogHandler() }
        )
        let session = try await client.prepareAuthorization()
        let transport = URLSessionTransport()
        let page = try await transport.send(Switchback.HTTPRequest(method: .get, url: session.authorizationURL))
        let html = String(decoding: page.body, as: UTF8.self)
        guard let range = html.range(of: "name=\"request\" value=\""), let end = html[range.upperBound...].firstIndex(of: "\"") else {
            throw BenchmarkFailure("no login form")
        }
        let login = try await transport.send(
            .form(
                URL(string: emulator.issuer + "/login")!,
                [("request", String(html[range.upperBound..<end])), ("username", "alice"), ("password", "Secret-123")]))
        guard let location = login.headers["location"], let callback = URL(string: location) else {
            throw BenchmarkFailure("no redirect after login")
        }
        return try await client.completeAuthorization(.redirect(callback), session: session).accessToken
    }

    private static func ms(_ seconds: Double) -> String { String(format: "%.2f", seconds * 1000) }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0)
    }
}

private struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
