import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator

/// Complete code flows per second — authorization request, the user's sign-in, code redemption with
/// PKCE, ID-token validation — against the emulator and against glewlwyd (a real provider written in C),
/// in the same run, with the same client and the same number of concurrent flows.
enum CodeFlowBenchmark {
    static let concurrency = Int(ProcessInfo.processInfo.environment["BENCH_CONCURRENCY"] ?? "") ?? 4

    static func run(seconds: Double) async throws {
        print("\nComplete code flows (authorize → sign-in → token → ID-token validation), \(seconds) s, \(concurrency) flows at a time")
        print(Benchmarks.pad("provider", 30) + Benchmarks.pad("flows/s", 10) + "HTTP requests per flow")
        let emulator = try await Emulator.start(logger: quiet)
        let emulatorClient = try client(issuer: emulator.issuer)
        let emulatorRate = try await rate(seconds: seconds) { try await emulatorFlow(emulator: emulator, client: emulatorClient) }
        await emulator.stop()
        print(
            Benchmarks.pad("switchback emulator", 30) + Benchmarks.pad(String(format: "%.0f", emulatorRate), 10)
                + "3 (authorize page, login form, token)")

        guard let issuer = ProcessInfo.processInfo.environment["GLEWLWYD_ISSUER"] else {
            print(Benchmarks.pad("glewlwyd", 30) + "not running: start it with ../shared/peers/glewlwyd/up.sh and export its env")
            return
        }
        let glewlwyd = try await Glewlwyd(issuer: issuer)
        let glewlwydRate = try await rate(seconds: seconds) { try await glewlwyd.flow() }
        print(
            Benchmarks.pad("glewlwyd 2.7.5", 30) + Benchmarks.pad(String(format: "%.0f", glewlwydRate), 10)
                + "2 (authorize with a signed-in session, token)")
        print(String(format: "emulator / glewlwyd: %.2f", emulatorRate / glewlwydRate))
    }

    static func url(_ text: String) throws -> URL {
        guard let url = URL(string: text) else { throw BenchmarkError(description: "not a URL: \(text)") }
        return url
    }

    static func client(issuer: String) throws -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "native-rs", redirectURI: try url("com.example.app:/oauth/callback"), scopes: ["openid", "profile"],
                pushedAuthorization: .never
            ),
            provider: .discovery(issuer: issuer),
            logger: quiet
        )
    }

    /// Warnings only: per-flow info lines would cost more than some of what is measured.
    static let quiet: Logger = {
        var logger = Logger(label: "switchback.benchmark")
        logger.logLevel = .warning
        return logger
    }()

    static func emulatorFlow(emulator: Emulator, client: OIDCClient) async throws {
        let transport = sharedTransport
        let session = try await client.prepareAuthorization()
        let page = try await transport.send(HTTPRequest(method: .get, url: session.authorizationURL))
        let html = String(decoding: page.body, as: UTF8.self)
        guard let marker = html.range(of: "name=\"request\" value=\""), let end = html[marker.upperBound...].firstIndex(of: "\"") else {
            throw BenchmarkError(description: "the emulator showed no login form (HTTP \(page.status))")
        }
        let login = try url(emulator.issuer + "/login")
        let landing = try await transport.send(
            .form(login, [("request", String(html[marker.upperBound..<end])), ("username", "alice"), ("password", "Secret-123")]))
        guard landing.status == 302, let location = landing.headers["location"], let callback = URL(string: location) else {
            throw BenchmarkError(description: "the emulator did not redirect to the app (HTTP \(landing.status))")
        }
        _ = try await client.completeAuthorization(.redirect(callback), session: session)
    }

    /// glewlwyd with alice signed in and consent given once, as a browser with a session would be.
    struct Glewlwyd {
        let client: OIDCClient
        let cookie: String

        init(issuer: String) async throws {
            let url = CodeFlowBenchmark.url
            client = try CodeFlowBenchmark.client(issuer: issuer)
            let api = String(issuer.dropLast("/oidc".count))
            let signIn = try await sharedTransport.send(
                HTTPRequest(
                    method: .post, url: try url(api + "/auth/"), headers: ["Content-Type": "application/json"],
                    body: Data(#"{"username":"alice","password":"Secret-123"}"#.utf8)
                ))
            guard signIn.status == 200, let setCookie = signIn.headers["set-cookie"], let pair = setCookie.split(separator: ";").first else {
                throw BenchmarkError(description: "glewlwyd sign-in failed (HTTP \(signIn.status))")
            }
            cookie = String(pair)
            let grant = try await sharedTransport.send(
                HTTPRequest(
                    method: .put, url: try url(api + "/auth/grant/native-rs"), headers: ["Content-Type": "application/json", "Cookie": cookie],
                    body: Data(#"{"scope":"openid profile"}"#.utf8)
                ))
            guard grant.status == 200 else { throw BenchmarkError(description: "glewlwyd consent failed (HTTP \(grant.status))") }
        }

        func flow() async throws {
            let url = CodeFlowBenchmark.url
            let session = try await client.prepareAuthorization()
            let authorize = try url(session.authorizationURL.absoluteString + "&g_continue")
            let landing = try await sharedTransport.send(HTTPRequest(method: .get, url: authorize, headers: ["Cookie": cookie]))
            guard landing.status == 302, let location = landing.headers["location"], let callback = URL(string: location) else {
                throw BenchmarkError(description: "glewlwyd did not redirect to the app (HTTP \(landing.status))")
            }
            _ = try await client.completeAuthorization(.redirect(callback), session: session)
        }
    }

    static let sharedTransport = URLSessionTransport()

    /// Flows per second over `seconds`, `concurrency` at a time.
    static func rate(seconds: Double, _ flow: @escaping @Sendable () async throws -> Void) async throws -> Double {
        try await flow()  // warms discovery and the JWKS cache
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        let count = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var done = 0
                    while clock.now < deadline {
                        try await flow()
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = start.duration(to: clock.now)
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
