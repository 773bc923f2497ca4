public import Foundation
import Configuration
@_spi(SwitchbackInternals) import Switchback

// A deployment's settings beyond the JSON file: environment variables and files in a secrets directory
// (as Kubernetes and Docker mount secrets), read through swift-configuration's providers.
extension ServerConfiguration {
    /// Where a deployment's settings come from. A setting is taken from the first of these that has it:
    /// 1. the environment variable `SWITCHBACK_<KEY>` (`SWITCHBACK_PROVIDER_CLIENT_SECRET`);
    /// 2. a file named after the key in ``secretsDirectory`` (`provider-clientSecret`), its content trimmed;
    /// 3. the JSON ``file``;
    /// 4. the default.
    ///
    /// Sections (the routes a server turns on, its provider) come from the file; the environment and the
    /// secrets directory set values inside them. Structured values (associations, claims, metadata) are
    /// read from the file only.
    public struct Sources: Sendable {
        /// The JSON configuration; nil starts from the defaults (no routes but the association files).
        public var file: String?
        public var environment: [String: String]
        public var secretsDirectory: String?

        public init(file: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment, secretsDirectory: String? = nil) {
            self.file = file
            self.environment = environment
            self.secretsDirectory = secretsDirectory
        }
    }

    /// One value a deployment may give outside the file.
    public struct Setting: Sendable {
        /// The key, as in the JSON file: `provider.clientSecret`.
        public let key: String
        /// Never printed, logged, or repeated in an error.
        public let isSecret: Bool
        fileprivate let apply: @Sendable (inout ServerConfiguration, String) throws -> Void

        /// `SWITCHBACK_` and the key in upper snake case, as swift-configuration's environment provider
        /// spells it: `SWITCHBACK_PROVIDER_CLIENT_SECRET`.
        public var environmentName: String {
            "SWITCHBACK_"
                + key.split(separator: ".").map { component in
                    var spelled = ""
                    var previous: Character?
                    for character in component {
                        if let previous, previous.isLowercase, character.isUppercase { spelled.append("_") }
                        spelled.append(character.isLetter || character.isNumber ? Character(character.uppercased()) : "_")
                        previous = character
                    }
                    return spelled
                }.joined(separator: "_")
        }

        /// The file name in the secrets directory, as swift-configuration's directory provider spells it:
        /// the key's parts joined by `-` (`provider-clientSecret`).
        public var secretFileName: String { key.split(separator: ".").joined(separator: "-") }

        fileprivate var configKey: ConfigKey { ConfigKey(key.split(separator: ".").map(String.init)) }
    }

    /// Why a value was refused (never the value itself).
    fileprivate struct Refusal: Error {
        let reason: String
    }

    /// Reads ``Sources``: the file, then every ``settings`` value the environment or the secrets directory
    /// gives, then ``validate()``. Every problem is an ``SwitchbackError/Code/invalidConfiguration`` that names
    /// the key and where its value came from, raised before anything listens.
    /// With `checkingKeys` (the default), the provider's keys are read and parsed too (a start needs them,
    /// ``checkKeys()``); a health probe, which only needs the port, skips them, and `--print-config` checks
    /// them after printing.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public static func load(_ sources: Sources, checkingKeys: Bool = true) async throws -> ServerConfiguration {
        var configuration = try sources.file.map { try loadFile($0) } ?? ServerConfiguration()
        // An empty variable (an unset `${VAR}` in a compose file) is no value: it does not hide a secret file.
        let given = sources.environment.filter { !$0.value.isEmpty }
        let environment = ConfigReader(
            provider: KeyMappingProvider(upstream: EnvironmentVariablesProvider(environmentVariables: given)) { $0.prepending(["switchback"]) })
        if let directory = sources.secretsDirectory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw SwitchbackError(.invalidConfiguration, "the secrets directory \(directory) does not exist")
            }
        }
        for setting in settings {
            let value: String
            let origin: String
            if let found = environment.string(forKey: setting.configKey, isSecret: setting.isSecret) {
                (value, origin) = (found, setting.environmentName)
            } else if let directory = sources.secretsDirectory, let found = try secretFile(setting.secretFileName, in: directory) {
                (value, origin) = (found, "the secret file \(setting.secretFileName)")
            } else {
                continue
            }
            do {
                try setting.apply(&configuration, value)
            } catch let refusal as Refusal {
                throw SwitchbackError(.invalidConfiguration, "\(setting.key) (from \(origin)): \(refusal.reason)")
            }
        }
        try configuration.validate()
        // The keys are read and parsed here too, so that one that cannot be used stops the start before the
        // store is opened or anything listens.
        if checkingKeys { try await configuration.checkKeys() }
        return configuration
    }

    /// Reads and parses the provider's keys (the client's `private_key_jwt` key, the ID-token decryption key)
    /// and the listener's TLS certificate and key
    /// as the start will: a file that cannot be read or a key that does not parse is an
    /// ``SwitchbackError/Code/invalidConfiguration`` naming its setting.
    public func checkKeys() async throws {
        _ = try await provider?.credentials()
        _ = try tls?.serverConfiguration()
    }

    /// The trimmed content of the secret file `name`, following symbolic links: Kubernetes mounts each
    /// secret as a link into a hidden timestamped folder, which a reader of regular files alone would skip.
    /// Named as swift-configuration's directory provider names a key's file.
    static func secretFile(_ name: String, in directory: String) throws -> String? {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(name).path
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw SwitchbackError(.invalidConfiguration, "the secret file \(name) could not be read as UTF-8 text")
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// `SWITCHBACK_…` variables that name no setting: a misspelt key (`SWITCHBACK_HANDOFF_AUDIENCE`) would
    /// otherwise leave its setting unset without a word. The companion's own (`SWITCHBACK_CONFIG`,
    /// `SWITCHBACK_SECRETS_DIRECTORY`) and the tests' (`SWITCHBACK_TEST_…`, `SWITCHBACK_PEERS`) are not listed.
    public static func unknownEnvironmentNames(in environment: [String: String]) -> [String] {
        let known = Set(settings.map(\.environmentName) + ["SWITCHBACK_CONFIG", "SWITCHBACK_SECRETS_DIRECTORY", "SWITCHBACK_PEERS"])
        return environment.keys.filter { $0.hasPrefix("SWITCHBACK_") && !$0.hasPrefix("SWITCHBACK_TEST_") && !known.contains($0) }.sorted()
    }

    /// What ``load(_:)`` reads outside the file.
    public static let settings: [Setting] = {
        var all: [Setting] = [
            text("host") { $0.host = $1 },
            Setting(key: "port", isSecret: false) { $0.port = try port($1) },
            text("publicURL") { $0.publicURL = $1 },
            text("logLevel") { $0.logLevel = $1 },
            Setting(key: "recordKeys", isSecret: true) { $0.recordKeys = list($1) },
            Setting(key: "postgresURL", isSecret: true) { $0.postgresURL = $1 },
            // The database password alone, for a URL given without it.
            Setting(key: "postgresPassword", isSecret: true) { configuration, password in
                guard let url = configuration.postgresURL, var components = URLComponents(string: url), components.user != nil else {
                    throw Refusal(reason: "needs postgresURL with a user name to set the password of")
                }
                components.password = password
                guard let joined = components.string else { throw Refusal(reason: "could not be put into postgresURL") }
                configuration.postgresURL = joined
            },
        ]
        func provider(_ key: String, secret: Bool = false, _ set: @escaping @Sendable (inout Provider, String) throws -> Void) -> Setting {
            inSection(\.provider, "provider", key, secret: secret, set)
        }
        all += [
            provider("issuer") { $0.issuer = $1 },
            provider("clientID") { $0.clientID = $1 },
            provider("clientSecret", secret: true) { $0.clientSecret = $1 },
            inSection(\.permission, "permission", "backendToken", secret: true) { $0.backendToken = $1 },
            provider("privateKeyFile") { $0.privateKeyFile = $1 },
            provider("privateKey", secret: true) { $0.privateKey = $1 },
            provider("keyAlgorithm") { $0.keyAlgorithm = $1 },
            provider("keyID") { $0.keyID = $1 },
            provider("decryptionKeyFile") { $0.decryptionKeyFile = $1 },
            provider("decryptionKey", secret: true) { $0.decryptionKey = $1 },
            provider("decryptionKeyID") { $0.decryptionKeyID = $1 },
            provider("dpop") { $0.dpop = try flag($1) },
            provider("scopes") { $0.scopes = list($1) },
            provider("acrValues") { $0.acrValues = list($1) },
        ]
        func handOff(_ key: String, _ set: @escaping @Sendable (inout HandOff, String) throws -> Void) -> Setting {
            inSection(\.handOff, "handOff", key, secret: false, set)
        }
        all += [
            handOff("audience") { $0.audience = $1 },
            handOff("requiredScope") { $0.requiredScope = $1 },
            handOff("dpopBoundOnly") { $0.dpopBoundOnly = try flag($1) },
            handOff("allowedRedirects") { $0.allowedRedirects = list($1) },
            handOff("acceptedClients") { $0.acceptedClients = list($1) },
            handOff("codeLifetime") { $0.codeLifetime = try seconds($1) },
            inSection(\.exchange, "exchange", "redirectURIs", secret: false) { $0.redirectURIs = list($1) },
            inSection(\.completion, "completion", "appLink", secret: false) { $0.appLink = $1 },
            inSection(\.responsePage, "responsePage", "appLink", secret: false) { $0.appLink = $1 },
            Setting(key: "session.lifetime", isSecret: false) { $0.session.lifetime = try seconds($1) },
            Setting(key: "limits.startsPerMinutePerAddress", isSecret: false) { $0.limits.startsPerMinutePerAddress = try count($1) },
            Setting(key: "limits.startsPerMinute", isSecret: false) { $0.limits.startsPerMinute = try count($1) },
            Setting(key: "limits.pendingAuthorizations", isSecret: false) { $0.limits.pendingAuthorizations = try count($1) },
            Setting(key: "limits.waitingStatusRequests", isSecret: false) { $0.limits.waitingStatusRequests = try count($1) },
            text("limits.clientAddressHeader") { $0.limits.clientAddressHeader = $1 },
            Setting(key: "limits.trustedHops", isSecret: false) { $0.limits.trustedHops = try count($1) },
            Setting(key: "limits.trustedProxies", isSecret: false) { $0.limits.trustedProxies = list($1) },
            Setting(key: "limits.directClients", isSecret: false) { $0.limits.directClients = try flag($1) },
            Setting(key: "limits.shutdownGrace", isSecret: false) { $0.limits.shutdownGrace = try seconds($1) },
            Setting(key: "limits.idleTimeout", isSecret: false) { $0.limits.idleTimeout = try seconds($1) },
            Setting(key: "limits.bodyTimeout", isSecret: false) { $0.limits.bodyTimeout = try seconds($1) },
            Setting(key: "limits.writeTimeout", isSecret: false) { $0.limits.writeTimeout = try seconds($1) },
            Setting(key: "limits.maxConnections", isSecret: false) { $0.limits.maxConnections = try count($1) },
            inSection(\.playIntegrity, "playIntegrity", "decryptionKey", secret: true) { $0.decryptionKey = $1 },
            inSection(\.playIntegrity, "playIntegrity", "verificationKey", secret: false) { $0.verificationKey = $1 },
            // Each turns TLS on; validation asks for the certificate and the key together.
            tlsFile("certificateChainFile") { $0.certificateChainFile = $1 },
            tlsFile("privateKeyFile") { $0.privateKeyFile = $1 },
            tlsFile("clientCertificateAuthoritiesFile") { $0.clientCertificateAuthoritiesFile = $1 },
            // Either turns the metrics listener on.
            Setting(key: "metrics.host", isSecret: false) { $0.metrics = .init(host: $1, port: $0.metrics?.port ?? 9464) },
            Setting(key: "metrics.port", isSecret: false) { $0.metrics = .init(host: $0.metrics?.host ?? "127.0.0.1", port: try port($1)) },
        ]
        return all
    }()

    /// This configuration with its secrets replaced by `<redacted>`: the client secret, the provider keys
    /// given as text, Play Integrity's decryption key, and the password in `postgresURL`.
    public func redacted() -> ServerConfiguration {
        var copy = self
        if copy.provider?.clientSecret != nil { copy.provider?.clientSecret = Self.redaction }
        if copy.permission != nil { copy.permission?.backendToken = Self.redaction }
        if copy.provider?.privateKey != nil { copy.provider?.privateKey = Self.redaction }
        if copy.provider?.decryptionKey != nil { copy.provider?.decryptionKey = Self.redaction }
        if copy.playIntegrity?.decryptionKey != nil { copy.playIntegrity?.decryptionKey = Self.redaction }
        copy.recordKeys = recordKeys.map { _ in Self.redaction }
        if let url = postgresURL {
            if var components = URLComponents(string: url) {
                if components.password != nil { components.password = Self.redaction }
                copy.postgresURL = components.string ?? Self.redaction
            } else {
                copy.postgresURL = Self.redaction
            }
        }
        return copy
    }

    /// The effective configuration as JSON, secrets redacted, for `switchback-companion --print-config`.
    public func printed() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(redacted())).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    static let redaction = "<redacted>"

    /// A setting inside the section at `path`, which the file must have turned on.
    private static func inSection<Section>(
        _ path: any WritableKeyPath<ServerConfiguration, Section?> & Sendable, _ name: String, _ key: String, secret: Bool,
        _ set: @escaping @Sendable (inout Section, String) throws -> Void
    ) -> Setting {
        Setting(key: name + "." + key, isSecret: secret) { configuration, value in
            guard var section = configuration[keyPath: path] else { throw Refusal(reason: "the configuration has no \(name) section") }
            try set(&section, value)
            configuration[keyPath: path] = section
        }
    }

    /// A file of the `tls` section, which any of them turns on.
    private static func tlsFile(_ key: String, _ set: @escaping @Sendable (inout TLS, String) -> Void) -> Setting {
        Setting(key: "tls." + key, isSecret: false) { configuration, value in
            var section = configuration.tls ?? TLS()
            set(&section, value)
            configuration.tls = section
        }
    }

    private static func text(_ key: String, _ set: @escaping @Sendable (inout ServerConfiguration, String) -> Void) -> Setting {
        Setting(key: key, isSecret: false) { set(&$0, $1) }
    }

    private static func port(_ value: String) throws -> Int {
        if value.hasPrefix("tcp://") {
            // Kubernetes writes SWITCHBACK_PORT=tcp://… into every pod when a Service is named switchback.
            throw Refusal(reason: "is a Kubernetes service link, not a port: set enableServiceLinks: false on the pod, or name the Service otherwise")
        }
        guard let port = Int(value), (0...65535).contains(port) else { throw Refusal(reason: "is not a port (0…65535)") }
        return port
    }

    private static func count(_ value: String) throws -> Int {
        guard let number = Int(value), number >= 0 else { throw Refusal(reason: "is not a whole number of zero or more") }
        return number
    }

    private static func seconds(_ value: String) throws -> TimeInterval {
        guard let number = TimeInterval(value), number.isFinite, number >= 0 else { throw Refusal(reason: "is not a number of seconds") }
        return number
    }

    private static func flag(_ value: String) throws -> Bool {
        switch value.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw Refusal(reason: "is not true or false")
        }
    }

    /// A comma-separated list, as swift-configuration's providers separate arrays; empty entries dropped.
    private static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { String($0.trimmingSpaces()) }.filter { !$0.isEmpty }
    }
}
