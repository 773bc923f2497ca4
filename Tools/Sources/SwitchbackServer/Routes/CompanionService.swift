import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

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

    // MARK: Bodies

    /// The request body, refused when larger than `limit`; `request` keeps it for a later reader.
    static func collectBody(of request: inout Request, limit: Int = maximumBody) async throws -> ByteBuffer {
        do {
            return try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw CompanionError(.tooLarge, "the body is larger than \(limit) bytes")
        } catch let error as HTTPParserError where error != .invalidEOFState {
            // A body the parser refused (a bad chunk size, say), not one that stopped arriving.
            throw CompanionError(.invalidRequest, "the body is not valid HTTP")
        } catch {
            // The connection closed before the body's end: the client left, or its body outlasted
            // `limits.bodyTimeout` (ConnectionGuard). Nobody reads this answer; the metrics and the log do.
            throw CompanionError(.requestTimeout, "the body did not arrive whole")
        }
    }

    private func boundedBody(of request: Request, limit: Int = maximumBody) async throws -> Data {
        var request = request
        return Data(try await Self.collectBody(of: &request, limit: limit).readableBytesView)
    }

    /// A start's `binding`: the app's random secret, which only its own later request repeats.
    static func requireBinding(_ binding: String) throws {
        guard binding.utf8.count >= 22, Secrets.isPlausible(binding) else {
            throw CompanionError(.invalidRequest, "binding must be a random secret of at least 128 bits (22+ printable characters)")
        }
    }

    /// Reads a JSON body of at most `limit` bytes into `type`.
    func decode<Body: Decodable>(_ type: Body.Type, from request: Request, limit: Int = maximumBody) async throws -> Body {
        let body = try await boundedBody(of: request, limit: limit)
        if let flat = type as? any FlatJSON.Type {
            guard let value = flat.read(body) as? Body else {
                throw CompanionError(.invalidRequest, "the body is not the JSON object this route takes")
            }
            return value
        }
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch DecodingError.keyNotFound(let key, _) {
            throw CompanionError(.invalidRequest, "the JSON body lacks \(key.stringValue)")
        } catch {
            throw CompanionError(.invalidRequest, "the body is not the JSON object this route takes")
        }
    }

    /// Reads a bounded form body.
    func form(from request: Request, limit: Int = maximumBody) async throws -> (raw: Data, fields: [String: String]) {
        let raw = try await boundedBody(of: request, limit: limit)
        guard let pairs = FormEncoding.decode(String(decoding: raw, as: UTF8.self), plusIsSpace: true) else {
            throw CompanionError(.invalidRequest, "the body is not a form")
        }
        var fields: [String: String] = [:]
        for (name, value) in pairs {
            guard fields.updateValue(value, forKey: name) == nil else { throw CompanionError(.invalidRequest, "\(name.prefix(40)) appears twice") }
        }
        return (raw, fields)
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

    /// A new first-party session.
    func issueSession(
        subject: String, acr: String?, issuer: String?, sessionID: String? = nil, signedInAt: Date? = nil, notAfter: Date? = nil
    ) async throws -> (id: String, record: SessionRecord) {
        let now = clock.now()
        let full = now.addingTimeInterval(configuration.session.lifetime)
        let record = SessionRecord(
            subject: subject, acr: acr, createdAt: now, expiresAt: notAfter.map { min($0, full) } ?? full, issuer: issuer,
            sessionID: sessionID, signedInAt: signedInAt)
        let id = try await store.issue(.session, record, expiresAt: record.expiresAt, entropy: entropy)
        metrics.record(.sessionIssued)
        return (id, record)
    }

    /// The `Set-Cookie` value for a session: Secure, HttpOnly, SameSite, Path and Max-Age always.
    func sessionCookie(_ id: String, expiresAt: Date) -> String {
        let session = configuration.session
        let maxAge = max(0, Int(expiresAt.timeIntervalSince(clock.now()).rounded(.down)))
        return "\(session.effectiveCookieName)=\(id); Path=\(session.cookiePath); Max-Age=\(maxAge); Secure; HttpOnly; SameSite=\(session.sameSite)"
    }

    /// The `Set-Cookie` value that removes the session cookie.
    func expiredSessionCookie() -> String {
        let session = configuration.session
        return "\(session.effectiveCookieName)=; Path=\(session.cookiePath); Max-Age=0; Secure; HttpOnly; SameSite=\(session.sameSite)"
    }

    /// The session ID a request's `Authorization: Session …` header or cookie carries, when it has the shape
    /// of one this server issued.
    func sessionID(of request: Request) -> String? {
        var id: String?
        let name = configuration.session.effectiveCookieName
        if let header = request.headers[.authorization], header.lowercased().hasPrefix("session ") {
            id = String(header.dropFirst(8))
        } else if let cookies = request.headers[.cookie] {
            id = cookies.split(separator: ";").lazy.map { $0.trimmingSpaces() }
                .first { $0.hasPrefix(name + "=") }
                .map { String($0.dropFirst(name.count + 1)) }
        }
        guard let id, Secrets.isIssued(id) else { return nil }
        return id
    }

    /// The session a request's cookie or `Authorization: Session …` header names.
    func session(of request: Request) async throws -> SessionRecord? {
        guard let id = sessionID(of: request), let record = try await lookUpDroppingTampered(.session, secret: id, as: SessionRecord.self)
        else { return nil }
        // The sealed expiry, not only the row's: a database writer can move the row's `expires_at`, not this.
        guard record.expiresAt > clock.now() else {
            _ = try await store.take(.session, digest: Secrets.digest(id), now: clock.now())
            return nil
        }
        if try await loggedOut(record) {
            // The provider said this user or session signed out after the session began: it ends here.
            _ = try await store.take(.session, digest: Secrets.digest(id), now: clock.now())
            logger.info("session ended by the provider's back-channel logout")
            return nil
        }
        return record
    }
}

/// An authorization the server started, kept under its `state` until the provider answers.
struct PendingAuthorization: Codable, Sendable {
    enum Purpose: Codable, Sendable {
        /// Redeemed by `POST /exchange` only with the binding whose digest this is and, when the start was
        /// attested, an assertion by the same App Attest key (`attestedKey`, its base64url ID).
        case exchange(bindingDigest: String, attestedKey: String? = nil)
        /// Return to `scheme://oauth<path>`; the code is redeemable only with the binding whose digest this is.
        case bridge(scheme: String, path: String, bindingDigest: String)
        /// Report to the app whose flow ID has this digest; the result is sealed with `resultKey` (derived
        /// from the flow ID, which only the app holds). Asked for only with an assertion by `attestedKey`
        /// when the start was attested.
        case completion(flowDigest: String, resultKey: String, attestedKey: String? = nil)

        var route: Route {
            switch self {
            case .exchange: .exchange
            case .bridge: .bridge
            case .completion: .completion
            }
        }
    }

    /// The route an authorization was started for, and the only one that may use it up.
    enum Route: Sendable {
        case exchange
        case bridge
        case completion
    }

    let session: AuthorizationSession
    let purpose: Purpose
}

/// A finished sign-in, before it is delivered.
struct SignInOutcome: Codable, Sendable {
    struct Tokens: Codable, Sendable {
        let accessToken: String
        let tokenType: String
        let idToken: String?
        let refreshToken: String?
        let expiresAt: Date?
    }

    let subject: String
    let acr: String?
    let tokens: Tokens?
    /// The provider and its session (`sid` of the ID token), which a Back-Channel Logout names.
    let issuer: String?
    let sessionID: String?
    /// The ID token's `iat`: when the provider signed the user in, on the provider's clock.
    let signedInAt: Date?

    init(subject: String, acr: String?, tokens: Tokens?, issuer: String? = nil, sessionID: String? = nil, signedInAt: Date? = nil) {
        self.subject = subject
        self.acr = acr
        self.tokens = tokens
        self.issuer = issuer
        self.sessionID = sessionID
        self.signedInAt = signedInAt
    }

    init(_ credential: Credential) {
        self.init(
            subject: credential.subject ?? "", acr: credential.acr,
            tokens: Tokens(
                accessToken: credential.accessToken, tokenType: credential.tokenType, idToken: credential.idToken,
                refreshToken: credential.refreshToken,
                expiresAt: credential.expiresAt
            ),
            issuer: credential.issuer, sessionID: credential.idTokenClaims?.sid,
            signedInAt: credential.idTokenClaims?.iat.map(Date.init(timeIntervalSince1970:))
        )
    }

    /// The outcome without the provider's tokens, for a result delivered as a session.
    func withoutTokens() -> SignInOutcome {
        SignInOutcome(subject: subject, acr: acr, tokens: nil, issuer: issuer, sessionID: sessionID, signedInAt: signedInAt)
    }
}

/// A first-party session.
struct SessionRecord: Codable, Sendable, Equatable {
    let subject: String
    let acr: String?
    let createdAt: Date
    let expiresAt: Date
    /// The provider that signed the user in, and its session: a Back-Channel Logout naming either ends
    /// this session (nil in records written before they were kept, and for a session without a provider).
    var issuer: String? = nil
    var sessionID: String? = nil
    /// When the provider signed the user in (the ID token's `iat`), which a `sub` logout is compared with.
    var signedInAt: Date? = nil
}

extension CompanionAPI.HandOffRequest: FlatJSON {
    func json() -> Data {
        var writer = JSONObjectWriter()
        writer.add("goto", goto)
        return writer.data()
    }

    init(json members: JSONMembers) throws { self.init(goto: try members.string("goto")) }
}

extension CompanionAPI.HandOffIssued: FlatJSON {
    func json() -> Data {
        var writer = JSONObjectWriter()
        writer.add("expires_in", expiresIn)
        writer.add("handoffotp", handoffotp)
        writer.add("redeem_url", redeemURL)
        return writer.data()
    }

    init(json members: JSONMembers) throws {
        guard let code = try members.string("handoffotp"), let expiresIn = try members.number("expires_in"), let whole = Int(exactly: expiresIn)
        else { throw JSONMembers.Mismatch() }
        self.init(handoffotp: code, expiresIn: whole, redeemURL: try members.string("redeem_url"))
    }
}

extension SessionRecord: FlatJSON {
    func json() -> Data {
        var writer = JSONObjectWriter()
        writer.add("acr", acr)
        writer.add("createdAt", createdAt.timeIntervalSince1970)
        writer.add("expiresAt", expiresAt.timeIntervalSince1970)
        writer.add("issuer", issuer)
        writer.add("sessionID", sessionID)
        writer.add("signedInAt", signedInAt?.timeIntervalSince1970)
        writer.add("subject", subject)
        return writer.data()
    }

    init(json members: JSONMembers) throws {
        guard let subject = try members.string("subject"), let createdAt = try members.number("createdAt"),
            let expiresAt = try members.number("expiresAt")
        else { throw JSONMembers.Mismatch() }
        self.init(
            subject: subject, acr: try members.string("acr"), createdAt: Date(timeIntervalSince1970: createdAt),
            expiresAt: Date(timeIntervalSince1970: expiresAt), issuer: try members.string("issuer"), sessionID: try members.string("sessionID"),
            signedInAt: try members.number("signedInAt").map(Date.init(timeIntervalSince1970:)))
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (header whitespace, RFC 9110 §5.6.3), in plain Swift:
    /// Foundation's `trimmingCharacters` goes through NSString on Linux.
    func trimmingSpaces() -> Substring {
        let string = Substring(self)
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = string.firstIndex(where: { !isSpace($0) }), let last = string.lastIndex(where: { !isSpace($0) }) else { return "" }
        return string[first...last]
    }
}
