import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// Two `switchback-companion` processes on one PostgreSQL, as a deployment runs them behind a load balancer.
@Suite("switchback-companion: two instances on one PostgreSQL")
struct CompanionInstancesTests {
    /// One companion process; its base URL from its banner.
    struct Instance {
        let process: ChildProcess
        let base: String

        static func start(configuration file: URL) throws -> Instance {
            let process = try ChildProcess(try CompanionCommandTests.executable.path, ["--config", file.path])
            let banner = process.readOutput(until: "routes:\n")
            guard let base = banner.split(separator: " ").dropFirst(3).first.map({ $0.trimmingCharacters(in: .punctuationCharacters) }) else {
                process.send(SIGKILL)
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no banner: \(banner)"])
            }
            return Instance(process: process, base: base)
        }

        func post(_ path: String, _ object: [String: Any]) async throws -> (status: Int, json: [String: Any]) {
            let response = try await URLSessionTransport().send(
                HTTPRequest(
                    method: .post, url: URL(string: base + path)!, headers: ["Content-Type": "application/json"],
                    body: try JSONSerialization.data(withJSONObject: object)))
            return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
        }
    }

    @Test(
        "a sign-in started on one instance finishes on the other; a completion finished on one wakes the app waiting on the other by NOTIFY within 50 ms, with no store polling",
        .enabled(if: StoreKind.postgresURL != nil || StoreKind.runningInCI))
    func twoProcesses() async throws {
        let postgres = try #require(StoreKind.postgresURL, "CI=true but SWITCHBACK_TEST_POSTGRES_URL is unset")
        var emulatorConfiguration = EmulatorConfiguration.defaults
        for index in emulatorConfiguration.clients.indices where emulatorConfiguration.clients[index].clientID == "backend" {
            emulatorConfiguration.clients[index].redirectURIs += ["http://127.0.0.1/complete"]
        }
        let emulator = try await Emulator.start(
            profile: .generic, configuration: emulatorConfiguration, logger: Logger(label: "emulator") { _ in SwiftLogNoOpLogHandler() })
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-instances-\(UUID().uuidString).json")
        // No store recheck (the default): only a notification can wake the waiting request in time.
        let json = """
            {"port": 0, "postgresURL": "\(postgres)", "recordKeys": ["\(Base64URL.encode(Data((0..<32).map { _ in UInt8.random(in: 0...255) })))"],
             "provider": {"issuer": "\(emulator.issuer)", "clientID": "backend", "clientSecret": "backend-secret"},
             "exchange": {"redirectURIs": ["com.example.app:/oauth/callback"], "returns": "session"},
             "completion": {"appLink": "https://app.example.com/signed-in", "maximumWait": 25}}
            """
        try Data(json.utf8).write(to: file)
        let first = try Instance.start(configuration: file)
        let second: Instance
        do {
            second = try Instance.start(configuration: file)
        } catch {
            first.process.send(SIGKILL)
            throw error
        }
        defer {
            first.process.send(SIGKILL)
            second.process.send(SIGKILL)
            try? FileManager.default.removeItem(at: file)
        }

        // Started on the first, redeemed on the second.
        let binding = "app-binding-" + Base64URL.encode(SystemEntropy().randomBytes(count: 16))
        let started = try await first.post("/exchange/start", ["redirect_uri": "com.example.app:/oauth/callback", "binding": binding])
        #expect(started.status == 200)
        guard
            case .redirect(let callback) = try await EmulatorBrowser().signIn(
                try #require(URL(string: started.json["authorization_url"] as? String ?? "")))
        else {
            Issue.record("the provider did not redirect")
            return
        }
        let exchanged = try await second.post("/exchange", ["callback_url": callback, "binding": binding])
        #expect(exchanged.status == 200 && exchanged.json["sub"] as? String == "9b1f7c2e-alice", "\(exchanged.json)")
        // The same response again, on the first: used once across instances.
        #expect(try await first.post("/exchange", ["callback_url": callback, "binding": binding]).status == 400)

        // A completion: the provider returns to the first, the app waits on the second. Twice: the goal
        // (within 50 ms) holds for the faster of the two, so that one stall of a loaded machine between
        // two processes cannot fail it; each must still be woken by the notification, far sooner than the
        // 25 s wait or the store's recheck.
        var delays: [Duration] = []
        for _ in 0..<2 {
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            let completion = try await first.post("/completion/start", ["flow_id": flowID])
            let authorizationURL = try #require(URL(string: completion.json["authorization_url"] as? String ?? ""))
            let waiting = Task { () -> (status: Int, state: String?, at: ContinuousClock.Instant) in
                let answer = try await second.post("/completion/status", ["flow_id": flowID, "wait": 25])
                return (answer.status, answer.json["status"] as? String, ContinuousClock.now)
            }
            try await Task.sleep(for: .milliseconds(300))  // the status request is waiting on the second
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(authorizationURL) else {
                Issue.record("the provider did not redirect")
                return
            }
            #expect(location.hasPrefix(first.base + "/complete"), "the provider returns to the first instance")
            let finalPage = try await URLSessionTransport().send(HTTPRequest(method: .get, url: try #require(URL(string: location))))
            let finished = ContinuousClock.now
            #expect(finalPage.status == 200)
            let woken = try await waiting.value
            #expect(woken.status == 202 && woken.state == "awaiting_return", "\(woken)")
            let delay = woken.at - finished
            #expect(delay < .seconds(10), "woken by the notification, not the wait's end: \(delay)")
            delays.append(delay)
        }
        #expect(delays.min()! < .milliseconds(50), "woken \(delays) after the first instance answered the provider's return")

        first.process.send(SIGTERM)
        second.process.send(SIGTERM)
        #expect(await first.process.wait() == 0)
        #expect(await second.process.wait() == 0)
        await emulator.stop()
    }
}
