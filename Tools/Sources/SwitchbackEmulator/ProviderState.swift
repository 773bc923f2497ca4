import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Everything the emulator remembers between requests: pending authorizations, codes and tokens.
actor ProviderState {
    /// An authorization request waiting for the user to sign in.
    struct Pending: Sendable {
        let clientID: String
        let redirectURI: String
        let state: String?
        let nonce: String?
        /// `code`, or `id_token token` (implicit: no code, no PKCE).
        let responseType: String
        let codeChallenge: String?
        let scope: [String]
        let responseMode: String
        /// Faults asked for with this request (`emulator_fault`).
        let faults: Set<Fault>
        let acrValues: [String]
        let loginHint: String?
        /// Where the authenticator app returns to the client's app, from the parameter the profile
        /// reads (`app_callback_uri`, `app_launch_url`).
        let appReturnURL: String?
        /// Norwegian BankID: the upfront permission that allows an `app_callback_uri`.
        let permissionToken: String?
        /// The DPoP key the code is bound to (`dpop_jkt`, RFC 9449 §10).
        let dpopJKT: String?
        /// The authorization response is a page the user taps rather than a redirect (see ``Profile/ReturnPage``).
        let tapToReturn: Bool
    }

    /// An authenticator-app hand-off: the provider's page waits while the app decides.
    struct Transaction: Sendable {
        enum Status: Sendable, Equatable {
            case pending
            case approved(subject: String)
            case declined
            /// The app will never answer.
            case ignored
            /// The app reported a failure of its own (Swedish BankID's `certificateErr`), or a newer order
            /// for the same user replaced this one (`cancelled`): the hint code collect reports.
            case failed(hint: String)

            /// Whether the app may still answer: nothing answered yet, or the app was left without an answer.
            var awaitsAnswer: Bool { self == .pending || self == .ignored }

            /// The name the authenticator endpoints report.
            var name: String {
                switch self {
                case .pending: "pending"
                case .approved: "approved"
                case .declined: "declined"
                case .ignored: "ignored"
                case .failed: "failed"
                }
            }
        }

        let reference: String
        let requestID: String
        let clientID: String
        /// The session cookie of the browser that started the sign-in; resuming needs it.
        let session: String
        /// The acr the ID token reports when the transaction completes.
        let acr: String?
        var status: Status
        /// The authenticator app has opened the transaction (the user is looking at it).
        var opened = false
        /// The app opened it but found no usable identity yet (Swedish BankID's `started`).
        var withoutUsableID = false
        /// The user who opened it in the app, or whose identifier the browser sent (the other-device path).
        var user: String?
        /// The code the browser shows and the user picks in the app (UAE Pass's number matching); nil when
        /// the transaction needs none.
        var matchCode: String?
        /// Wrong codes typed for it on a code display (MitID).
        var failedCodes = 0
        /// The content of the QR code another phone scans (Singpass, MitID after the user ID), single-use.
        let scanToken: String
        /// When the order started, for its lifetime and the animated QR code's seconds.
        let startedAt: Date
        /// Swedish BankID's secure start: the QR code's public token and the secret its codes are keyed with.
        let qrStartToken: String
        let qrStartSecret: String
    }

    /// What a code or token was issued for.
    struct Grant: Sendable {
        let clientID: String
        let redirectURI: String
        let subject: String
        let nonce: String?
        let scope: [String]
        let codeChallenge: String
        let authTime: Date
        /// Faults asked for with the authorization request; they follow its code and tokens.
        let faults: Set<Fault>
        let acr: String?
        /// The DPoP key thumbprint the code (from `dpop_jkt`) or the tokens (from the proof) are bound to.
        var boundKey: String?
        /// The sign-in every refresh token of this grant descends from (RFC 9700 §4.14.2's token family).
        var family = UUID().uuidString
    }

    enum Redemption {
        case granted(Grant)
        case unknown
        case expired
        /// The code was already used; the tokens it produced are revoked (RFC 6749 §4.1.2).
        case replayed
    }

    private let entropy: any EntropySource
    private let now: @Sendable () -> Date
    private var pending: [String: Pending] = [:]
    private var codes: [String: (grant: Grant, expires: Date, used: Bool, tokens: [String])] = [:]
    private var accessTokens: [String: (grant: Grant, expires: Date)] = [:]
    private var refreshTokens: [String: Grant] = [:]
    /// Refresh tokens already rotated away, with their family: a reuse is recognised, not just refused.
    private var rotatedRefreshTokens: [String: (family: String, clientID: String)] = [:]
    /// ``rotatedRefreshTokens``' keys, oldest first: at most ``rotatedKept`` are remembered, so a long run
    /// (a benchmark, a day of development) does not grow without bound.
    private var rotatedOrder: [String] = []
    static let rotatedKept = 10_000
    private var pushed: [String: (request: Pending, expires: Date)] = [:]
    private var transactions: [String: Transaction] = [:]
    /// Single-use identifiers seen (client assertions, DPoP proofs), kept until they expire.
    private var usedIDs: [String: Date] = [:]
    private var permissions: [String: (clientID: String, callback: String?, expires: Date)] = [:]
    /// Client-credentials access tokens (no user): the client and the scopes they carry.
    private var clientTokens: [String: (clientID: String, scopes: Set<String>, expires: Date)] = [:]

    init(entropy: any EntropySource, now: @escaping @Sendable () -> Date) {
        self.entropy = entropy
        self.now = now
    }

    func begin(_ request: Pending) -> String {
        let id = entropy.token(bytes: 16)
        pending[id] = request
        return id
    }

    func pending(_ id: String) -> Pending? { pending[id] }

    /// Ends a pending request without a code (the user declined, or a fault answered with an error).
    func discard(_ id: String) { pending[id] = nil }

    /// Stores a pushed request and returns its `request_uri`.
    /// Pushed requests already taken, kept beside ``pushed`` until they would have expired.
    private var usedPushed: Set<String> = []

    func push(_ request: Pending, lifetime: TimeInterval) -> String {
        let uri = "urn:ietf:params:oauth:request_uri:" + entropy.token(bytes: 24)
        pushed[uri] = (request, now().addingTimeInterval(lifetime))
        return uri
    }

    /// What a `request_uri` came to at the authorization endpoint.
    enum PushedRequest {
        /// Taken, once: the pending request's ID.
        case taken(String)
        /// This client's, but past its lifetime or already used: the request it carried.
        case spent(Pending)
        /// Unknown, or another client's.
        case unknown
    }

    /// Turns a pushed request into a pending one, once, for the client that pushed it. A used request is
    /// remembered until it would have expired, so that it can be told from an unknown one.
    func takePushed(_ uri: String, clientID: String) -> PushedRequest {
        guard let entry = pushed[uri], entry.request.clientID == clientID else { return .unknown }
        guard entry.expires > now(), !usedPushed.contains(uri) else {
            pushed[uri] = nil
            usedPushed.remove(uri)
            return .spent(entry.request)
        }
        usedPushed.insert(uri)
        return .taken(begin(entry.request))
    }

    /// Ends a pending request with a signed-in user and returns a fresh single-use code.
    func issueCode(for id: String, subject: String, acr: String?, lifetime: TimeInterval) -> (code: String, request: Pending)? {
        guard let request = pending[id], let challenge = request.codeChallenge,
            let grant = takeGrant(id, subject: subject, acr: acr, challenge: challenge)
        else { return nil }
        let code = entropy.token(bytes: 24)
        codes[code] = (grant, now().addingTimeInterval(lifetime), false, [])
        return (code, request)
    }

    /// Ends a pending implicit request with a signed-in user: the grant its tokens are issued for, once.
    func issueImplicit(for id: String, subject: String, acr: String?) -> Grant? {
        guard pending[id]?.responseType == "id_token token" else { return nil }
        return takeGrant(id, subject: subject, acr: acr, challenge: "")
    }

    private func takeGrant(_ id: String, subject: String, acr: String?, challenge: String) -> Grant? {
        guard let request = pending.removeValue(forKey: id) else { return nil }
        return Grant(
            clientID: request.clientID, redirectURI: request.redirectURI, subject: subject, nonce: request.nonce,
            scope: request.scope, codeChallenge: challenge, authTime: now(), faults: request.faults, acr: acr, boundKey: request.dpopJKT
        )
    }

    /// How long an unfinished transaction is kept.
    static let transactionLifetime: TimeInterval = 900

    /// Starts an authenticator hand-off for a pending request, bound to a new browser session.
    func startTransaction(requestID: String, clientID: String, acr: String?) -> Transaction {
        // Sign-ins nobody finished are forgotten after a quarter of an hour, so abandoned pages do not pile up.
        let current = now()
        transactions = transactions.filter { current.timeIntervalSince($0.value.startedAt) < Self.transactionLifetime }
        let transaction = Transaction(
            reference: entropy.token(bytes: 16), requestID: requestID, clientID: clientID, session: entropy.token(bytes: 24), acr: acr,
            status: .pending, scanToken: entropy.token(bytes: 16), startedAt: now(), qrStartToken: UUID().uuidString.lowercased(),
            qrStartSecret: UUID().uuidString.lowercased()
        )
        transactions[transaction.reference] = transaction
        return transaction
    }

    func transaction(_ reference: String) -> Transaction? { transactions[reference] }

    /// The clock the state keeps time by.
    var currentDate: Date { now() }

    /// What opening a request in an authenticator app came to.
    enum Opening {
        case opened(Transaction)
        case unknown
        /// The app already answered it.
        case answered
        /// Another user's app opened it first, or the provider sent it to another user's app.
        case heldByAnother
    }

    /// The authenticator app of `user` (nil: not said) opens the request, with or without a usable identity.
    /// The first app to open it holds it. With `replacing`, another undecided transaction the same user
    /// opened earlier fails with that hint code (Swedish BankID's `cancelled`: a new order for the same user).
    func open(_ reference: String, user: String?, usableID: Bool = true, replacing hint: String? = nil) -> Opening {
        guard let transaction = transactions[reference] else { return .unknown }
        guard transaction.status.awaitsAnswer else { return .answered }
        if let holder = transaction.user, let user, holder != user { return .heldByAnother }
        if let user, let hint {
            for (other, transaction) in transactions
            where other != reference && transaction.user == user && transaction.opened && transaction.status == .pending {
                transactions[other]?.status = .failed(hint: hint)
            }
        }
        transactions[reference]?.opened = true
        transactions[reference]?.withoutUsableID = !usableID
        if let user { transactions[reference]?.user = user }
        return transactions[reference].map { .opened($0) } ?? .unknown
    }

    /// Counts a wrong code display code for the transaction; returns how many there have been.
    func recordFailedCode(_ reference: String) -> Int {
        transactions[reference]?.failedCodes += 1
        return transactions[reference]?.failedCodes ?? 0
    }

    /// The transaction whose QR code (Singpass, MitID) carries `token`.
    func transaction(scanToken token: String) -> Transaction? {
        transactions.values.first { ConstantTime.equals($0.scanToken, token) }
    }

    /// The Swedish BankID order whose animated QR code names `qrStartToken`.
    func transaction(qrStartToken token: String) -> Transaction? {
        transactions.values.first { $0.qrStartToken == token }
    }

    /// The browser sent the user's identifier (the other-device path): the request now waits in that
    /// user's app, with `matchCode` for the user to pick when the provider matches numbers.
    func send(_ reference: String, to user: String, matchCode: String?) -> Transaction? {
        // Once an app opened it, the request is that app's: the browser cannot send it elsewhere.
        guard transactions[reference]?.status == .pending, transactions[reference]?.opened == false else { return nil }
        transactions[reference]?.user = user
        transactions[reference]?.matchCode = matchCode
        return transactions[reference]
    }

    /// The undecided requests waiting in `user`'s app (a push notification each), oldest first.
    func inbox(of user: String) -> [Transaction] {
        transactions.values.filter { $0.user == user && $0.status == .pending }.sorted { $0.startedAt < $1.startedAt }
    }

    /// Records the authenticator's answer; false when the transaction is unknown or already decided.
    func decide(_ reference: String, _ status: Transaction.Status) -> Bool {
        guard let transaction = transactions[reference], transaction.status.awaitsAnswer else { return false }
        transactions[reference]?.status = status
        return true
    }

    /// Ends a transaction once its result has gone back to the client.
    func endTransaction(_ reference: String) { transactions[reference] = nil }

    /// Registers an upfront permission for a client and returns its token.
    func issuePermission(clientID: String, callback: String?, lifetime: TimeInterval) -> String {
        let token = entropy.token(bytes: 24)
        permissions[token] = (clientID, callback, now().addingTimeInterval(lifetime))
        return token
    }

    /// Uses a permission token up; false when it is unknown, expired, used, another client's, or granted
    /// for another `app_callback_uri`.
    func takePermission(_ token: String, clientID: String, callback: String) -> Bool {
        guard let entry = permissions[token], entry.clientID == clientID else { return false }
        permissions[token] = nil
        return entry.expires > now() && entry.callback == callback
    }

    /// An access token for the client itself (`grant_type=client_credentials`).
    func issueClientToken(clientID: String, scopes: Set<String>, lifetime: TimeInterval) -> String {
        let token = entropy.token(bytes: 32)
        clientTokens[token] = (clientID, scopes, now().addingTimeInterval(lifetime))
        return token
    }

    /// The client and scopes of an unexpired client-credentials token.
    func clientToken(_ token: String) -> (clientID: String, scopes: Set<String>)? {
        guard let entry = clientTokens[token], entry.expires > now() else { return nil }
        return (entry.clientID, entry.scopes)
    }

    /// Records a single-use identifier (a client assertion's or a DPoP proof's `jti`) within `scope` (the
    /// client, the key) until `expiry`; false when it was used before (RFC 7523 §3, RFC 9449 §11.1).
    func useOnce(_ jti: String, scope: String, until expiry: Date) -> Bool {
        let current = now()
        usedIDs = usedIDs.filter { $0.value > current }
        return usedIDs.updateValue(expiry, forKey: scope + " " + jti) == nil
    }

    /// The grant behind a code, without using the code up.
    func peek(code: String) -> Grant? { codes[code]?.grant }

    func redeem(code: String) -> Redemption {
        guard let entry = codes[code] else { return .unknown }
        if entry.used {
            for token in entry.tokens {
                accessTokens[token] = nil
                refreshTokens[token] = nil
            }
            return .replayed
        }
        codes[code]?.used = true
        return entry.expires < now() ? .expired : .granted(entry.grant)
    }

    /// Issues an access token (and, when asked, a refresh token) for a grant; remembers them against
    /// the code so that a replay can revoke them.
    func issueTokens(for grant: Grant, code: String?, lifetime: TimeInterval, refresh: Bool, access preset: String? = nil) -> (
        access: String, refresh: String?
    ) {
        let access = preset ?? entropy.token(bytes: 32)
        accessTokens[access] = (grant, now().addingTimeInterval(lifetime))
        var refreshToken: String?
        if refresh {
            let token = entropy.token(bytes: 32)
            refreshTokens[token] = grant
            refreshToken = token
        }
        if let code { codes[code]?.tokens += [access] + (refreshToken.map { [$0] } ?? []) }
        return (access, refreshToken)
    }

    func grant(forRefreshToken token: String) -> Grant? { refreshTokens[token] }

    /// The families (sign-ins) of `subject` that still hold an access or refresh token, oldest token first.
    func families(of subject: String) -> [String] {
        var seen = Set<String>()
        let grants = accessTokens.values.map(\.0) + Array(refreshTokens.values)
        return grants.filter { $0.subject == subject }.map(\.family).filter { seen.insert($0).inserted }.sorted()
    }

    /// Signs a user out of a client: every refresh token issued to them there stops working.
    func revokeRefreshTokens(clientID: String, subject: String) {
        refreshTokens = refreshTokens.filter { $0.value.clientID != clientID || $0.value.subject != subject }
    }

    /// Rotates a refresh token: the old one stops working, and is remembered as rotated.
    func rotateRefreshToken(_ token: String) {
        guard let grant = refreshTokens.removeValue(forKey: token) else { return }
        rotatedRefreshTokens[token] = (grant.family, grant.clientID)
        rotatedOrder.append(token)
        if rotatedOrder.count > Self.rotatedKept {
            let dropped = rotatedOrder.prefix(rotatedOrder.count - Self.rotatedKept)
            for old in dropped { rotatedRefreshTokens[old] = nil }
            rotatedOrder.removeFirst(dropped.count)
        }
    }

    /// The family and client of a refresh token already rotated away; nil for one never issued (or still valid).
    func rotatedFamily(of token: String) -> (family: String, clientID: String)? { rotatedRefreshTokens[token] }

    enum Revocation { case revoked, unknown, otherClient }

    /// Revokes an access or refresh token of `clientID`; a refresh token takes its family's refresh and
    /// access tokens with it.
    func revoke(_ token: String, clientID: String) -> Revocation {
        if let grant = refreshTokens[token] {
            guard grant.clientID == clientID else { return .otherClient }
            refreshTokens = refreshTokens.filter { $0.value.family != grant.family }
            accessTokens = accessTokens.filter { $0.value.grant.family != grant.family }
            return .revoked
        }
        if let entry = accessTokens[token] {
            guard entry.grant.clientID == clientID else { return .otherClient }
            accessTokens[token] = nil
            return .revoked
        }
        return .unknown
    }

    /// Revokes every refresh and access token of a family (a reuse was seen).
    func revokeFamily(_ family: String) {
        refreshTokens = refreshTokens.filter { $0.value.family != family }
        accessTokens = accessTokens.filter { $0.value.grant.family != family }
    }

    /// The DPoP nonce the server asks proofs to carry, and when it stops being current.
    private var dpopNonce: (value: String, until: Date)?

    /// The current DPoP nonce, a new one once the last has lived `lifetime` seconds.
    func currentDPoPNonce(lifetime: TimeInterval) -> String {
        if let nonce = dpopNonce, nonce.until > now() { return nonce.value }
        let value = entropy.token(bytes: 16)
        dpopNonce = (value, now().addingTimeInterval(lifetime))
        return value
    }

    /// How many refresh requests the token endpoint answered, for tests that count them.
    private(set) var refreshRequests = 0

    func countRefreshRequest() { refreshRequests += 1 }

    func accessToken(_ token: String) -> (grant: Grant, expires: Date)? {
        guard let entry = accessTokens[token], entry.expires > now() else { return nil }
        return (entry.grant, entry.expires)
    }

    func grant(forAccessToken token: String) -> Grant? {
        guard let entry = accessTokens[token], entry.expires > now() else { return nil }
        return entry.grant
    }

    /// The grant of a single-use access token, which is revoked by this use (ID.me).
    func spendAccessToken(_ token: String) -> Grant? {
        guard let entry = accessTokens.removeValue(forKey: token), entry.expires > now() else { return nil }
        return entry.grant
    }
}
