import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackTesting
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client side of a complete hand-off sign-in — UAE Pass staging with its scheme bug, in the
/// simulated WebView: the coordinator, the state machine, the rewrite, PAR, the code exchange and
/// ID-token validation, plus the simulated device and URLSession — measured as this process's CPU time
/// while the emulator runs in a child process (so its CPU is not counted). Side by side: a plain code
/// flow (no hand-off, no device) in the same setup, the state machine and rewrite alone, and the goal.
enum HandOffBenchmark {
    static let goalMilliseconds = 2.0

    static func run(seconds: Double) async throws {
        print("\nClient CPU per complete sign-in (this process only; the emulator runs in a child process), \(seconds) s per row")
        print(Benchmarks.pad("case", 48) + Benchmarks.pad("CPU ms/sign-in", 16) + Benchmarks.pad("sign-ins/s", 12) + "goal")
        // The hand-off path is what is measured: a public client and an ID token keep the app-side sign-in self-contained.
        let uaePass = try ChildEmulator(profile: "uaepass", variants: ["staging-bug", "public-client", "id-token", "discovery"])
        defer { uaePass.stop() }
        let generic = try ChildEmulator(profile: "generic", variants: [])
        defer { generic.stop() }

        let devices = try await (0..<CodeFlowBenchmark.concurrency).asyncMap { _ in try await DeviceSignIn(issuer: uaePass.issuer) }
        let handOff = try await measure(seconds: seconds, lanes: devices.map { device in { try await device.signIn() } })
        row("hand-off: uaepass staging-bug, WebView rewrite", handOff, goal: true)

        let client = try CodeFlowBenchmark.client(issuer: generic.issuer)
        let emulator = try CodeFlowBenchmark.url(generic.issuer)
        let plain = try await measure(
            seconds: seconds,
            lanes: (0..<CodeFlowBenchmark.concurrency).map { _ in
                { try await plainCodeFlow(issuer: emulator, client: client) }
            })
        row("reference: plain code flow (no hand-off, no device)", plain, goal: false)

        let machine = try measureStateMachine(seconds: seconds / 2)
        print(
            Benchmarks.pad("state machine + navigation policy + rewrite only", 48) + Benchmarks.pad(String(format: "%.4f", machine), 16)
                + Benchmarks.pad("-", 12) + "-")
    }

    static func row(_ name: String, _ figures: (cpu: Double, rate: Double), goal: Bool) {
        let verdict = goal ? (figures.cpu < goalMilliseconds ? "< \(goalMilliseconds) ms: met" : "< \(goalMilliseconds) ms: NOT met") : "-"
        print(
            Benchmarks.pad(name, 48) + Benchmarks.pad(String(format: "%.3f", figures.cpu), 16)
                + Benchmarks.pad(String(format: "%.0f", figures.rate), 12) + verdict)
    }

    /// CPU milliseconds per operation and operations per second, each lane running sequentially.
    static func measure(seconds: Double, lanes: [@Sendable () async throws -> Void]) async throws -> (cpu: Double, rate: Double) {
        for lane in lanes { try await lane() }  // warms discovery, JWKS and connections
        let clock = ContinuousClock()
        let start = clock.now
        let cpuStart = processCPUSeconds()
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        let count = try await withThrowingTaskGroup(of: Int.self) { group in
            for lane in lanes {
                group.addTask {
                    var done = 0
                    while clock.now < deadline {
                        try await lane()
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let cpu = processCPUSeconds() - cpuStart
        let elapsed = start.duration(to: clock.now)
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (cpu / Double(count) * 1000, Double(count) / wall)
    }

    /// User plus system CPU time of this process.
    static func processCPUSeconds() -> Double {
        let usage = processUsage()
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// How many times this process's threads gave up a core, waiting (voluntary) or preempted.
    static func processContextSwitches() -> Double {
        let usage = processUsage()
        return Double(usage.ru_nvcsw + usage.ru_nivcsw)
    }

    private static func processUsage() -> rusage {
        var usage = rusage()
        #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        return usage
    }

    static func plainCodeFlow(issuer: URL, client: OIDCClient) async throws {
        let transport = CodeFlowBenchmark.sharedTransport
        let session = try await client.prepareAuthorization()
        let page = try await transport.send(HTTPRequest(method: .get, url: session.authorizationURL))
        let html = String(decoding: page.body, as: UTF8.self)
        guard let marker = html.range(of: "name=\"request\" value=\""), let end = html[marker.upperBound...].firstIndex(of: "\"") else {
            throw BenchmarkError(description: "no login form (HTTP \(page.status))")
        }
        let landing = try await transport.send(
            .form(
                issuer.appendingPathComponent("login"),
                [("request", String(html[marker.upperBound..<end])), ("username", "alice"), ("password", "Secret-123")]
            ))
        guard let location = landing.headers["location"], let callback = URL(string: location) else {
            throw BenchmarkError(description: "no redirect")
        }
        _ = try await client.completeAuthorization(.redirect(callback), session: session)
    }

    /// The pure part of a hand-off sign-in, per sign-in: every event of the WebView flow through the state
    /// machine, the navigation policy and the rewrite. Milliseconds per sign-in.
    static func measureStateMachine(seconds: Double) throws -> Double {
        let rule = ProviderPreset.uaePass.serving(from: ["stg-id.uaepass.ae"]).authenticator!
        let resume = "https://stg-id.uaepass.ae/resume?txn=T1"
        let link = try CodeFlowBenchmark.url(
            "uaepass://digitalid?txn=T1&successurl=\(FormEncoding.escape(resume))&failureurl=\(FormEncoding.escape(resume))&closeondone=true")
        let authorize = try CodeFlowBenchmark.url("https://stg-id.uaepass.ae/authorize?client_id=app&request_uri=urn:x")
        let callback = try CodeFlowBenchmark.url("com.example.app:/oauth/callback?code=C&state=S&iss=https%3A%2F%2Fstg-id.uaepass.ae")
        let returnTo = try CodeFlowBenchmark.url("com.example.app:/handoff")
        let plan = SignInFlow.Plan(
            flowID: "F1", strategy: .webView, authorizationURL: authorize, redirectURI: try CodeFlowBenchmark.url("com.example.app:/oauth/callback"),
            rewrite: .init(rule: rule, environment: .staging, returnTo: returnTo)
        )
        let back = try CodeFlowBenchmark.url("com.example.app:/handoff?switchback_flow=F1&switchback_outcome=success")
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        while start.duration(to: clock.now) < .milliseconds(Int(seconds * 1000)) {
            var flow = SignInFlow(plan)
            var actions = flow.handle(.start).count
            actions += flow.handle(.navigation(authorize)).count
            actions += flow.handle(.navigation(link)).count
            actions += flow.handle(.authenticatorLaunched).count + flow.handle(.enteredBackground).count
            actions += flow.handle(.openedURL(back)).count + flow.handle(.becameActive).count
            actions += flow.handle(.navigation(try CodeFlowBenchmark.url(resume))).count
            actions += flow.handle(.navigation(callback)).count + flow.handle(.exchangeSucceeded).count
            guard actions > 0, flow.state == .completed else { throw BenchmarkError(description: "the flow did not complete: \(flow.state)") }
            count += 1
        }
        let elapsed = start.duration(to: clock.now)
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18) / Double(count) * 1000
    }

    /// One simulated phone with the app, signing in again and again. It keeps the device: the app's seams
    /// hold it weakly, so without this reference it is gone before the first sign-in.
    final class DeviceSignIn: Sendable {
        let device: SimulatedDevice
        let app: RunningApp
        let request: SignInRequest

        init(issuer: String) async throws {
            let device = SimulatedDevice()
            self.device = device
            let issuerURL = try CodeFlowBenchmark.url(issuer)
            await device.installAuthenticator(scheme: "uaepassstg", backend: issuerURL)
            let configuration = ClientConfiguration(clientID: "native-rs", redirectURI: try CodeFlowBenchmark.url("com.example.app:/oauth/callback"))
            app = await device.install(
                SimulatedApp(appID: "A1B2C3D4E5.com.example.app", schemes: ["com.example.app"]) { context in
                    let client = OIDCClient(configuration: configuration, provider: .discovery(issuer: issuer), logger: CodeFlowBenchmark.quiet)
                    return SignInCoordinator(
                        .app(client), host: context.host, opener: context.opener, journal: context.journal, clock: context.clock,
                        logger: CodeFlowBenchmark.quiet
                    )
                })
            request = try await ProviderPreset.uaePass.serving(from: [issuerURL.host ?? "127.0.0.1"]).request(
                strategy: .webView, environment: .staging, links: .init(scheme: try CodeFlowBenchmark.url("com.example.app:/handoff"))
            )
        }

        func signIn() async throws {
            let credential = try await app.coordinator.signIn(request).credential
            guard credential?.idTokenClaims?.acr == UAEPassOptions.onDeviceACR else { throw BenchmarkError(description: "unexpected acr") }
        }
    }
}

/// The emulator in a child process: this same executable with `serve-emulator PROFILE VARIANT…`.
final class ChildEmulator: Sendable {
    let issuer: String
    private let process: Process
    private let input: Pipe

    init(profile: String, variants: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0])
        process.arguments = ["serve-emulator", profile] + variants
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        var text = ""
        while !text.contains("\n") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchmarkError(description: "the emulator child exited") }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("ISSUER ") else {
            throw BenchmarkError(description: "unexpected: \(text)")
        }
        issuer = String(line.dropFirst("ISSUER ".count))
        self.process = process
        self.input = input
    }

    /// Closing the child's standard input stops it.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The child's side: serves until its standard input closes.
    static func serve(profile name: String, variants: [String]) async throws {
        guard case .success(let profile) = Profile.named(name, variants: variants) else {
            throw BenchmarkError(description: "unknown profile \(name)")
        }
        var logger = Logger(label: "switchback.benchmark.emulator")
        logger.logLevel = .error
        let emulator = try await Emulator.start(profile: profile, logger: logger)
        FileHandle.standardOutput.write(Data("ISSUER \(emulator.issuer)\n".utf8))
        _ = await Task.detached { FileHandle.standardInput.readDataToEndOfFile() }.value
        await emulator.stop()
    }
}

extension Sequence where Element: Sendable {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
