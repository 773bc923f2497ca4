import Configuration
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackServer
import ToolsTestSupport

/// The companion's settings as deployments pass them: a JSON file, `SWITCHBACK_…` environment variables and
/// a directory of secret files, in that order of precedence from last to first.
@Suite("Companion configuration from the file, the environment and secret files")
struct ConfigurationSourcesTests {
    /// A file with a provider, a hand-off and PostgreSQL; a secrets directory beside it.
    struct Deployment {
        let directory: URL
        var file: String { directory.appendingPathComponent("companion.json").path }
        var secrets: String { directory.appendingPathComponent("secrets").path }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-config-\(UUID().uuidString)")
            try FileManager.default.createDirectory(atPath: directory.appendingPathComponent("secrets").path, withIntermediateDirectories: true)
            let json = """
                {"port": 8080, "publicURL": "https://auth.example.com",
                 "provider": {"issuer": "https://id.example.com", "clientID": "backend", "clientSecret": "from-the-file"},
                 "handOff": {"allowedRedirects": ["https://web.example.com/app"], "audience": "https://auth.example.com"},
                 "postgresURL": "postgres://switchback@db.internal:5432/switchback?sslmode=verify-full",
                 "recordKeys": ["AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"],
                 "limits": {"directClients": true}}
                """
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
        }

        func secret(_ name: String, _ value: String) throws {
            try Data(value.utf8).write(to: URL(fileURLWithPath: secrets).appendingPathComponent(name))
        }

        func load(_ environment: [String: String]) async throws -> ServerConfiguration {
            try await ServerConfiguration.load(.init(file: file, environment: environment, secretsDirectory: secrets))
        }

        /// What loading with `environment` comes to: "loaded", or the error as it is described.
        func outcome(_ environment: [String: String]) async -> String {
            do {
                _ = try await load(environment)
                return "loaded"
            } catch {
                return String(describing: error)
            }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        /// Runs `body` with a deployment of its own, removed after.
        static func with(_ body: (Deployment) async throws -> Void) async throws {
            let deployment = try Deployment()
            defer { deployment.remove() }
            try await body(deployment)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("the environment wins over secret files, which win over the file; secret files are trimmed; lists are comma-separated")
    func precedence() async throws {
        try await Deployment.with { deployment in
            #expect(try await deployment.load([:]).port == 8080)
            try deployment.secret("port", "9000\n")
            try deployment.secret("provider-clientSecret", "from-a-secret-file\n")
            try deployment.secret("postgresPassword", "p@ss/word")
            let fromSecrets = try await deployment.load([:])
            #expect(fromSecrets.port == 9000)
            #expect(fromSecrets.provider?.clientSecret == "from-a-secret-file")
            let postgresURL = try #require(fromSecrets.postgresURL)
            let postgres = try #require(URLComponents(string: postgresURL))
            #expect(postgres.password == "p@ss/word" && postgres.host == "db.internal" && postgres.query == "sslmode=verify-full")

            let fromEnvironment = try await deployment.load([
                "SWITCHBACK_PORT": "9100", "SWITCHBACK_PROVIDER_CLIENT_SECRET": "from-the-environment",
                "SWITCHBACK_HAND_OFF_ALLOWED_REDIRECTS": "https://web.example.com/app, https://shop.example.com/",
                "SWITCHBACK_LIMITS_SHUTDOWN_GRACE": "25", "SWITCHBACK_HAND_OFF_DPOP_BOUND_ONLY": "true", "UNRELATED": "x",
                "SWITCHBACK_LIMITS_IDLE_TIMEOUT": "90", "SWITCHBACK_LIMITS_BODY_TIMEOUT": "12", "SWITCHBACK_LIMITS_MAX_CONNECTIONS": "0",
                "SWITCHBACK_LIMITS_WRITE_TIMEOUT": "15",
            ])
            #expect(fromEnvironment.port == 9100)
            #expect(fromEnvironment.provider?.clientSecret == "from-the-environment")
            #expect(fromEnvironment.handOff?.allowedRedirects == ["https://web.example.com/app", "https://shop.example.com/"])
            #expect(fromEnvironment.limits.shutdownGrace == 25)
            #expect(fromEnvironment.limits.idleTimeout == 90)
            #expect(fromSecrets.limits.idleTimeout == 75, "the default, above AWS ALB's 60 s")
            #expect(fromEnvironment.limits.bodyTimeout == 12 && fromSecrets.limits.bodyTimeout == 30)
            #expect(fromEnvironment.limits.writeTimeout == 15 && fromSecrets.limits.writeTimeout == 30)
            #expect(fromEnvironment.limits.maxConnections == 0 && fromSecrets.limits.maxConnections == 10_000)
            #expect(fromEnvironment.handOff?.dpopBoundOnly == true)
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("an invalid value names its key and where it came from, and never repeats a secret")
    func invalidValuesNameTheirKey() async throws {
        try await Deployment.with { deployment in
            let port = await deployment.outcome(["SWITCHBACK_PORT": "eighty"])
            #expect(port.contains("port (from SWITCHBACK_PORT)") && !port.contains("eighty"), "\(port)")
            let flag = await deployment.outcome(["SWITCHBACK_LIMITS_DIRECT_CLIENTS": "maybe"])
            #expect(flag.contains("limits.directClients (from SWITCHBACK_LIMITS_DIRECT_CLIENTS)"), "\(flag)")
            // A value that parses but that validation refuses: the key in the validation's message.
            let grace = await deployment.outcome(["SWITCHBACK_LIMITS_SHUTDOWN_GRACE": "100000"])
            #expect(grace.contains("limits.shutdownGrace"), "\(grace)")
            let idle = await deployment.outcome(["SWITCHBACK_LIMITS_IDLE_TIMEOUT": "0"])
            #expect(idle.contains("limits.idleTimeout"), "\(idle)")
            let body = await deployment.outcome(["SWITCHBACK_LIMITS_BODY_TIMEOUT": "0"])
            #expect(body.contains("limits.bodyTimeout"), "\(body)")
            let write = await deployment.outcome(["SWITCHBACK_LIMITS_WRITE_TIMEOUT": "7200"])
            #expect(write.contains("limits.writeTimeout"), "\(write)")
            // Each waiting status request holds a connection: a cap at or below their number is refused.
            let cap = await deployment.outcome(["SWITCHBACK_LIMITS_MAX_CONNECTIONS": "2000"])
            #expect(cap.contains("limits.maxConnections") && cap.contains("waitingStatusRequests"), "\(cap)")
            #expect(await deployment.outcome(["SWITCHBACK_LIMITS_MAX_CONNECTIONS": "2001"]) == "loaded")
            let missingSection = await deployment.outcome(["SWITCHBACK_COMPLETION_APP_LINK": "https://app.example.com/x"])
            #expect(missingSection.contains("completion.appLink") && missingSection.contains("no completion section"), "\(missingSection)")
            // A password for a URL without a user: refused without echoing the password.
            try Data(#"{"port": 8080}"#.utf8).write(to: URL(fileURLWithPath: deployment.file))
            let password = await deployment.outcome(["SWITCHBACK_POSTGRES_PASSWORD": "hunter2-secret"])
            #expect(password.contains("postgresPassword (from SWITCHBACK_POSTGRES_PASSWORD)") && !password.contains("hunter2"), "\(password)")
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(
        "as Kubernetes mounts them: a secret file that is a symbolic link is read; an empty variable hides no secret file; a service link in SWITCHBACK_PORT is named"
    )
    func kubernetesShapes() async throws {
        try await Deployment.with { deployment in
            // Kubernetes: secrets/provider-clientSecret -> ..data/provider-clientSecret
            let data = URL(fileURLWithPath: deployment.secrets).appendingPathComponent("..2026_11_26_data")
            try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            try Data("from-a-linked-file\n".utf8).write(to: data.appendingPathComponent("provider-clientSecret"))
            try FileManager.default.createSymbolicLink(
                atPath: URL(fileURLWithPath: deployment.secrets).appendingPathComponent("provider-clientSecret").path,
                withDestinationPath: "..2026_11_26_data/provider-clientSecret")
            #expect(try await deployment.load([:]).provider?.clientSecret == "from-a-linked-file")
            #expect(try await deployment.load(["SWITCHBACK_PROVIDER_CLIENT_SECRET": ""]).provider?.clientSecret == "from-a-linked-file")
            do {
                _ = try await deployment.load(["SWITCHBACK_PORT": "tcp://10.0.0.7:8080"])
                Issue.record("a service link was taken for a port")
            } catch {
                #expect(String(describing: error).contains("enableServiceLinks"), "\(error)")
            }
            await #expect(throws: SwitchbackError.self, "a secrets directory named but missing (a failed mount)") {
                _ = try await ServerConfiguration.load(.init(file: deployment.file, environment: [:], secretsDirectory: deployment.secrets + "-gone"))
            }
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test(
        "private keys as secrets: the PEM from a secret file or a variable, parsed at load; a key that cannot be used names its setting, never its content"
    )
    func keysAsSecrets() async throws {
        try await Deployment.with { deployment in
            // The file names no client authentication: the secrets give it.
            try Data(
                """
                {"port": 8080, "provider": {"issuer": "https://id.example.com", "clientID": "backend", "keyID": "backend-key"},
                 "limits": {"directClients": true}}
                """.utf8
            ).write(to: URL(fileURLWithPath: deployment.file))
            let signing = try await EmulatorHarness.clientKeys(kid: "backend-key").pem
            let decryption = try await EmulatorHarness.clientKeys(kid: "enc-1").pem
            let missing = await deployment.outcome([:])
            #expect(missing.contains("clientSecret") && missing.contains("privateKey"), "\(missing)")

            try deployment.secret("provider-privateKey", signing + "\n")
            let loaded = try await deployment.load(["SWITCHBACK_PROVIDER_DECRYPTION_KEY": decryption])
            #expect(loaded.provider?.privateKey == signing.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(loaded.provider?.decryptionKey == decryption)
            let printed = loaded.printed()
            let body = try #require(signing.split(separator: "\n").dropFirst().first)
            let decryptionBody = try #require(decryption.split(separator: "\n").dropFirst().first)
            #expect(!printed.contains(body) && !printed.contains(decryptionBody) && !printed.contains("PRIVATE KEY"), "\(printed)")
            // On one line, its breaks written as `\n` or `\r\n` (a `docker run --env-file` line): the same keys,
            // parsed at load (a load that throws fails the test).
            let escaped = decryption.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\n", with: "\\n")
            let escapedSigning = signing.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "\n", with: "\\r\\n")
            let oneLine = try await deployment.load([
                "SWITCHBACK_PROVIDER_DECRYPTION_KEY": escaped, "SWITCHBACK_PROVIDER_PRIVATE_KEY": escapedSigning,
            ])
            #expect(oneLine.provider?.privateKey == escapedSigning, "the environment's value, over the secret file's")
            let flattened = await deployment.outcome(["SWITCHBACK_PROVIDER_DECRYPTION_KEY": escaped.replacingOccurrences(of: "\\n", with: " ")])
            #expect(flattened.contains("provider.decryptionKey:"), "a key flattened with spaces is still no key: \(flattened)")

            // The same key twice, as text and as a path: refused, not one of them silently preferred.
            let twice = await deployment.outcome(["SWITCHBACK_PROVIDER_PRIVATE_KEY_FILE": "/run/secrets/key.pem"])
            #expect(twice.contains("privateKeyFile") && twice.contains("one of"), "\(twice)")
            // Neither secret's content is repeated when it is not a key.
            let mangled = String(body.reversed())
            let badKey = await deployment.outcome([
                "SWITCHBACK_PROVIDER_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\n\(mangled)\n-----END PRIVATE KEY-----"
            ])
            #expect(badKey.contains("provider.privateKey:") && badKey.contains("ES256") && !badKey.contains(mangled.prefix(20)), "\(badKey)")
            let badDecryption = await deployment.outcome(["SWITCHBACK_PROVIDER_DECRYPTION_KEY": "secret-but-no-key"])
            #expect(badDecryption.contains("provider.decryptionKey:") && !badDecryption.contains("secret-but-no-key"), "\(badDecryption)")
            let bothDecryption = await deployment.outcome([
                "SWITCHBACK_PROVIDER_DECRYPTION_KEY": decryption, "SWITCHBACK_PROVIDER_DECRYPTION_KEY_FILE": "/run/secrets/enc.pem",
            ])
            #expect(bothDecryption.contains("decryptionKey or decryptionKeyFile"), "\(bothDecryption)")

            // A path that cannot be read names its setting at load, before the store or a listener.
            try FileManager.default.removeItem(atPath: URL(fileURLWithPath: deployment.secrets).appendingPathComponent("provider-privateKey").path)
            let unreadable = await deployment.outcome([
                "SWITCHBACK_PROVIDER_PRIVATE_KEY_FILE": deployment.directory.appendingPathComponent("gone.pem").path
            ])
            #expect(unreadable.contains("provider.privateKeyFile:") && unreadable.contains("gone.pem"), "\(unreadable)")
            let keyFile = deployment.directory.appendingPathComponent("key.pem")
            try Data(signing.utf8).write(to: keyFile)
            let fromFile = try await deployment.load(["SWITCHBACK_PROVIDER_PRIVATE_KEY_FILE": keyFile.path])
            #expect(fromFile.provider?.privateKeyFile == keyFile.path && fromFile.provider?.privateKey == nil)
            try Data("not a key".utf8).write(to: keyFile)
            let notAKey = await deployment.outcome(["SWITCHBACK_PROVIDER_PRIVATE_KEY_FILE": keyFile.path])
            #expect(notAKey.contains("provider.privateKeyFile:") && notAKey.contains("not a valid ES256 private key"), "\(notAKey)")
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a PostgreSQL URL the store cannot use is refused by its key, without its password")
    func postgresURLNamesItsKey() async throws {
        try await Deployment.with { deployment in
            for url in [
                "postgres://switchback:hunter2-secret@db.internal/switchback?sslmode=verify-fulll",
                "mysql://switchback:hunter2-secret@db.internal/switchback", "postgres://switchback:hunter2-secret@db.internal/s?password=x",
            ] {
                let message = await deployment.outcome(["SWITCHBACK_POSTGRES_URL": url])
                #expect(message.contains("postgresURL:") && !message.contains("hunter2"), "\(url): \(message)")
            }
        }
    }

    @Test("a SWITCHBACK_ variable that names no setting is reported; the companion's own and the tests' are not")
    func unknownNames() {
        let names = ServerConfiguration.unknownEnvironmentNames(in: [
            "SWITCHBACK_HANDOFF_AUDIENCE": "x", "SWITCHBACK_HAND_OFF_AUDIENCE": "x", "SWITCHBACK_CONFIG": "f", "SWITCHBACK_SECRETS_DIRECTORY": "d",
            "SWITCHBACK_TEST_POSTGRES_URL": "u", "SWITCHBACK_SERVICE_HOST": "10.0.0.7", "HOME": "/root",
        ])
        #expect(names == ["SWITCHBACK_HANDOFF_AUDIENCE", "SWITCHBACK_SERVICE_HOST"])
    }

    @Test("every setting's environment name is the one swift-configuration's environment provider reads for its key")
    func environmentNamesMatchTheProvider() throws {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        #expect(ServerConfiguration.settings.count >= 30)
        for setting in ServerConfiguration.settings {
            let provider = KeyMappingProvider(upstream: EnvironmentVariablesProvider(environmentVariables: [setting.environmentName: "v"])) {
                $0.prepending(["switchback"])
            }
            let key = ConfigKey(setting.key.split(separator: ".").map(String.init))
            #expect(ConfigReader(provider: provider).string(forKey: key) == "v", "\(setting.key) → \(setting.environmentName)")
        }
        let names = ServerConfiguration.settings.map(\.environmentName)
        #expect(names.contains("SWITCHBACK_PROVIDER_CLIENT_SECRET") && names.contains("SWITCHBACK_POSTGRES_URL"))
        #expect(Set(names).count == names.count)
    }

    @Test("Deployment.md's table names every setting with its environment variable, and nothing else; the Dockerfile builds the companion's product")
    func deploymentGuideInStep() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let guide = try String(contentsOf: root.appendingPathComponent("Documentation/Deployment.md"), encoding: .utf8)
        let rows = guide.split(separator: "\n").filter { $0.hasPrefix("| `SWITCHBACK_") }
        let documented = Set(rows.map { String($0.split(separator: "`")[1]) + " " + String($0.split(separator: "`")[3]) })
        let settings = Set(ServerConfiguration.settings.map { $0.environmentName + " " + $0.key })
        #expect(documented == settings, "missing: \(settings.subtracting(documented)); extra: \(documented.subtracting(settings))")
        let dockerfile = try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let manifest = try String(contentsOf: root.appendingPathComponent("Tools/Package.swift"), encoding: .utf8)
        #expect(dockerfile.contains("--product switchback-companion") && manifest.contains(#".executable(name: "switchback-companion""#))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("the printed configuration redacts the client secret and the database password and shows the rest")
    func printedRedacts() async throws {
        try await Deployment.with { deployment in
            let configuration = try await deployment.load(["SWITCHBACK_POSTGRES_PASSWORD": "db-password-123", "SWITCHBACK_PORT": "9200"])
            let printed = configuration.printed()
            #expect(!printed.contains("from-the-file") && !printed.contains("db-password-123"))
            #expect(printed.contains("<redacted>"))
            #expect(printed.contains("db.internal") && printed.contains("9200") && printed.contains("https://id.example.com"))
            let decoded = try JSONDecoder().decode(ServerConfiguration.self, from: Data(printed.utf8))
            #expect(decoded.port == 9200 && decoded.handOff == configuration.handOff, "the printed form is a configuration file")
        }
    }
}
