import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@_spi(SwitchbackInternals) import SwitchbackTesting
import SwitchbackEmulator
import ToolsTestSupport

/// `switchback-companion`, the production companion on its own, run as the built executable.
@Suite("switchback-companion")
struct CompanionCommandTests {
    static var executable: URL {
        get throws {
            let binary = try VerifyIDTokenCommandTests.executable.deletingLastPathComponent().appendingPathComponent("switchback-companion")
            guard FileManager.default.isExecutableFile(atPath: binary.path) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: binary.path])
            }
            return binary
        }
    }

    @Test("serves what its configuration turns on, prints its routes and limits, and stops cleanly on SIGTERM")
    func servesConfiguration() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-companion-\(UUID().uuidString).json")
        try Data(
            #"{"port": 0, "associations": [{"appIDs": ["A1B2C3D4E5.com.example.app"], "paths": ["/appswitch*"], "androidFingerprints": []}]}"#.utf8
        ).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = try ChildProcess(try Self.executable.path, ["--config", file.path])
        defer { process.send(SIGKILL) }
        let banner = process.readOutput(until: "routes:\n")
        #expect(banner.hasPrefix("Switchback companion on http://127.0.0.1:"))
        #expect(banner.contains("store: memory") && banner.contains("limits: "))
        #expect(!banner.contains("WARNING"), "no emulator, nothing to warn about")
        let base = try #require(banner.split(separator: " ").dropFirst(3).first.map { $0.trimmingCharacters(in: .punctuationCharacters) })
        let association = try await URLSessionTransport().send(
            HTTPRequest(method: .get, url: try #require(URL(string: "\(base)/.well-known/apple-app-site-association"))))
        #expect(String(decoding: association.body, as: UTF8.self).contains("A1B2C3D4E5.com.example.app"))
        process.send(SIGTERM)
        #expect(await process.wait() == 0)
    }

    @Test("--probe asks the running companion on its configured port: 0 on 200, 1 on any other answer or none (Docker's HEALTHCHECK)")
    func probe() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-companion-\(UUID().uuidString).json")
        try Data(#"{"port": 0}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = try ChildProcess(try Self.executable.path, ["--config", file.path])
        defer { process.send(SIGKILL) }
        let banner = process.readOutput(until: "routes:\n")
        let base = try #require(banner.split(separator: " ").dropFirst(3).first.map { $0.trimmingCharacters(in: .punctuationCharacters) })
        let port = try #require(URL(string: base)?.port)
        func probe(_ path: String, port: Int? = port) async throws -> ChildProcess.Outcome {
            try await ChildProcess.run(
                try Self.executable.path, ["--config", file.path, "--probe", path] + (port.map { ["--port", "\($0)"] } ?? []))
        }
        let health = try await probe("/health")
        #expect(health.status == 0 && health.stdout.contains("127.0.0.1:\(port)/health: 200"), "\(health.stdout) \(health.stderr)")
        let ready = try await probe("/ready")
        #expect(
            ready.status == 0 && ready.stdout.components(separatedBy: ": 200 ").last?.contains("ready") == true, "\(ready.stdout) \(ready.stderr)")
        // Only the port matters to a probe: a key the start would read is not read (a rotation in progress
        // does not turn a serving instance unhealthy), and a configuration it cannot read at all is status 1.
        let withKey = file.deletingLastPathComponent().appendingPathComponent("switchback-probe-\(UUID().uuidString).json")
        try Data(#"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "b", "privateKeyFile": "/nonexistent/key.pem"}}"#.utf8)
            .write(to: withKey)
        defer { try? FileManager.default.removeItem(at: withKey) }
        let keyNotRead = try await ChildProcess.run(try Self.executable.path, ["--config", withKey.path, "--port", "\(port)", "--probe", "/health"])
        #expect(keyNotRead.status == 0, "\(keyNotRead.stderr)")
        let unreadable = try await ChildProcess.run(try Self.executable.path, ["--config", "/nonexistent/companion.json", "--probe", "/health"])
        #expect(unreadable.status == 1 && !unreadable.stderr.contains("Usage:"), "\(unreadable.status) \(unreadable.stderr)")
        let noConfig = try await ChildProcess.run(try Self.executable.path, ["--probe", "/health"])
        #expect(noConfig.status == 1 && noConfig.stderr.contains("SWITCHBACK_CONFIG"), "\(noConfig.status) \(noConfig.stderr)")
        let missing = try await probe("/no-such-route")
        #expect(missing.status == 1 && missing.stderr.contains(": 404"), "\(missing.stderr)")
        let noPort = try await probe("/health", port: nil)
        #expect(noPort.status == 1 && noPort.stderr.contains("port is 0"), "\(noPort.stderr)")
        let notAPath = try await probe("http://example.com/health")
        #expect(notAPath.status == 1 && notAPath.stderr.contains("--probe takes a path"), "\(notAPath.stderr)")
        // The Dockerfile's HEALTHCHECK, as the image runs it: the configuration from SWITCHBACK_CONFIG.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let dockerfile = try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let command = try #require(
            dockerfile.components(separatedBy: "HEALTHCHECK ").dropFirst().first?.components(separatedBy: "CMD ").dropFirst().first)
        let line = try #require(command.split(separator: "\n").first)
        let arguments = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String])
        #expect(arguments.first == "/usr/local/bin/switchback-companion")
        let docker = try await ChildProcess.run(
            try Self.executable.path, Array(arguments.dropFirst()), environment: ["SWITCHBACK_CONFIG": file.path, "SWITCHBACK_PORT": "\(port)"])
        #expect(docker.status == 0 && docker.stdout.contains("/health: 200"), "\(arguments) \(docker.stdout) \(docker.stderr)")

        process.send(SIGTERM)
        #expect(await process.wait() == 0)
        let stopped = try await probe("/health")
        #expect(stopped.status == 1 && stopped.stderr.contains("no answer"), "\(stopped.stderr)")
    }

    /// Whether this machine can listen on IPv6 loopback (a container may run with IPv6 turned off).
    static let canListenOnIPv6Loopback: Bool = {
        #if canImport(Glibc)
            let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET6, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) == 0 }
        }
    }()

    @Test(
        "on IPv6 loopback: the emulator's issuer, the banner and the probe write the address in brackets, and /ready reaches the provider there",
        .enabled(if: canListenOnIPv6Loopback, "this machine cannot listen on ::1")
    )
    func ipv6Loopback() async throws {
        let emulator = try await Emulator.start(host: "::1")
        try await withStopping(emulator, stop: { await $0.stop() }) { emulator in
            // Before the host went through one bracketing rule, the emulator's issuer was `http://::1:PORT`.
            #expect(emulator.issuer == "http://[::1]:\(emulator.port)")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-companion-\(UUID().uuidString).json")
            let configuration =
                #"{"host": "::1", "port": 0, "provider": {"issuer": "ISSUER", "clientID": "backend", "clientSecret": "backend-secret"}}"#
            try Data(configuration.replacingOccurrences(of: "ISSUER", with: emulator.issuer).utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let process = try ChildProcess(try Self.executable.path, ["--config", file.path])
            defer { process.send(SIGKILL) }
            let banner = process.readOutput(until: "routes:\n")
            #expect(banner.hasPrefix("Switchback companion on http://[::1]:"), "\(banner)")
            let port = try #require(
                banner.split(separator: " ").dropFirst(3).first.flatMap { URL(string: $0.trimmingCharacters(in: .punctuationCharacters)) }?.port)
            // The first /ready starts the fetch of the provider's metadata and answers `pending` while it lasts
            // (a loaded machine can take more than the check's 2 s), so the probe is asked until it is ready.
            func probeReady() async throws -> ChildProcess.Outcome {
                try await ChildProcess.run(try Self.executable.path, ["--config", file.path, "--port", "\(port)", "--probe", "/ready"])
            }
            var ready = try await probeReady()
            let deadline = ContinuousClock.now + .seconds(60)
            while ready.status != 0, ready.stderr.contains(#""provider":"pending""#), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(500))
                ready = try await probeReady()
            }
            #expect(ready.status == 0 && ready.stdout.contains("http://[::1]:\(port)/ready: 200"), "\(ready.stdout) \(ready.stderr)")
            #expect(ready.stdout.contains(#""provider":"ok""#), "\(ready.stdout)")
            process.send(SIGTERM)
            #expect(await process.wait() == 0)
        }
    }

    @Test("without --config, or with one it cannot use, it refuses before listening")
    func refusesWithoutUsableConfig() async throws {
        let missing = try await ChildProcess.run(try Self.executable.path, [])
        #expect(missing.status != 0 && missing.stderr.contains("--config"), "\(missing.stderr)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-companion-\(UUID().uuidString).json")
        try Data(#"{"port": 0, "provider": {"issuer": "http://id.example.com", "clientID": "b", "clientSecret": "s"}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let unsafe = try await ChildProcess.run(try Self.executable.path, ["--config", file.path])
        #expect(unsafe.status != 0 && unsafe.stderr.contains("provider.issuer must be an https URL"), "\(unsafe.stderr)")
    }

    @Test(
        "--print-config shows the effective configuration from the file, the environment and secret files, secrets redacted; a bad value is refused by key"
    )
    func printConfig() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-companion-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("secrets"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("companion.json")
        try Data(#"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "backend"}}"#.utf8).write(to: file)
        try Data("secret-from-a-file\n".utf8).write(to: directory.appendingPathComponent("secrets/provider-clientSecret"))
        let printed = try await ChildProcess.run(
            try Self.executable.path, ["--print-config"],
            environment: [
                "SWITCHBACK_CONFIG": file.path, "SWITCHBACK_SECRETS_DIRECTORY": directory.appendingPathComponent("secrets").path,
                "SWITCHBACK_PORT": "9300",
            ])
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(printed.stdout.contains("\"port\" : 9300") && printed.stdout.contains("\"clientSecret\" : \"<redacted>\""), "\(printed.stdout)")
        #expect(!printed.stdout.contains("secret-from-a-file") && !printed.stdout.contains("Switchback companion on"), "printed, not served")
        let refused = try await ChildProcess.run(
            try Self.executable.path, ["--config", file.path, "--print-config"], environment: ["SWITCHBACK_LIMITS_TRUSTED_HOPS": "many"])
        #expect(refused.status != 0 && refused.stderr.contains("limits.trustedHops (from SWITCHBACK_LIMITS_TRUSTED_HOPS)"), "\(refused.stderr)")
        // A key the start could not use: the configuration is still printed (an operator checking it where the
        // key files are not), then the key's setting is refused as the other unusable value above is.
        let withKeyFile = directory.appendingPathComponent("with-key.json")
        try Data(#"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "b", "privateKeyFile": "/nonexistent/key.pem"}}"#.utf8)
            .write(to: withKeyFile)
        let missingKey = try await ChildProcess.run(try Self.executable.path, ["--config", withKeyFile.path, "--print-config"])
        #expect(missingKey.status == refused.status && missingKey.stdout.contains("nonexistent"), "\(missingKey.stdout)")
        #expect(missingKey.stderr.contains("provider.privateKeyFile:"), "\(missingKey.stderr)")
        let badKey = try await ChildProcess.run(
            try Self.executable.path, ["--config", file.path, "--print-config"], environment: ["SWITCHBACK_PROVIDER_PRIVATE_KEY": "not-a-key-at-all"])
        #expect(badKey.status == refused.status && badKey.stdout.contains("\"privateKey\" : \"<redacted>\""), "\(badKey.stdout) \(badKey.stderr)")
        #expect(badKey.stderr.contains("provider.privateKey:") && !(badKey.stdout + badKey.stderr).contains("not-a-key-at-all"), "\(badKey.stderr)")
        // A key pasted where its path belongs: refused before printing, and repeated nowhere.
        let pasted = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg-pasted\n-----END PRIVATE KEY-----"
        let keyAsPath = try await ChildProcess.run(
            try Self.executable.path, ["--config", file.path, "--print-config"], environment: ["SWITCHBACK_PROVIDER_PRIVATE_KEY_FILE": pasted])
        #expect(
            keyAsPath.status == refused.status && keyAsPath.stderr.contains("provider.privateKeyFile holds a key, not a path"), "\(keyAsPath.stderr)")
        #expect(!(keyAsPath.stdout + keyAsPath.stderr).contains("-pasted") && keyAsPath.stdout.isEmpty, "\(keyAsPath.stdout) \(keyAsPath.stderr)")
        let usable = try await ChildProcess.run(
            try Self.executable.path, ["--config", file.path, "--print-config"], environment: ["SWITCHBACK_PROVIDER_CLIENT_SECRET": "s"])
        #expect(usable.status == 0 && usable.stderr.isEmpty, "\(usable.stderr)")
    }

    @Test("a database it cannot reach ends the start with a message naming it, and an orderly exit, not a crash")
    func unreachableDatabase() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-companion-\(UUID().uuidString).json")
        try Data(
            #"{"port": 0, "postgresURL": "postgres://switchback@127.0.0.1:1/switchback", "recordKeys": ["AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"]}"#
                .utf8
        ).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try await ChildProcess.run(try Self.executable.path, ["--config", file.path])
        #expect(run.status != 0 && run.status < 128, "an error exit, not a signal (status \(run.status))")
        #expect(run.stderr.contains("PostgreSQL store (127.0.0.1:1, database switchback) did not start"), "\(run.stderr)")
        // The first connection's own error, tried again until the start's timeout (a database may be starting):
        // the pool alone would only have timed out, without a reason.
        #expect(run.stderr.contains("no connection within") && run.stderr.contains("Connection refused"), "\(run.stderr)")
        #expect(!run.stderr.contains("Fatal error"), "\(run.stderr)")
    }

    @Test("the binary carries no emulator, simulated device or demo (the switchback tool, which does, is the control)")
    func noDevelopmentCode() throws {
        func contains(_ binary: URL, _ module: String) throws -> Bool {
            try Data(contentsOf: binary).range(of: Data(module.utf8)) != nil
        }
        for module in ["SwitchbackEmulator", "SimulatedDevice", "SwitchbackScenarios"] {
            #expect(try contains(try VerifyIDTokenCommandTests.executable, module), "the control must find \(module)")
            #expect(try !contains(try Self.executable, module), "switchback-companion links \(module)")
        }
    }
}
