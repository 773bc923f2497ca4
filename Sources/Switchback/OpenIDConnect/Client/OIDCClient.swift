import Foundation
public import Logging

/// An OpenID Connect relying party: discovery, authorization requests (with PAR), callback checks,
/// token exchange and ID-token validation; refresh (`OIDCClient+Refresh.swift`) and userinfo
/// (`OIDCClient+UserInfo.swift`) in their own files.
///
/// ```swift
/// let client = OIDCClient(
///     configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/oauth/callback")!),
///     provider: .discovery(issuer: "https://id.example.com")
/// )
/// let session = try await client.prepareAuthorization()
/// // open session.authorizationURL in a user agent, receive the callback URL, then:
/// let credential = try await client.completeAuthorization(.redirect(callbackURL), session: session)
/// ```
public actor OIDCClient {
    public nonisolated let configuration: ClientConfiguration
    public nonisolated let provider: ProviderSource
    let transport: any HTTPTransport
    let clock: any WallClock
    let entropy: any EntropySource
    let logger: Logger
    private let discovery: DiscoveryClient
    private var keyCaches: [URL: JWKSCache] = [:]
    /// The DPoP nonce each server gave last, for the next proof to it.
    let dpopNonces = DPoPNonces()
    /// The `state` of every sign-in completed, or being completed, by this instance, with the time its
    /// session was prepared. An entry is dropped once its session is older than
    /// ``authorizationLifetime``, after which the session is refused anyway: the set stays bounded in a
    /// long-lived process (the companion keeps its clients for its lifetime).
    private var claimedStates: [String: Date] = [:]

    /// How long after it was prepared an authorization session can still be completed.
    @_spi(SwitchbackInternals) public static let authorizationLifetime: Double = 3600

    /// Creates a client. Every collaborator is injectable; the defaults are URLSession, the system clock
    /// and the system's secure random generator.
    public init(
        configuration: ClientConfiguration,
        provider: ProviderSource,
        transport: any HTTPTransport = URLSessionTransport(),
        clock: any WallClock = SystemClock(),
        entropy: any EntropySource = SystemEntropy(),
        logger: Logger = Logger(label: "switchback")
    ) {
        self.configuration = configuration
        self.provider = provider
        self.transport = transport
        self.clock = clock
        self.entropy = entropy
        self.logger = logger
        self.discovery = DiscoveryClient(transport: transport, clock: clock, logger: logger)
    }

    /// The provider's metadata, discovered or static.
    public func metadata() async throws -> ProviderMetadata {
        try await discovery.metadata(for: provider)
    }

    /// A token-endpoint client for the discovered provider, with this client's authentication.
    public func tokenClient() async throws -> TokenClient {
        tokenClient(try await metadata())
    }

    /// A validator for JWT access tokens (RFC 9068) meant for `audience`, with the provider's keys.
    @_spi(SwitchbackInternals) public func accessTokenValidator(audience: String) async throws -> AccessTokenValidator {
        let metadata = try await metadata()
        return AccessTokenValidator(
            issuer: metadata.issuer, audience: audience, keys: keyCache(for: metadata.jwksURI),
            allowedAlgorithms: configuration.idTokenSigningAlgorithms,
            clockSkew: configuration.clockSkew, clock: clock
        )
    }

    /// The validator this client applies to ID tokens.
    public func idTokenValidator() async throws -> IDTokenValidator {
        let metadata = try await metadata()
        var allowed = configuration.idTokenSigningAlgorithms
        if let supported = metadata.idTokenSigningAlgValuesSupported {
            allowed.formIntersection(supported)
        }
        return IDTokenValidator(
            issuer: metadata.issuer,
            clientID: configuration.clientID,
            allowedAlgorithms: allowed,
            clockSkew: configuration.clockSkew,
            requiredACRValues: configuration.requiredACRValues,
            decryptionKeys: configuration.decryptionKeys,
            keys: keyCache(for: metadata.jwksURI),
            clock: clock
        )
    }

    /// Builds the authorization request — fresh state, nonce and PKCE verifier, pushed with PAR when the
    /// policy and the provider call for it — and returns what must be kept until the callback.
    public func prepareAuthorization(_ options: AuthorizationOptions = AuthorizationOptions()) async throws -> AuthorizationSession {
        let metadata = try await metadata()
        let state = entropy.token(bytes: 32)
        let nonce = entropy.token(bytes: 32)
        let pkce = PKCE(entropy: entropy)
        // A key of this sign-in's own, never one shared with another sign-in (ClientConfiguration.DPoPPolicy).
        let dpopKey = configuration.dpop == .perSignIn ? try configuration.dpopKeys.makeKey() : nil
        let builder = AuthorizationRequestBuilder(configuration: configuration, metadata: metadata)
        let parameters = try builder.parameters(state: state, nonce: nonce, pkce: pkce, dpopKey: dpopKey, options: options)
        var requestURI: String?
        let url: URL
        if try usesPAR(metadata) {
            let pushed = try await tokenClient(metadata).pushAuthorizationRequest(parameters, dpop: dpopKey)
            requestURI = pushed.requestURI
            url = try builder.url(parameters: [("client_id", configuration.clientID), ("request_uri", pushed.requestURI)])
        } else {
            url = try builder.url(parameters: parameters)
        }
        logger.info("authorization prepared", metadata: ["url": "\(Redaction.describe(url))", "pushed": "\(requestURI != nil)"])
        return AuthorizationSession(
            issuer: metadata.issuer,
            clientID: configuration.clientID,
            redirectURI: configuration.redirectURI,
            state: state,
            nonce: nonce,
            pkce: pkce,
            responseType: options.responseType,
            responseMode: options.responseMode ?? (options.responseType == .code ? .query : .fragment),
            maxAge: options.maxAge,
            requestURI: requestURI,
            authorizationURL: url,
            createdAt: clock.now(),
            dpopKey: dpopKey
        )
    }

    /// Checks the callback (redirect URI, state, `iss`, error), redeems the code and validates the ID token.
    /// Nothing is redeemed when a check fails. A session completes once: a callback delivered again, even
    /// while the first is still being redeemed, is ``SwitchbackError/Code/callbackReplayed``. After a failure
    /// the session may be completed again (a token endpoint that was down has not used the code up).
    public func completeAuthorization(_ callback: AuthorizationCallback, session: AuthorizationSession) async throws -> Credential {
        let metadata = try await metadata(for: session)
        switch session.responseType {
        case .code:
            let code = try CallbackValidator.code(from: callback, session: session, metadata: metadata)
            try claim(session)
            do {
                return try await redeem(
                    code: code, verifier: session.pkce, nonce: session.nonce, maxAge: session.maxAge, redirectURI: session.redirectURI,
                    dpop: session.dpopKey, metadata: metadata)
            } catch {
                claimedStates[session.state] = nil
                throw error
            }
        case .idTokenToken:
            let tokens = try CallbackValidator.implicitTokens(from: callback, session: session, metadata: metadata)
            // Claimed for good, even when validation fails: the same tokens would fail the same way.
            try claim(session)
            // The ID token is the only proof that the access token came from the provider for this
            // request: nonce and at_hash are required (OpenID Connect Core §3.2.2.9–11).
            let idToken = try await idTokenValidator().validate(
                tokens.idToken ?? "",
                expectations: .init(nonce: session.nonce, maxAge: session.maxAge, accessToken: tokens.accessToken, requireAccessTokenHash: true)
            )
            if !configuration.requiredClaims.isEmpty { try Self.checkRequiredClaims(configuration.requiredClaims, in: idToken.allClaims) }
            logger.info("sign-in completed from an implicit response", metadata: ["token": "\(idToken)"])
            return credential(from: tokens, idToken: idToken, previous: nil, issuer: metadata.issuer, dpopKey: nil)
        }
    }

    /// The provider's metadata, after checking `session` was prepared by this client for this provider.
    private func metadata(for session: AuthorizationSession) async throws -> ProviderMetadata {
        let metadata = try await metadata()
        guard session.issuer == metadata.issuer, session.clientID == configuration.clientID else {
            throw SwitchbackError(.invalidConfiguration, "this session was prepared for another provider or client")
        }
        return metadata
    }

    /// How many claimed states this client still remembers (for tests of its bound).
    @_spi(SwitchbackInternals) public var claimedStateCount: Int { claimedStates.count }

    private func claim(_ session: AuthorizationSession) throws {
        let oldest = clock.now().addingTimeInterval(-Self.authorizationLifetime)
        claimedStates = claimedStates.filter { $0.value > oldest }
        guard session.createdAt > oldest else {
            throw SwitchbackError(.timedOut, "this sign-in was started more than \(Int(Self.authorizationLifetime)) seconds ago; start a new one")
        }
        guard claimedStates.updateValue(session.createdAt, forKey: session.state) == nil else {
            throw SwitchbackError(.callbackReplayed, "this sign-in was already completed, or is being completed; the code was not redeemed again")
        }
    }

    /// Redeems a code that another party obtained and checked: a backend given the code, PKCE verifier and
    /// nonce by the app that ran the authorization (the app checked `state` and `iss` on its callback).
    /// The code goes to this client's redirect URI; the ID token must carry `nonce`. A code already redeemed
    /// is refused by the provider (``SwitchbackError/Code/tokenEndpointError``). Under
    /// ``ClientConfiguration/DPoPPolicy/perSignIn`` the tokens are bound to a new key, kept in the credential;
    /// a code the app's request bound to a key of its own (`dpop_jkt`) cannot be redeemed here, so an app
    /// whose codes a backend redeems sends no `dpop_jkt`.
    public func redeem(code: String, verifier: PKCE, nonce: String, maxAge: Int? = nil) async throws -> Credential {
        guard !code.isEmpty, !nonce.isEmpty else { throw SwitchbackError(.invalidConfiguration, "a code and a nonce are needed to redeem") }
        return try await redeem(
            code: code, verifier: verifier, nonce: nonce, maxAge: maxAge, redirectURI: configuration.redirectURI,
            dpop: configuration.dpop == .perSignIn ? try configuration.dpopKeys.makeKey() : nil, metadata: try await metadata())
    }

    private func redeem(
        code: String, verifier: PKCE, nonce: String, maxAge: Int?, redirectURI: URL, dpop: DPoPKey?, metadata: ProviderMetadata
    ) async throws -> Credential {
        if configuration.dpop == .perSignIn, dpop == nil {
            throw SwitchbackError(.invalidConfiguration, "this client binds tokens with DPoP, but the sign-in has no DPoP key")
        }
        let tokens = try await tokenClient(metadata).exchange(code: code, verifier: verifier.verifier, redirectURI: redirectURI, dpop: dpop)
        return try await credential(fromRedeemed: tokens, code: code, nonce: nonce, maxAge: maxAge, dpop: dpop, metadata: metadata)
    }

    /// The credential for tokens redeemed for `code`, once their ID token is valid for this request.
    private func credential(
        fromRedeemed tokens: TokenResponse, code: String, nonce: String, maxAge: Int?, dpop: DPoPKey?, metadata: ProviderMetadata
    ) async throws -> Credential {
        guard let rawIDToken = tokens.idToken else {
            guard configuration.identitySource == .userInfo else {
                throw SwitchbackError(.idTokenMissing, "the token response has no id_token although openid was requested")
            }
            return try await credentialFromUserInfo(tokens, dpop: dpop, metadata: metadata)
        }
        let idToken = try await idTokenValidator().validate(
            rawIDToken,
            expectations: .init(nonce: nonce, maxAge: maxAge, accessToken: tokens.accessToken, code: code)
        )
        if !configuration.requiredClaims.isEmpty { try Self.checkRequiredClaims(configuration.requiredClaims, in: idToken.allClaims) }
        logger.info("sign-in completed", metadata: ["token": "\(idToken)"])
        return credential(from: tokens, idToken: idToken, previous: nil, issuer: metadata.issuer, dpopKey: dpop)
    }

    /// A provider that issues no ID token (``IdentitySource/userInfo``): the identity is the userinfo
    /// answer for the access token just redeemed, which must name a subject.
    private func credentialFromUserInfo(_ tokens: TokenResponse, dpop: DPoPKey?, metadata: ProviderMetadata) async throws -> Credential {
        var credential = credential(from: tokens, idToken: nil, previous: nil, issuer: metadata.issuer, dpopKey: dpop)
        let claims = try await userInfo(for: credential)
        try Self.checkRequiredClaims(configuration.requiredClaims, in: claims)
        // The acr requirement holds for this identity too: a web sign-in at a low level must not pass as the app's.
        if !configuration.requiredACRValues.isEmpty {
            guard case .string(let acr)? = claims["acr"], configuration.requiredACRValues.contains(acr) else {
                throw SwitchbackError(
                    .acrNotSatisfied,
                    "the userinfo acr is not one of the required values (\(configuration.requiredACRValues.sorted().joined(separator: ", ")))")
            }
        }
        credential.identitySource = .userInfo
        credential.userInfoClaims = claims
        logger.info("sign-in completed with the identity from userinfo", metadata: ["subject": "\(credential.subject ?? "?")"])
        return credential
    }

    /// Every claim in `required` must be present with one of its allowed values (strings, or numbers and
    /// booleans as their JSON text).
    static func checkRequiredClaims(_ required: [String: Set<String>], in claims: [String: JSONValue]) throws {
        for (name, allowed) in required.sorted(by: { $0.key < $1.key }) {
            let value: String? =
                switch claims[name] {
                case .string(let text)?: text
                case .number?, .bool?: claims[name]?.description
                default: nil
                }
            guard let value, allowed.contains(value) else {
                throw SwitchbackError(
                    .identityRequirementNotMet,
                    "the identity's \(name) is \(value.map { "\"\($0.prefix(40))\"" } ?? "missing"); required: \(allowed.sorted().joined(separator: ", "))"
                )
            }
        }
    }

    /// The code of a callback whose redemption is someone else's (the app's backend, as the confidential
    /// client): the same checks as ``completeAuthorization(_:session:)`` — redirect URI, `state`, `iss`,
    /// the provider's error — and the same single use: the session's state is claimed for good.
    func authorizationCode(from callback: AuthorizationCallback, session: AuthorizationSession) async throws -> String {
        let metadata = try await metadata(for: session)
        guard session.responseType == .code else {
            throw SwitchbackError(.invalidConfiguration, "this session asked for tokens, not a code")
        }
        let code = try CallbackValidator.code(from: callback, session: session, metadata: metadata)
        try claim(session)
        return code
    }

    /// A credential from tokens the app's backend redeemed for `code`: the ID token is validated here
    /// too, against this session's nonce and `max_age`, the access token (`at_hash`) and the code (`c_hash`).
    func credential(fromRedeemed tokens: TokenResponse, code: String, session: AuthorizationSession) async throws -> Credential {
        // The backend proved its own key, if any: the app holds none for these tokens.
        try await credential(
            fromRedeemed: tokens, code: code, nonce: session.nonce, maxAge: session.maxAge, dpop: nil, metadata: try await metadata(for: session))
    }

    private func usesPAR(_ metadata: ProviderMetadata) throws -> Bool {
        let required = metadata.requirePushedAuthorizationRequests || configuration.pushedAuthorization == .always
        switch (configuration.pushedAuthorization, metadata.pushedAuthorizationRequestEndpoint) {
        case (.never, _) where metadata.requirePushedAuthorizationRequests:
            throw SwitchbackError(.parRequired, "the provider requires pushed authorization requests but the client disabled them")
        case (_, nil) where required:
            throw SwitchbackError(.parRequired, "pushed authorization requests are required but the provider publishes no endpoint")
        case (.never, _), (_, nil):
            return false
        default:
            return true
        }
    }

    func tokenClient(_ metadata: ProviderMetadata) -> TokenClient {
        TokenClient(
            configuration: configuration, metadata: metadata, transport: transport, clock: clock, entropy: entropy, logger: logger, nonces: dpopNonces
        )
    }

    private func keyCache(for url: URL) -> JWKSCache {
        if let cache = keyCaches[url] { return cache }
        let cache = JWKSCache(jwksURI: url, transport: transport, clock: clock, refetchInterval: configuration.jwksRefetchInterval, logger: logger)
        keyCaches[url] = cache
        return cache
    }

    func credential(from tokens: TokenResponse, idToken: IDToken?, previous: Credential?, issuer: String, dpopKey: DPoPKey?) -> Credential {
        Credential(
            issuer: issuer,
            clientID: configuration.clientID,
            accessToken: tokens.accessToken,
            tokenType: tokens.tokenType,
            refreshToken: tokens.refreshToken ?? previous?.refreshToken,
            idToken: idToken?.rawValue ?? previous?.idToken,
            idTokenClaims: idToken?.claims ?? previous?.idTokenClaims,
            expiresAt: tokens.expiresIn.map { clock.now().addingTimeInterval(TimeInterval($0)) },
            scopes: tokens.scope.map { $0.split(separator: " ").map(String.init) } ?? previous?.scopes ?? configuration.scopes,
            identitySource: idToken == nil ? previous?.identitySource ?? .idToken : .idToken,
            userInfoClaims: idToken == nil ? previous?.userInfoClaims : nil,
            dpopKey: dpopKey,
            userAgent: previous?.userAgent
        )
    }
}
