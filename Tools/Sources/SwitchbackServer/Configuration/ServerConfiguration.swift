public import Foundation
@_spi(SwitchbackInternals) import Switchback
public import SwitchbackVerification

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
    /// The page at an app's https redirect URI that forwards the provider's response to the app's
    /// universal link by a button (`GET /response`), for a Safari view and a provider that ends with a
    /// plain redirect (MitID through Signaturgruppen).
    public var responsePage: ResponsePage?
    public var session: Session
    /// Rate limits and caps for the anonymous routes.
    public var limits: Limits
    public var associations: [AppAssociation]
    /// `postgres://user@host:port/database` for several instances; nil keeps records in memory.
    public var postgresURL: String?
    /// Apple App Attest on the start routes: only a genuine, unmodified copy of one of your apps may start a
    /// sign-in.
    public var appAttest: AppAttest?
    /// Google Play Integrity on the start routes, for Android apps: only a Play-recognized copy of one of your
    /// apps, on a device that meets the integrity you ask for, may start a sign-in.
    public var playIntegrity: PlayIntegrity?
    /// The companion as an OpenID4VP verifier: an identity wallet as one more authenticator.
    public var wallet: Wallet?
    /// Apple's Verify with Wallet, the companion decrypting and verifying the answers.
    public var appleIdentity: AppleIdentity?
    /// The server-held keys the store's records are sealed under (``RecordKeys``): base64url of 32 random
    /// bytes each, the current key first, then earlier ones still accepted while their records expire.
    /// Required with ``postgresURL`` (every instance must hold the same); without it a store in memory
    /// gets a key of the process. A secret: give it through the secrets directory or the environment.
    public var recordKeys: [String]
    /// The least severe level `switchback-companion` logs: `trace`, `debug`, `info`, `notice` (the
    /// default), `warning`, `error` or `critical`. No level logs a secret: routes are logged by their
    /// template, never their path or query.
    public var logLevel: String

    /// OpenID for Verifiable Presentations 1.0 with HAIP 1.0: SD-JWT VCs and ISO mdocs presented same-device
    /// with `direct_post.jwt`, the request signed with an `x509_hash` identity (Documentation/Wallets.md).
    public struct Wallet: Sendable, Codable, Equatable {
        /// The request objects' P-256 signing key (PEM).
        public var signingKeyFile: String
        /// Its certificate chain (PEM, leaf first, without the trust anchor); the leaf must not be self-signed.
        public var certificateChainFile: String
        /// The roots SD-JWT VC issuers' `x5c` chains must lead to (PEM); required when the query asks for `dc+sd-jwt`.
        public var issuerTrustAnchorsFile: String?
        /// The roots (IACA) mdoc document signers' `x5chain` must lead to (PEM); required when the query asks
        /// for `mso_mdoc`. Kept apart from the SD-JWT VC anchors: an mdoc names no issuer URL its certificate
        /// is held to, so every anchor here is trusted for every document type asked.
        public var mdocTrustAnchorsFile: String?
        /// What is asked of the wallet.
        public var query: DCQLQuery
        /// The app's https link the wallet returns to, with `#response_code=…`.
        public var appLink: String
        /// The scheme of the link that opens the wallet: `openid4vp` (OpenID4VP 1.0 §13.1.2) or `haip-vp` (HAIP 1.0 §5.1).
        public var scheme: String
        /// How the verifier names itself (OpenID4VP 1.0 §5.9.3): `x509_hash` (the default, HAIP 1.0 §5),
        /// `x509_san_dns` (the certificate's DNS name, which must be `publicURL`'s host), or `redirect_uri`
        /// (unsigned requests, for development on a loopback companion only).
        public var clientIdentifierPrefix: String
        /// How long, in seconds, the fetch of a credential's status list may take (redirects and body included)
        /// while the wallet waits for the verdict; past it the status is unknown and the credential refused.
        public var statusListTimeout: Double

        public init(
            signingKeyFile: String, certificateChainFile: String, issuerTrustAnchorsFile: String?, mdocTrustAnchorsFile: String? = nil,
            query: DCQLQuery, appLink: String, scheme: String = "openid4vp", clientIdentifierPrefix: String = "x509_hash",
            statusListTimeout: Double = 10
        ) {
            self.statusListTimeout = statusListTimeout
            self.clientIdentifierPrefix = clientIdentifierPrefix
            self.signingKeyFile = signingKeyFile
            self.certificateChainFile = certificateChainFile
            self.issuerTrustAnchorsFile = issuerTrustAnchorsFile
            self.mdocTrustAnchorsFile = mdocTrustAnchorsFile
            self.query = query
            self.appLink = appLink
            self.scheme = scheme
        }

        private enum Keys: String, CodingKey {
            case signingKeyFile, certificateChainFile, issuerTrustAnchorsFile, mdocTrustAnchorsFile, query, appLink, scheme, clientIdentifierPrefix
            case statusListTimeout
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            self.init(
                signingKeyFile: try c.decode(String.self, forKey: .signingKeyFile),
                certificateChainFile: try c.decode(String.self, forKey: .certificateChainFile),
                issuerTrustAnchorsFile: try c.decodeIfPresent(String.self, forKey: .issuerTrustAnchorsFile),
                mdocTrustAnchorsFile: try c.decodeIfPresent(String.self, forKey: .mdocTrustAnchorsFile),
                query: try c.decode(DCQLQuery.self, forKey: .query),
                appLink: try c.decode(String.self, forKey: .appLink), scheme: try c.decodeIfPresent(String.self, forKey: .scheme) ?? "openid4vp",
                clientIdentifierPrefix: try c.decodeIfPresent(String.self, forKey: .clientIdentifierPrefix) ?? "x509_hash",
                statusListTimeout: try c.decodeIfPresent(Double.self, forKey: .statusListTimeout) ?? 10)
        }
    }

    /// Apple's Verify with Wallet (PassKit's `PKIdentityAuthorizationController`): the merchant the app's
    /// requests name, the Identity Access key its answers are encrypted to, and the issuers trusted
    /// (Documentation/Wallets.md).
    public struct AppleIdentity: Sendable, Codable, Equatable {
        /// The merchant identifier of the app's `PKIdentityRequest` (its In-App Identity Presentment entitlement).
        public var merchantIdentifier: String
        /// The Apple Developer team identifier of the app.
        public var teamIdentifier: String
        /// The private key of the merchant's Identity Access Certificate (P-256, PEM).
        public var encryptionKeyFile: String
        /// The roots (IACA, PEM) the documents' signers must lead to: each state's or country's that you accept.
        public var issuerTrustAnchorsFile: String
        /// The document types accepted.
        public var documentTypes: [String]

        public init(
            merchantIdentifier: String, teamIdentifier: String, encryptionKeyFile: String, issuerTrustAnchorsFile: String,
            documentTypes: [String] = ["org.iso.18013.5.1.mDL"]
        ) {
            self.merchantIdentifier = merchantIdentifier
            self.teamIdentifier = teamIdentifier
            self.encryptionKeyFile = encryptionKeyFile
            self.issuerTrustAnchorsFile = issuerTrustAnchorsFile
            self.documentTypes = documentTypes
        }

        private enum Keys: String, CodingKey { case merchantIdentifier, teamIdentifier, encryptionKeyFile, issuerTrustAnchorsFile, documentTypes }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            self.init(
                merchantIdentifier: try c.decode(String.self, forKey: .merchantIdentifier),
                teamIdentifier: try c.decode(String.self, forKey: .teamIdentifier),
                encryptionKeyFile: try c.decode(String.self, forKey: .encryptionKeyFile),
                issuerTrustAnchorsFile: try c.decode(String.self, forKey: .issuerTrustAnchorsFile),
                documentTypes: try c.decodeIfPresent([String].self, forKey: .documentTypes) ?? ["org.iso.18013.5.1.mDL"])
        }
    }

    /// Google Play Integrity (classic requests, with the response keys you manage in Play Console).
    public struct PlayIntegrity: Sendable, Codable, Equatable {
        /// Your Android apps' package names.
        public var packageNames: [String]
        /// SHA-256 digests of your apps' signing certificates, base64url as the verdict writes them; empty
        /// leaves the check to Google Play's recognition of the app.
        public var certificateDigests: [String]
        /// Play Console's response decryption key (base64 AES-256): a secret, best given as a secret file.
        public var decryptionKey: String?
        /// Play Console's response verification key (base64 DER EC public key).
        public var verificationKey: String
        /// The device labels a verdict must carry; Google's default label is `MEETS_DEVICE_INTEGRITY`.
        public var deviceVerdicts: [String]
        /// True: the user's copy must be `LICENSED` (installed or bought from Google Play).
        public var requireLicensed: Bool
        /// True: a start request must carry a verdict or an App Attest assertion; with an `appAttest` section
        /// too, both must say the same.
        public var required: Bool
        /// How old a verdict may be when it arrives (seconds).
        public var maximumAge: TimeInterval
        /// The oldest app version (`versionCode`) let in; nil lets in every version Play recognizes.
        public var minimumVersionCode: Int?

        public init(
            packageNames: [String], certificateDigests: [String] = [], decryptionKey: String? = nil, verificationKey: String,
            deviceVerdicts: [String] = ["MEETS_DEVICE_INTEGRITY"], requireLicensed: Bool = false, required: Bool = true,
            maximumAge: TimeInterval = 300, minimumVersionCode: Int? = nil
        ) {
            self.minimumVersionCode = minimumVersionCode
            self.packageNames = packageNames
            self.certificateDigests = certificateDigests
            self.decryptionKey = decryptionKey
            self.verificationKey = verificationKey
            self.deviceVerdicts = deviceVerdicts
            self.requireLicensed = requireLicensed
            self.required = required
            self.maximumAge = maximumAge
        }

        private enum Keys: String, CodingKey {
            case packageNames, certificateDigests, decryptionKey, verificationKey, deviceVerdicts, requireLicensed, required, maximumAge
            case minimumVersionCode
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            self.init(
                packageNames: try c.decode([String].self, forKey: .packageNames),
                certificateDigests: try c.decodeIfPresent([String].self, forKey: .certificateDigests) ?? [],
                decryptionKey: try c.decodeIfPresent(String.self, forKey: .decryptionKey),
                verificationKey: try c.decode(String.self, forKey: .verificationKey),
                deviceVerdicts: try c.decodeIfPresent([String].self, forKey: .deviceVerdicts) ?? ["MEETS_DEVICE_INTEGRITY"],
                requireLicensed: try c.decodeIfPresent(Bool.self, forKey: .requireLicensed) ?? false,
                required: try c.decodeIfPresent(Bool.self, forKey: .required) ?? true,
                maximumAge: try c.decodeIfPresent(TimeInterval.self, forKey: .maximumAge) ?? 300,
                minimumVersionCode: try c.decodeIfPresent(Int.self, forKey: .minimumVersionCode))
        }
    }

    /// Apple App Attest (DeviceCheck): the apps that may attest, and whether the start routes require it.
    public struct AppAttest: Sendable, Codable, Equatable {
        /// `TEAMID.bundle.id` of each app allowed to attest.
        public var appIDs: [String]
        /// `production` (App Store, TestFlight, Enterprise) or `development`: attestations of the other
        /// environment are refused.
        public var environment: String
        /// True: `POST /exchange/start`, `/bridge/start`, `/completion/start`, `/permission` and an
        /// app-started `POST /exchange` refuse a request without a valid assertion (or Play Integrity
        /// verdict). False: an assertion is checked when one is sent (while older app versions without App
        /// Attest are still in use). With a `playIntegrity` section too, both must say the same.
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

    /// TLS on the public listener, for the hop from the load balancer (or from clients, when they connect
    /// directly); nil serves plain HTTP, which only a network no one else can read or write may carry
    /// (Deployment.md, "TLS to the instance").
    public var tls: TLS?

    /// The public listener's certificate and key, and the authorities whose client certificates it requires.
    public struct TLS: Sendable, Codable, Equatable {
        /// The listener's certificate chain (PEM, leaf first).
        public var certificateChainFile: String
        /// Its private key (PEM). Read at start; a restart picks up a renewed certificate.
        public var privateKeyFile: String
        /// The authorities (PEM) that issue your load balancers' client certificates: set, every connection
        /// must present a certificate one of them issued, so a host on the segment that holds none cannot
        /// reach the instance at all. Nil: no client certificate is asked for.
        public var clientCertificateAuthoritiesFile: String?

        public init(certificateChainFile: String = "", privateKeyFile: String = "", clientCertificateAuthoritiesFile: String? = nil) {
            self.certificateChainFile = certificateChainFile
            self.privateKeyFile = privateKeyFile
            self.clientCertificateAuthoritiesFile = clientCertificateAuthoritiesFile
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
        appAttest: AppAttest? = nil, playIntegrity: PlayIntegrity? = nil, wallet: Wallet? = nil, appleIdentity: AppleIdentity? = nil,
        logLevel: String = "notice", recordKeys: [String] = [], tls: TLS? = nil, responsePage: ResponsePage? = nil
    ) {
        self.responsePage = responsePage
        self.tls = tls
        self.recordKeys = recordKeys
        self.logLevel = logLevel
        self.wallet = wallet
        self.appleIdentity = appleIdentity
        self.appAttest = appAttest
        self.playIntegrity = playIntegrity
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
        case metrics, appAttest, playIntegrity, wallet, appleIdentity, logLevel, recordKeys, tls, responsePage
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
            appAttest: try container.decodeIfPresent(AppAttest.self, forKey: .appAttest),
            playIntegrity: try container.decodeIfPresent(PlayIntegrity.self, forKey: .playIntegrity),
            wallet: try container.decodeIfPresent(Wallet.self, forKey: .wallet),
            appleIdentity: try container.decodeIfPresent(AppleIdentity.self, forKey: .appleIdentity),
            logLevel: try container.decodeIfPresent(String.self, forKey: .logLevel) ?? "notice",
            recordKeys: try container.decodeIfPresent([String].self, forKey: .recordKeys) ?? [],
            tls: try container.decodeIfPresent(TLS.self, forKey: .tls),
            responsePage: try container.decodeIfPresent(ResponsePage.self, forKey: .responsePage)
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
