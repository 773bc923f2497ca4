public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Everything `switchback server --config FILE` reads: where to listen, the provider and how the
/// server authenticates to it, and which routes are on. A section left out turns its routes off;
/// ``validate()`` refuses a configuration that would be unsafe rather than guess.
public struct ServerConfiguration: Sendable, Codable, Equatable {
    public var host: String
    public var port: Int
    /// The server's own public base URL (`https://auth.example.com`); its redirect URIs are built on it.
    /// Nil: `http://host:port` as bound.
    public var publicURL: String?
    public var provider: Provider?
    public var exchange: Exchange?
    public var permission: Permission?
    public var bridge: Bridge?
    public var handOff: HandOff?
    public var completion: Completion?
    public var session: Session
    /// Rate limits and caps for the anonymous routes.
    public var limits: Limits
    public var associations: [AppAssociation]
    /// `postgres://user@host:port/database` for several instances; nil keeps records in memory.
    public var postgresURL: String?
    /// Apple App Attest on the start routes: only a genuine, unmodified copy of one of your apps may start a
    /// sign-in.
    public var appAttest: AppAttest?

    /// Apple App Attest (DeviceCheck): the apps that may attest, and whether the start routes require it.
    public struct AppAttest: Sendable, Codable, Equatable {
        /// `TEAMID.bundle.id` of each app allowed to attest.
        public var appIDs: [String]
        /// `production` (App Store, TestFlight, Enterprise) or `development`: attestations of the other
        /// environment are refused.
        public var environment: String
        /// True: `POST /exchange/start`, `/bridge/start` and `/completion/start` refuse a request without a
        /// valid assertion. False: an assertion is checked when one is sent (while older app versions
        /// without App Attest are still in use).
        public var required: Bool
        /// A PEM file with the root to trust instead of Apple's App Attestation Root CA: for tests only.
        public var rootCertificateFile: String?
        /// How long an attested key is kept after its attestation (seconds); the app attests a new key after.
        public var keyLifetime: TimeInterval

        public init(
            appIDs: [String], environment: String = "production", required: Bool = true, rootCertificateFile: String? = nil,
            keyLifetime: TimeInterval = 180 * 86400
        ) {
            self.appIDs = appIDs
            self.environment = environment
            self.required = required
            self.rootCertificateFile = rootCertificateFile
            self.keyLifetime = keyLifetime
        }

        private enum Keys: String, CodingKey { case appIDs, environment, required, rootCertificateFile, keyLifetime }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            self.init(
                appIDs: try c.decode([String].self, forKey: .appIDs),
                environment: try c.decodeIfPresent(String.self, forKey: .environment) ?? "production",
                required: try c.decodeIfPresent(Bool.self, forKey: .required) ?? true,
                rootCertificateFile: try c.decodeIfPresent(String.self, forKey: .rootCertificateFile),
                keyLifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .keyLifetime) ?? 180 * 86400)
        }
    }

    /// Serve `GET /metrics` (Prometheus) on a listener of its own; nil hands metrics to the process's
    /// `MetricsSystem` instead (a no-op unless it was bootstrapped).
    public var metrics: Metrics?

    /// Where the Prometheus metrics are served: a port of their own, so that the public listener never
    /// shows them.
    public struct Metrics: Sendable, Codable, Equatable {
        public var host: String
        /// 9464, the Prometheus exporter port OpenTelemetry uses; 0 picks a free one.
        public var port: Int

        public init(host: String = "127.0.0.1", port: Int = 9464) {
            self.host = host
            self.port = port
        }

        private enum Keys: String, CodingKey { case host, port }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            self.init(
                host: try c.decodeIfPresent(String.self, forKey: .host) ?? "127.0.0.1", port: try c.decodeIfPresent(Int.self, forKey: .port) ?? 9464)
        }
    }

    public init(
        host: String = "127.0.0.1", port: Int = 8080, publicURL: String? = nil, provider: Provider? = nil, exchange: Exchange? = nil,
        permission: Permission? = nil, bridge: Bridge? = nil, handOff: HandOff? = nil, completion: Completion? = nil, session: Session = Session(),
        limits: Limits = Limits(), associations: [AppAssociation] = [], postgresURL: String? = nil, metrics: Metrics? = nil,
        appAttest: AppAttest? = nil
    ) {
        self.appAttest = appAttest
        self.metrics = metrics
        self.limits = limits
        self.host = host
        self.port = port
        self.publicURL = publicURL
        self.provider = provider
        self.exchange = exchange
        self.permission = permission
        self.bridge = bridge
        self.handOff = handOff
        self.completion = completion
        self.session = session
        self.associations = associations
        self.postgresURL = postgresURL
    }

    private enum CodingKeys: String, CodingKey {
        case host, port, publicURL, provider, exchange, permission, bridge, handOff, completion, session, limits, associations, postgresURL
        case metrics, appAttest
    }

    /// Every key but the sections is optional in a file.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            host: try container.decodeIfPresent(String.self, forKey: .host) ?? "127.0.0.1",
            port: try container.decodeIfPresent(Int.self, forKey: .port) ?? 8080,
            publicURL: try container.decodeIfPresent(String.self, forKey: .publicURL),
            provider: try container.decodeIfPresent(Provider.self, forKey: .provider),
            exchange: try container.decodeIfPresent(Exchange.self, forKey: .exchange),
            permission: try container.decodeIfPresent(Permission.self, forKey: .permission),
            bridge: try container.decodeIfPresent(Bridge.self, forKey: .bridge),
            handOff: try container.decodeIfPresent(HandOff.self, forKey: .handOff),
            completion: try container.decodeIfPresent(Completion.self, forKey: .completion),
            session: try container.decodeIfPresent(Session.self, forKey: .session) ?? Session(),
            limits: try container.decodeIfPresent(Limits.self, forKey: .limits) ?? Limits(),
            associations: try container.decodeIfPresent([AppAssociation].self, forKey: .associations) ?? [],
            postgresURL: try container.decodeIfPresent(String.self, forKey: .postgresURL),
            metrics: try container.decodeIfPresent(Metrics.self, forKey: .metrics),
            appAttest: try container.decodeIfPresent(AppAttest.self, forKey: .appAttest)
        )
    }

    /// Reads a JSON configuration file; every problem is an ``SwitchbackError/Code/invalidConfiguration``.
    public static func load(_ path: String) throws -> ServerConfiguration {
        let configuration = try loadFile(path)
        try configuration.validate()
        return configuration
    }

    /// The file's configuration, not yet validated (the environment may still complete it).
    static func loadFile(_ path: String) throws -> ServerConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SwitchbackError(.invalidConfiguration, "the configuration file \(path) could not be read")
        }
        let configuration: ServerConfiguration
        do {
            configuration = try JSONDecoder().decode(ServerConfiguration.self, from: data)
        } catch let DecodingError.keyNotFound(key, context) {
            throw SwitchbackError(.invalidConfiguration, "\(path): \(Self.path(context.codingPath + [key])) is required")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context), let DecodingError.dataCorrupted(context) {
            throw SwitchbackError(.invalidConfiguration, "\(path): \(Self.path(context.codingPath)) is malformed")
        } catch let error as SwitchbackError {
            throw SwitchbackError(.invalidConfiguration, "\(path): \(error.message)")
        } catch {
            throw SwitchbackError(.invalidConfiguration, "\(path) is not a JSON configuration")
        }
        return configuration
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the document" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }
}
