public import Foundation
@_spi(SwitchbackInternals) public import Switchback

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

    /// The provider and this server's confidential client there.
    public struct Provider: Sendable, Codable, Equatable {
        public var issuer: String
        public var clientID: String
        /// `client_secret_basic` with this secret, unless a private key is given.
        public var clientSecret: String?
        /// A PEM file with the key for `private_key_jwt` (RS256, ES256, ES384 or ES512 by ``keyAlgorithm``).
        public var privateKeyFile: String?
        public var keyAlgorithm: String?
        public var keyID: String?
        /// Prove possession with DPoP (RFC 9449) at PAR and the token endpoint, as FAPI 2.0 providers
        /// (Singpass) require; the provider then binds codes and tokens to the key.
        public var dpop: Bool
        /// A PEM file with the P-256 key for DPoP. Without it each instance makes its own key, which only
        /// works for one instance: a code is bound to the key of the instance that pushed the request.
        public var dpopKeyFile: String?
        /// A PEM file with the private key the provider encrypts ID tokens to (EC or RSA; Singpass
        /// encrypts every ID token). With it, a plain ID token is refused.
        public var decryptionKeyFile: String?
        /// The `kid` of the decryption key, as registered.
        public var decryptionKeyID: String?
        /// The provider's endpoints, for a provider that publishes no discovery document (UAE Pass); its
        /// `issuer` must equal ``issuer``. Without it the metadata is discovered.
        public var metadata: ProviderMetadata?
        /// `userinfo` for a provider documented to issue no ID token (UAE Pass): the identity is read from
        /// the userinfo endpoint with the access token just redeemed. `id_token` (the default) otherwise.
        public var identitySource: IdentitySource
        /// Claims the identity must carry, each with one of the listed values (UAE Pass:
        /// `{"userType": ["SOP2", "SOP3"]}` refuses unverified accounts).
        public var requiredClaims: [String: [String]]
        /// Authorization parameters an app may give `POST /exchange/start` and `POST /completion/start`
        /// (`parameters`), forwarded as they are; any other name is refused. The provider checks the values
        /// against the client's registration (Singpass's `app_launch_url`).
        public var forwardedParameters: [String]
        public var scopes: [String]
        /// `acr` values every ID token must carry (empty: any).
        public var acrValues: [String]

        public init(
            issuer: String, clientID: String, clientSecret: String? = nil, privateKeyFile: String? = nil, keyAlgorithm: String? = nil,
            keyID: String? = nil, dpop: Bool = false, dpopKeyFile: String? = nil, forwardedParameters: [String] = Self.defaultForwardedParameters,
            scopes: [String] = ["openid"], acrValues: [String] = [], decryptionKeyFile: String? = nil, decryptionKeyID: String? = nil,
            identitySource: IdentitySource = .idToken, requiredClaims: [String: [String]] = [:], metadata: ProviderMetadata? = nil
        ) {
            self.metadata = metadata
            self.identitySource = identitySource
            self.requiredClaims = requiredClaims
            self.decryptionKeyFile = decryptionKeyFile
            self.decryptionKeyID = decryptionKeyID
            self.forwardedParameters = forwardedParameters
            self.dpop = dpop || dpopKeyFile != nil
            self.dpopKeyFile = dpopKeyFile
            self.issuer = issuer
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.privateKeyFile = privateKeyFile
            self.keyAlgorithm = keyAlgorithm
            self.keyID = keyID
            self.scopes = scopes
            self.acrValues = acrValues
        }
    }

    /// What a successful backend exchange gives the app.
    public enum ExchangeResult: String, Sendable, Codable {
        /// The provider's tokens: the app calls APIs with them; the refresh token lives on the device.
        case tokens
        /// An opaque first-party session: the provider's tokens never leave the server.
        case session
    }

    /// Backend code exchange: the server redeems the code as a confidential client.
    public struct Exchange: Sendable, Codable, Equatable {
        /// The app's redirect URIs the server may redeem codes for.
        public var redirectURIs: [String]
        public var returns: ExchangeResult

        public init(redirectURIs: [String], returns: ExchangeResult = .session) {
            self.redirectURIs = redirectURIs
            self.returns = returns
        }
    }

    /// The upfront permission proxy (Norwegian BankID).
    /// Norwegian BankID's upfront permission ("Authorization Code flow for upfront permissions"): a
    /// client-credentials token from the provider with ``scope``, then a permission registered at the
    /// `permissions_endpoint` the biometrics server's own discovery document names.
    public struct Permission: Sendable, Codable, Equatable {
        /// The biometrics server's issuer (`https://app.bankid.no`; test
        /// `https://current.aletheia-test.idtech.no`), whose `/.well-known/openid-configuration` names
        /// its `permissions_endpoint`.
        public var server: String
        /// The client-credentials scope the permissions API takes.
        public var scope: String
        /// The exact `app_callback_uri` values the app may ask a permission for.
        public var appCallbackURIs: [String]

        public init(server: String, scope: String = "openid permissions/client", appCallbackURIs: [String]) {
            self.server = server
            self.scope = scope
            self.appCallbackURIs = appCallbackURIs
        }

        private enum Keys: String, CodingKey { case server, scope, appCallbackURIs }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            self.init(
                server: try c.decode(String.self, forKey: .server), scope: try c.decodeIfPresent(String.self, forKey: .scope) ?? "openid permissions/client",
                appCallbackURIs: try c.decode([String].self, forKey: .appCallbackURIs)
            )
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(server, forKey: .server)
            try c.encode(scope, forKey: .scope)
            try c.encode(appCallbackURIs, forKey: .appCallbackURIs)
        }
    }

    /// The native-callback bridge: the provider returns to this server, which returns to the app's deep link
    /// with a one-time code.
    public struct Bridge: Sendable, Codable, Equatable {
        /// Deep-link schemes the bridge may return to (`myapp` for `myapp://oauth/…`).
        public var schemes: [String]
        public var returns: ExchangeResult
        /// How long the one-time code in the deep link stays redeemable.
        public var codeLifetime: TimeInterval
        /// What the provider is asked for: `code` (the default), or `id_token token` for a provider that
        /// offers only the legacy implicit shape. Implicit tokens arrive in the browser's fragment, are posted
        /// here by the forwarding page, validated (nonce, `at_hash`) and turned into the same one-time code.
        public var responseType: ResponseType

        public init(schemes: [String], returns: ExchangeResult = .session, codeLifetime: TimeInterval = 60, responseType: ResponseType = .code) {
            self.schemes = schemes
            self.returns = returns
            self.codeLifetime = codeLifetime
            self.responseType = responseType
        }
    }

    /// How a hand-off checks the app's access token.
    public enum TokenValidation: String, Sendable, Codable {
        /// The provider's introspection endpoint (RFC 7662), as this server's client.
        case introspection
        /// A JWT access token (RFC 9068) verified locally with the provider's keys.
        case jwt
    }

    /// Session hand-off from the app to a web app through a one-time code.
    public struct HandOff: Sendable, Codable, Equatable {
        public var validation: TokenValidation
        /// For ``TokenValidation/jwt``: the `aud` the access token must carry.
        public var audience: String?
        /// Where a redeemed code may send the browser: origins with a path prefix.
        public var allowedRedirects: [String]
        public var codeLifetime: TimeInterval
        /// The clients whose access tokens buy a hand-off: the token's `client_id` (and `azp`, and an
        /// introspected `aud`) must be one of them. Nil: only `provider.clientID`. A token the provider
        /// issued to another relying party for the same user is refused.
        public var acceptedClients: [String]?

        public init(
            validation: TokenValidation = .introspection, audience: String? = nil, allowedRedirects: [String], codeLifetime: TimeInterval = 60,
            acceptedClients: [String]? = nil
        ) {
            self.validation = validation
            self.audience = audience
            self.allowedRedirects = allowedRedirects
            self.codeLifetime = codeLifetime
            self.acceptedClients = acceptedClients
        }
    }

    /// Backend completion (MitID): the provider returns to this server, whose final page opens the app.
    public struct Completion: Sendable, Codable, Equatable {
        /// The universal link the final page's button opens.
        public var appLink: String
        public var returns: ExchangeResult
        /// The longest a status request waits before answering `pending`.
        public var maximumWait: TimeInterval
        /// How often a waiting status request reads the store when no notification woke it (a notification
        /// from another instance can be lost while its listener reconnects).
        public var storeRecheck: TimeInterval

        public init(appLink: String, returns: ExchangeResult = .session, maximumWait: TimeInterval = 25, storeRecheck: TimeInterval = 2) {
            self.appLink = appLink
            self.returns = returns
            self.maximumWait = maximumWait
            self.storeRecheck = storeRecheck
        }
    }

    /// The first-party session and its cookie.
    public struct Session: Sendable, Codable, Equatable {
        public var lifetime: TimeInterval
        public var cookieName: String
        /// `Lax` (the default) or `Strict`; `None` is refused.
        public var sameSite: String
        public var cookiePath: String
        /// Name the cookie `__Host-<cookieName>` when the path is `/` (the default): a browser then keeps it
        /// only from this exact host over https, never set by a sibling subdomain (RFC 6265bis §4.1.3.2).
        public var hostPrefix: Bool

        public init(
            lifetime: TimeInterval = 3600, cookieName: String = "switchback_session", sameSite: String = "Lax", cookiePath: String = "/", hostPrefix: Bool = true
        ) {
            self.lifetime = lifetime
            self.cookieName = cookieName
            self.sameSite = sameSite
            self.cookiePath = cookiePath
            self.hostPrefix = hostPrefix
        }

        /// The cookie's name as sent: with the `__Host-` prefix where the path allows it.
        public var effectiveCookieName: String {
            hostPrefix && cookiePath == "/" && !cookieName.hasPrefix("__") ? "__Host-" + cookieName : cookieName
        }
    }

    /// What an anonymous client may ask of the routes that store a record and call the provider
    /// (`/exchange/start`, `/bridge/start`, `/completion/start`, `/permission`), and how many status
    /// requests may wait at once. Past a limit the answer is `429` with `Retry-After`.
    public struct Limits: Sendable, Codable, Equatable {
        /// Start requests per minute from one client address (0: no limit).
        public var startsPerMinutePerAddress: Int
        /// Start requests per minute in all, on this instance (0: no limit).
        public var startsPerMinute: Int
        /// Authorizations waiting for the provider's answer, across every instance sharing the store.
        public var pendingAuthorizations: Int
        /// `POST /completion/status` requests waiting at once on this instance (one per flow in any case).
        public var waitingStatusRequests: Int
        /// The header that carries the client's address when the server runs behind reverse proxies that
        /// append to it (`X-Forwarded-For`). Nil: the connection's address. Set it only when every request
        /// comes through those proxies: a client reaching the server directly could write the header itself.
        public var clientAddressHeader: String?
        /// How many proxies of yours append to ``clientAddressHeader``: the entry this many from the end is the
        /// client's address (1: a load balancer; 2: a CDN in front of it).
        public var trustedHops: Int

        public init(
            startsPerMinutePerAddress: Int = 30, startsPerMinute: Int = 1200, pendingAuthorizations: Int = 20_000, waitingStatusRequests: Int = 2000,
            clientAddressHeader: String? = nil, trustedHops: Int = 1
        ) {
            self.startsPerMinutePerAddress = startsPerMinutePerAddress
            self.startsPerMinute = startsPerMinute
            self.pendingAuthorizations = pendingAuthorizations
            self.waitingStatusRequests = waitingStatusRequests
            self.clientAddressHeader = clientAddressHeader
            self.trustedHops = trustedHops
        }

        /// One line for the printed configuration.
        public var summary: String {
            let perAddress = startsPerMinutePerAddress == 0 ? "unlimited" : "\(startsPerMinutePerAddress)/min"
            let total = startsPerMinute == 0 ? "unlimited" : "\(startsPerMinute)/min"
            let by = clientAddressHeader.map { "\($0), \(trustedHops) trusted hop\(trustedHops == 1 ? "" : "s")" } ?? "connection address, IPv6 by /64"
            return "starts, exchanges and hand-offs \(perAddress) per address (by \(by)), \(total) in all; "
                + "at most \(pendingAuthorizations) pending authorizations, \(waitingStatusRequests) waiting status requests"
        }
    }

    public init(
        host: String = "127.0.0.1", port: Int = 8080, publicURL: String? = nil, provider: Provider? = nil, exchange: Exchange? = nil,
        permission: Permission? = nil, bridge: Bridge? = nil, handOff: HandOff? = nil, completion: Completion? = nil, session: Session = Session(),
        limits: Limits = Limits(), associations: [AppAssociation] = [], postgresURL: String? = nil
    ) {
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
            postgresURL: try container.decodeIfPresent(String.self, forKey: .postgresURL)
        )
    }

    /// Reads a JSON configuration file; every problem is an ``SwitchbackError/Code/invalidConfiguration``.
    public static func load(_ path: String) throws -> ServerConfiguration {
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
        } catch {
            throw SwitchbackError(.invalidConfiguration, "\(path) is not a JSON configuration")
        }
        try configuration.validate()
        return configuration
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the document" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    /// Refuses what would be unsafe or cannot work.
    public func validate() throws {
        func fail(_ message: String) -> SwitchbackError { SwitchbackError(.invalidConfiguration, message) }
        guard (0...65535).contains(port) else { throw fail("port must be 0…65535") }
        if let publicURL {
            guard let url = URL(string: publicURL), EndpointSecurity.isAcceptable(url), url.query == nil, url.fragment == nil else {
                throw fail("publicURL must be an https URL (http only on loopback) without query or fragment")
            }
        }
        let needsProvider = exchange != nil || permission != nil || bridge != nil || handOff != nil || completion != nil
        if needsProvider, provider == nil { throw fail("the exchange, permission, bridge, handOff and completion routes need a provider section") }
        if let provider {
            guard let issuer = URL(string: provider.issuer), EndpointSecurity.isAcceptable(issuer) else { throw fail("provider.issuer must be an https URL") }
            guard !provider.clientID.isEmpty else { throw fail("provider.clientID is empty") }
            guard (provider.clientSecret == nil) != (provider.privateKeyFile == nil) else {
                throw fail("give the provider either clientSecret (client_secret_basic) or privateKeyFile (private_key_jwt)")
            }
            if provider.privateKeyFile != nil, ClientAssertionSigner.Algorithm(rawValue: provider.keyAlgorithm ?? "ES256") == nil {
                throw fail("provider.keyAlgorithm must be one of \(ClientAssertionSigner.Algorithm.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if let metadata = provider.metadata, metadata.issuer != provider.issuer {
                throw fail("provider.metadata.issuer must equal provider.issuer")
            }
            if let reserved = provider.forwardedParameters.first(where: AuthorizationOptions.reservedNames.contains) {
                throw fail("provider.forwardedParameters cannot hold \(reserved): the server sets it")
            }
            if provider.dpop, provider.dpopKeyFile == nil, postgresURL != nil {
                throw fail("provider.dpopKeyFile is required with postgresURL: instances sharing sign-ins must prove DPoP with the same key")
            }
        }
        if let exchange {
            guard !exchange.redirectURIs.isEmpty, exchange.redirectURIs.allSatisfy({ URL(string: $0)?.scheme != nil }) else {
                throw fail("exchange.redirectURIs must list the app's absolute redirect URIs")
            }
        }
        if let permission {
            guard let server = URL(string: permission.server), EndpointSecurity.isAcceptable(server) else { throw fail("permission.server must be the biometrics server's https issuer URL") }
            guard !permission.appCallbackURIs.isEmpty, permission.appCallbackURIs.allSatisfy({ URL(string: $0).map(EndpointSecurity.isAcceptable) ?? false }) else {
                throw fail("permission.appCallbackURIs must list https universal links")
            }
        }
        if let bridge {
            guard !bridge.schemes.isEmpty, bridge.schemes.allSatisfy(Self.isDeepLinkScheme) else {
                throw fail("bridge.schemes must list lower-case custom schemes (not http, https, javascript, data or file)")
            }
            guard bridge.codeLifetime > 0, bridge.codeLifetime <= 600 else { throw fail("bridge.codeLifetime must be 1…600 seconds") }
        }
        if let handOff {
            _ = try RedirectAllowList(handOff.allowedRedirects)
            guard !handOff.allowedRedirects.isEmpty else { throw fail("handOff.allowedRedirects is empty: no redeemed code could go anywhere") }
            guard handOff.codeLifetime > 0, handOff.codeLifetime <= 600 else { throw fail("handOff.codeLifetime must be 1…600 seconds") }
            if handOff.validation == .jwt, handOff.audience?.isEmpty ?? true { throw fail("handOff.audience is required for jwt validation") }
            if let clients = handOff.acceptedClients, clients.isEmpty || clients.contains(where: \.isEmpty) {
                throw fail("handOff.acceptedClients must list client IDs (leave it out to accept provider.clientID only)")
            }
        }
        if let completion {
            guard let link = URL(string: completion.appLink), link.scheme == "https" || EndpointSecurity.isLoopback(link.host ?? "") else {
                throw fail("completion.appLink must be an https universal link")
            }
            guard completion.maximumWait > 0, completion.maximumWait <= 120 else { throw fail("completion.maximumWait must be 1…120 seconds") }
            guard completion.storeRecheck >= 0.1, completion.storeRecheck <= 300 else { throw fail("completion.storeRecheck must be 0.1…300 seconds") }
        }
        guard session.lifetime > 0 else { throw fail("session.lifetime must be positive") }
        guard ["Lax", "Strict"].contains(session.sameSite) else { throw fail("session.sameSite must be Lax or Strict") }
        guard !session.cookieName.isEmpty, session.cookieName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
            throw fail("session.cookieName must be letters, digits, _ or -")
        }
        guard session.cookiePath.hasPrefix("/"), !session.cookiePath.contains(";") else { throw fail("session.cookiePath must start with / and hold no ;") }
        guard limits.startsPerMinutePerAddress >= 0, limits.startsPerMinute >= 0, limits.pendingAuthorizations > 0, limits.waitingStatusRequests > 0 else {
            throw fail("limits must not be negative, and pendingAuthorizations and waitingStatusRequests must be positive")
        }
        if let header = limits.clientAddressHeader, header.isEmpty || !header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
            throw fail("limits.clientAddressHeader must be a header name")
        }
        guard (1...10).contains(limits.trustedHops) else { throw fail("limits.trustedHops must be 1…10") }
        // Behind a proxy the browser's origin and a DPoP proof's htu are the public URL, not the bound address.
        if handOff != nil, publicURL == nil, !EndpointSecurity.isLoopback(host) {
            throw fail("publicURL is required with handOff when the server listens beyond loopback: the redeem form's origin and DPoP proofs name it")
        }
        for association in associations { try association.validate() }
        if let postgresURL { _ = try PostgresCompanionStore.configuration(postgresURL) }
    }

    static func isDeepLinkScheme(_ scheme: String) -> Bool {
        guard let first = scheme.unicodeScalars.first, ("a"..."z").contains(first),
            scheme.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "." })
        else { return false }
        return !["http", "https", "javascript", "data", "file", "about", "blob", "vbscript"].contains(scheme)
    }
}

// In a file only the essential keys of each section are required; the rest take the defaults above.

extension ServerConfiguration.Provider {
    private enum Keys: String, CodingKey {
        case issuer, clientID, clientSecret, privateKeyFile, keyAlgorithm, keyID, dpop, dpopKeyFile, forwardedParameters, scopes, acrValues
        case decryptionKeyFile, decryptionKeyID, identitySource, requiredClaims, metadata
    }

    /// Singpass's app return link, and the redirect type that asks for its tap page.
    public static let defaultForwardedParameters = ["app_launch_url", "redirect_uri_https_type"]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            issuer: try c.decode(String.self, forKey: .issuer), clientID: try c.decode(String.self, forKey: .clientID),
            clientSecret: try c.decodeIfPresent(String.self, forKey: .clientSecret), privateKeyFile: try c.decodeIfPresent(String.self, forKey: .privateKeyFile),
            keyAlgorithm: try c.decodeIfPresent(String.self, forKey: .keyAlgorithm), keyID: try c.decodeIfPresent(String.self, forKey: .keyID),
            dpop: try c.decodeIfPresent(Bool.self, forKey: .dpop) ?? false, dpopKeyFile: try c.decodeIfPresent(String.self, forKey: .dpopKeyFile),
            forwardedParameters: try c.decodeIfPresent([String].self, forKey: .forwardedParameters) ?? Self.defaultForwardedParameters,
            scopes: try c.decodeIfPresent([String].self, forKey: .scopes) ?? ["openid"], acrValues: try c.decodeIfPresent([String].self, forKey: .acrValues) ?? [],
            decryptionKeyFile: try c.decodeIfPresent(String.self, forKey: .decryptionKeyFile), decryptionKeyID: try c.decodeIfPresent(String.self, forKey: .decryptionKeyID),
            identitySource: try c.decodeIfPresent(IdentitySource.self, forKey: .identitySource) ?? .idToken,
            requiredClaims: try c.decodeIfPresent([String: [String]].self, forKey: .requiredClaims) ?? [:],
            metadata: try c.decodeIfPresent(ProviderMetadata.self, forKey: .metadata)
        )
    }
}

extension ServerConfiguration.Exchange {
    private enum Keys: String, CodingKey { case redirectURIs, returns }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(redirectURIs: try c.decode([String].self, forKey: .redirectURIs), returns: try c.decodeIfPresent(ServerConfiguration.ExchangeResult.self, forKey: .returns) ?? .session)
    }
}

extension ServerConfiguration.Bridge {
    private enum Keys: String, CodingKey { case schemes, returns, codeLifetime, responseType }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            schemes: try c.decode([String].self, forKey: .schemes), returns: try c.decodeIfPresent(ServerConfiguration.ExchangeResult.self, forKey: .returns) ?? .session,
            codeLifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .codeLifetime) ?? 60,
            responseType: try c.decodeIfPresent(ResponseType.self, forKey: .responseType) ?? .code
        )
    }
}

extension ServerConfiguration.HandOff {
    private enum Keys: String, CodingKey { case validation, audience, allowedRedirects, codeLifetime, acceptedClients }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            validation: try c.decodeIfPresent(ServerConfiguration.TokenValidation.self, forKey: .validation) ?? .introspection,
            audience: try c.decodeIfPresent(String.self, forKey: .audience), allowedRedirects: try c.decode([String].self, forKey: .allowedRedirects),
            codeLifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .codeLifetime) ?? 60,
            acceptedClients: try c.decodeIfPresent([String].self, forKey: .acceptedClients)
        )
    }
}

extension ServerConfiguration.Completion {
    private enum Keys: String, CodingKey { case appLink, returns, maximumWait, storeRecheck }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            appLink: try c.decode(String.self, forKey: .appLink), returns: try c.decodeIfPresent(ServerConfiguration.ExchangeResult.self, forKey: .returns) ?? .session,
            maximumWait: try c.decodeIfPresent(TimeInterval.self, forKey: .maximumWait) ?? 25,
            storeRecheck: try c.decodeIfPresent(TimeInterval.self, forKey: .storeRecheck) ?? 2
        )
    }
}

extension ServerConfiguration.Session {
    private enum Keys: String, CodingKey { case lifetime, cookieName, sameSite, cookiePath, hostPrefix }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            lifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .lifetime) ?? 3600, cookieName: try c.decodeIfPresent(String.self, forKey: .cookieName) ?? "switchback_session",
            sameSite: try c.decodeIfPresent(String.self, forKey: .sameSite) ?? "Lax", cookiePath: try c.decodeIfPresent(String.self, forKey: .cookiePath) ?? "/",
            hostPrefix: try c.decodeIfPresent(Bool.self, forKey: .hostPrefix) ?? true
        )
    }
}

extension ServerConfiguration.Limits {
    private enum Keys: String, CodingKey {
        case startsPerMinutePerAddress, startsPerMinute, pendingAuthorizations, waitingStatusRequests, clientAddressHeader, trustedHops
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let defaults = Self()
        self.init(
            startsPerMinutePerAddress: try c.decodeIfPresent(Int.self, forKey: .startsPerMinutePerAddress) ?? defaults.startsPerMinutePerAddress,
            startsPerMinute: try c.decodeIfPresent(Int.self, forKey: .startsPerMinute) ?? defaults.startsPerMinute,
            pendingAuthorizations: try c.decodeIfPresent(Int.self, forKey: .pendingAuthorizations) ?? defaults.pendingAuthorizations,
            waitingStatusRequests: try c.decodeIfPresent(Int.self, forKey: .waitingStatusRequests) ?? defaults.waitingStatusRequests,
            clientAddressHeader: try c.decodeIfPresent(String.self, forKey: .clientAddressHeader),
            trustedHops: try c.decodeIfPresent(Int.self, forKey: .trustedHops) ?? defaults.trustedHops
        )
    }
}
