import Foundation
import Hummingbird
import Logging
import NIOCore
@_spi(SwitchbackInternals) import Switchback

/// The routes' logic: every handler takes the parsed request and returns the response. Collaborators
/// (store, provider client, clock, randomness, logger) come in through `init`. One instance serves every
/// request once the base URL is known (a class: a request shares it instead of copying its fields).
final class CompanionService: Sendable {
    let configuration: ServerConfiguration
    let baseURL: URL
    let store: any CompanionStore
    let provider: ProviderAccess?
    let allowList: RedirectAllowList?
    let waiters: CompletionWaiters
    let clock: any WallClock
    let entropy: any EntropySource
    let logger: Logger
    let metrics: CompanionMetrics
    /// App Attest's verifier, when the configuration has an `appAttest` section.
    let attestation: AppAttestVerifier?
    /// Play Integrity's verifier, when the configuration has a `playIntegrity` section.
    let playIntegrity: PlayIntegrityVerifier?
    /// The OpenID4VP verifier, when the configuration has a `wallet` section.
    let wallet: WalletVerifier?
    /// Apple's Verify with Wallet, when the configuration has an `appleIdentity` section.
    let appleIdentity: AppleIdentityVerifier?
    /// `baseURL`'s web origin, which a same-origin form's `Origin` must equal.
    let origin: String

    init(
        configuration: ServerConfiguration, baseURL: URL, store: any CompanionStore, provider: ProviderAccess?, allowList: RedirectAllowList?,
        waiters: CompletionWaiters, clock: any WallClock, entropy: any EntropySource, logger: Logger, metrics: CompanionMetrics,
        attestation: AppAttestVerifier?, playIntegrity: PlayIntegrityVerifier?, wallet: WalletVerifier?, appleIdentity: AppleIdentityVerifier?
    ) {
        self.configuration = configuration
        self.baseURL = baseURL
        self.store = store
        self.provider = provider
        self.allowList = allowList
        self.waiters = waiters
        self.clock = clock
        self.entropy = entropy
        self.logger = logger
        self.metrics = metrics
        self.attestation = attestation
        self.playIntegrity = playIntegrity
        self.wallet = wallet
        self.appleIdentity = appleIdentity
        origin = baseURL.webOrigin
    }

    static let maximumBody = 16 * 1024
    /// How long a started authorization waits for the provider's answer.
    static let authorizationLifetime: TimeInterval = 600

    /// The server's URL for `path`.
    func url(_ path: String) -> URL {
        baseURL.appendingPathComponent(String(path.drop(while: { $0 == "/" })))
    }

    /// This server's URL for a universal-link path opened in a browser, built on `publicURL`: the path is
    /// normalised (no empty or dot segments, so `//evil.example/x` cannot become another host) and the
    /// query kept as it came. Nil for a path that is not plain.
    func appLink(path: String, query: String?) -> URL? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !segments.contains(where: { $0 == "." || $0 == ".." || $0.contains("\\") }) else { return nil }
        return url("/" + segments.joined(separator: "/"), query: query)
    }

    /// This server's URL for `path` with a request's query as it came, or nil when the path or query is not
    /// valid percent-encoded text. The text only ever goes through `URL(string:)`, which refuses what it
    /// cannot parse: `URLComponents`' percent-encoded setters stop the process on such input.
    func url(_ path: String, query: String?) -> URL? {
        let base = baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        let text = base + (path.hasPrefix("/") ? path : "/" + path) + (query.flatMap { $0.isEmpty ? nil : "?" + $0 } ?? "")
        guard let url = URL(string: text), url.host == baseURL.host, url.port == baseURL.port else { return nil }
        return url
    }

    /// Looks `secret` up; a record that does not open (sealed under no record key this server holds: written
    /// by a database writer, or before an upgrade or a rotation dropped its key) is removed, logged and
    /// counted, and reads as none, so that a browser's old session cookie or an app's attested key is
    /// replaced rather than refused until it expires.
    func lookUpDroppingTampered<Value: Decodable>(_ kind: RecordKind, secret: String, as type: Value.Type) async throws -> Value? {
        let now = clock.now()
        do {
            return try await store.lookUp(kind, secret: secret, as: type, now: now)
        } catch let tampered as TamperedRecord {
            _ = try await store.take(kind, digest: Secrets.digest(secret), now: now)
            logger.warning("\(tampered.description); removed")
            metrics.refused(route: "store", reason: "tampered_record")
            return nil
        }
    }

    func requireProvider() throws -> ProviderAccess {
        guard let provider else { throw CompanionError(.notConfigured, "no provider is configured") }
        return provider
    }

    // MARK: Sign-in completion shared by exchange, bridge and completion

    /// The authorization options an app asked for: its acr values, login hint and page languages, and the
    /// parameters the configuration lets it forward.
    func options(
        responseMode: ResponseMode? = nil, acrValues: [String]?, loginHint: String?, uiLocales: [String]? = nil, parameters: [String: String]?
    ) throws -> AuthorizationOptions {
        let uiLocales = uiLocales ?? []
        guard uiLocales.count <= 8,
            uiLocales.allSatisfy({ (1...35).contains($0.utf8.count) && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" } })
        else {
            throw CompanionError(.invalidRequest, "ui_locales must be up to eight BCP 47 language tags")
        }
        let provider = try requireProvider()
        let allowed = provider.configuration.forwardedParameters
        let fixed = provider.configuration.authorizationParameters
        var extra: [(String, String)] = []
        for (name, value) in (parameters ?? [:]).sorted(by: { $0.key < $1.key }) {
            // What this server sets, an app may repeat but not change (an anonymous caller could otherwise
            // replace what the user is told, or the assurance the deployment chose).
            if let set = fixed[name] {
                guard set == value else {
                    throw CompanionError(.notAllowed, "the parameter \(name.prefix(40)) is set by this server (provider.authorizationParameters)")
                }
                continue
            }
            guard allowed.contains(name) else {
                throw CompanionError(.notAllowed, "the parameter \(name.prefix(40)) is not one this server forwards (provider.forwardedParameters)")
            }
            guard value.utf8.count <= 2048 else { throw CompanionError(.invalidRequest, "the parameter \(name.prefix(40)) is too long") }
            if name == "idp_params" { try Self.checkAppSwitchOnly(value) }
            extra.append((name, value))
        }
        extra += fixed.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) }
        do {
            try SingpassAuthenticationContext.check(parameters: extra)
        } catch let error as SwitchbackError {
            throw CompanionError(.invalidRequest, error.message)
        }
        return AuthorizationOptions(
            responseMode: responseMode, acrValues: acrValues ?? [], uiLocales: uiLocales, loginHint: loginHint, extraParameters: extra)
    }

    /// Signaturgruppen's `idp_params` as an app may forward it: MitID's app switch alone. The broker takes
    /// much more there (the level of assurance, a CPR or UUID hint, the text the MitID app shows), none of it
    /// an anonymous caller's to choose.
    static func checkAppSwitchOnly(_ value: String) throws {
        let refusal = CompanionError(
            .invalidRequest,
            "idp_params may carry only MitID's app switch: mitid.enable_app_switch, app_switch_os (ios, android), app_switch_url (https)")
        guard case .object(let params)? = try? JSONDecoder().decode(JSONValue.self, from: Data(value.utf8)), Set(params.keys) == ["mitid"],
            case .object(let mitID)? = params["mitid"],
            Set(mitID.keys).isSubset(of: ["enable_app_switch", "app_switch_os", "app_switch_url"])
        else { throw refusal }
        switch mitID["enable_app_switch"] {
        case nil, .bool?: break
        default: throw refusal
        }
        switch mitID["app_switch_os"] {
        case nil, .string("ios")?, .string("android")?: break
        default: throw refusal
        }
        switch mitID["app_switch_url"] {
        case nil: break
        case .string(let text)?: guard let url = URL(string: text), url.scheme == "https", url.host != nil else { throw refusal }
        default: throw refusal
        }
    }

    /// Starts an authorization whose answer comes back to `redirectURI`, and keeps it under its `state`.
    func startAuthorization(redirectURI: URL, purpose: PendingAuthorization.Purpose, options: AuthorizationOptions) async throws
        -> AuthorizationSession
    {
        // A cap on what anonymous clients can make the store hold, across every instance.
        guard try await store.count(.authorization, now: clock.now()) < configuration.limits.pendingAuthorizations else {
            logger.warning("the cap on pending authorizations is reached", metadata: ["cap": "\(configuration.limits.pendingAuthorizations)"])
            throw CompanionError(.rateLimited, "too many sign-ins are in progress; try again in a minute").retry(after: 60)
        }
        let client = try await requireProvider().client(for: redirectURI)
        let session: AuthorizationSession
        do {
            session = try await client.prepareAuthorization(options)
        } catch let error as SwitchbackError {
            throw CompanionError(.providerFailed, "the authorization could not be prepared: \(error.message)")
        }
        try await store.insert(
            .authorization, secret: session.state, PendingAuthorization(session: session, purpose: purpose),
            expiresAt: clock.now().addingTimeInterval(Self.authorizationLifetime))
        metrics.record(.signInStarted)
        return session
    }

    /// Stores a record whose key must be new (a DPoP proof's `jti`, an app's flow ID): a key already there
    /// is `taken`, a replay or a reuse. A store that failed is not a replay, so it is told apart by reading the
    /// key: only a record that is there makes the request `taken`; any other failure stays the store's.
    func insertNew(_ kind: RecordKind, secret: String, _ value: some Encodable, expiresAt: Date, taken: CompanionError) async throws {
        do {
            try await store.insert(kind, secret: secret, value, expiresAt: expiresAt)
        } catch let error as SwitchbackError where error.code == .storeFailed {
            guard try await store.read(kind, digest: Secrets.digest(secret), now: clock.now()) != nil else { throw error }
            throw taken
        }
    }

    /// Takes the pending authorization for `state` once, for `route` only: it is looked up, its route checked,
    /// and only then used up, so that a response brought to another route spends nothing (SECURITY.md). A
    /// replay, an unknown or an expired state is refused.
    func takeAuthorization(state: String?, for route: PendingAuthorization.Route) async throws -> PendingAuthorization {
        let unknown = CompanionError(.invalidState, "this sign-in response is unknown, expired or was already used")
        guard let state, let waiting = try await store.lookUp(.authorization, secret: state, as: PendingAuthorization.self, now: clock.now())
        else { throw unknown }
        guard waiting.purpose.route == route else { throw CompanionError(.invalidState, "this state belongs to another route") }
        guard let pending = try await store.redeem(.authorization, secret: state, as: PendingAuthorization.self, now: clock.now()) else {
            throw unknown
        }
        return pending
    }

    /// Checks the callback, redeems the code and validates the ID token with the core.
    func complete(_ callback: AuthorizationCallback, pending: PendingAuthorization) async throws -> SignInOutcome {
        let client = try await requireProvider().client(for: pending.session.redirectURI)
        do {
            let credential = try await client.completeAuthorization(callback, session: pending.session)
            metrics.record(.signInCompleted)
            return SignInOutcome(credential)
        } catch let error as SwitchbackError where error.code == .authorizationError {
            metrics.record(.signInFailed)
            throw CompanionError(.signInFailed, "the provider ended the sign-in: \(error.oauthError?.error ?? "error")")
        } catch let error as SwitchbackError {
            logger.notice("sign-in could not be completed", metadata: ["reason": "\(error.code)"])
            metrics.record(.signInFailed)
            throw CompanionError(.providerFailed, "the sign-in could not be completed: \(error.message)")
        }
    }

    /// What the app receives: the provider's tokens, or a first-party session made now.
    func deliver(_ outcome: SignInOutcome, as result: ServerConfiguration.ExchangeResult) async throws -> CompanionAPI.SignInAnswer {
        switch result {
        case .tokens:
            guard let tokens = outcome.tokens else { throw CompanionError(.providerFailed, "no tokens were kept for this sign-in") }
            return CompanionAPI.SignInAnswer(
                subject: outcome.subject, acr: outcome.acr, session: nil,
                tokens: TokenResponse(
                    accessToken: tokens.accessToken, tokenType: tokens.tokenType, refreshToken: tokens.refreshToken, idToken: tokens.idToken),
                expiresIn: tokens.expiresAt.map { max(0, Int($0.timeIntervalSince(clock.now()))) })
        case .session:
            let session = try await issueSession(
                subject: outcome.subject, acr: outcome.acr, issuer: outcome.issuer, sessionID: outcome.sessionID, signedInAt: outcome.signedInAt)
            return CompanionAPI.SignInAnswer(
                subject: outcome.subject, acr: outcome.acr, session: session.id, tokens: nil, expiresIn: Int(configuration.session.lifetime))
        }
    }
}
