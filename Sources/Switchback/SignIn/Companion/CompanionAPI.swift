public import Foundation
import Crypto

/// The backend companion's HTTP API, defined once: its paths and the JSON bodies its app-facing routes take
/// and give. ``CompanionClient`` sends these and the companion (`switchback-companion`) decodes the same
/// types, so the two cannot drift apart. Property names are Swift's; each type's coding keys are the wire's
/// snake_case names. Errors are ``OAuthErrorResponse`` bodies.
@_spi(SwitchbackInternals) public enum CompanionAPI {
    /// The routes' paths below the companion's base URL.
    public enum Path {
        public static let exchangeStart = "/exchange/start"
        public static let exchange = "/exchange"
        public static let permission = "/permission"
        public static let bridgeStart = "/bridge/start"
        public static let bridgeCallback = "/bridge/callback"
        public static let bridgeFragment = "/bridge/fragment"
        public static let bridgeRedeem = "/bridge/redeem"
        public static let handOff = "/handoff"
        public static let handOffRedeem = "/handoff/redeem"
        public static let completionStart = "/completion/start"
        public static let completion = "/complete"
        /// `GET /response`: the response page, whose button forwards the provider's answer to the app's universal link.
        public static let response = "/response"
        public static let completionStatus = "/completion/status"
        public static let session = "/session"
        public static let sessionLogout = "/session/logout"
        /// OpenID Connect Back-Channel Logout 1.0: the provider's `backchannel_logout_uri`.
        public static let backChannelLogout = "/logout/backchannel"
        public static let health = "/health"
        /// Readiness for a load balancer: the store answers and the provider's metadata is at hand; 503
        /// while the instance drains.
        public static let ready = "/ready"
        /// App Attest: a one-time challenge, then the key's attestation over it.
        public static let attestChallenge = "/attest/challenge"
        public static let attestRegister = "/attest/register"
        /// OpenID4VP: the app starts a presentation request, the wallet fetches the request object and posts
        /// its answer, the app redeems the one-time `response_code` the wallet returned with.
        public static let walletStart = "/wallet/start"
        public static let walletRequest = "/wallet/request/{id}"
        public static let walletResponse = "/wallet/response"
        public static let walletRedeem = "/wallet/redeem"
        public static let appleIdentityStart = "/wallet/apple/start"
        public static let appleIdentityVerify = "/wallet/apple/verify"
        /// RFC 7009 through the companion: a token the app holds, revoked with the client authentication
        /// only the companion has (a confidential client's, as UAE Pass and Norwegian BankID require).
        public static let revoke = "/revoke"
    }

    /// `path` below `base`, keeping a path prefix `base` has (`https://example.com/auth` → `…/auth/exchange`).
    public static func url(_ path: String, below base: URL) -> URL {
        base.appendingPathComponent(String(path.drop { $0 == "/" }))
    }

    /// `POST /exchange/start`: an authorization the companion prepares, whose response comes back to the
    /// app's `redirectURI` and is redeemed only with `binding`.
    public struct ExchangeStart: Codable, Sendable, Equatable {
        public var redirectURI: String
        /// A random secret of the app's (at least 128 bits) that never travels in a URL.
        public var binding: String
        public var acrValues: [String]?
        public var loginHint: String?
        /// Languages for the provider's pages (`ui_locales`).
        public var uiLocales: [String]?
        /// Extra authorization parameters; the companion forwards only those its configuration names.
        public var parameters: [String: String]?

        public init(
            redirectURI: String, binding: String, acrValues: [String]? = nil, loginHint: String? = nil, uiLocales: [String]? = nil,
            parameters: [String: String]? = nil
        ) {
            self.redirectURI = redirectURI
            self.binding = binding
            self.acrValues = acrValues
            self.loginHint = loginHint
            self.uiLocales = uiLocales
            self.parameters = parameters
        }

        enum CodingKeys: String, CodingKey {
            case redirectURI = "redirect_uri", binding, acrValues = "acr_values", loginHint = "login_hint", uiLocales = "ui_locales", parameters
        }
    }

    /// `POST /completion/start`: registers the app's flow ID and prepares an authorization whose response
    /// comes back to the companion.
    public struct CompletionStart: Codable, Sendable, Equatable {
        /// The app's secret for this sign-in (at least 128 bits); the result is asked for with it.
        public var flowID: String
        public var responseMode: ResponseMode?
        public var acrValues: [String]?
        public var loginHint: String?
        public var uiLocales: [String]?
        public var parameters: [String: String]?

        public init(
            flowID: String, responseMode: ResponseMode? = nil, acrValues: [String]? = nil, loginHint: String? = nil, uiLocales: [String]? = nil,
            parameters: [String: String]? = nil
        ) {
            self.flowID = flowID
            self.responseMode = responseMode
            self.acrValues = acrValues
            self.loginHint = loginHint
            self.uiLocales = uiLocales
            self.parameters = parameters
        }

        enum CodingKeys: String, CodingKey {
            case flowID = "flow_id", responseMode = "response_mode", acrValues = "acr_values", loginHint = "login_hint", uiLocales = "ui_locales"
            case parameters
        }
    }

    /// `POST /bridge/start`: a hybrid app's sign-in, returning to an allow-listed deep link.
    public struct BridgeStart: Codable, Sendable, Equatable {
        /// The app's deep-link scheme; it must be on the companion's allow-list.
        public var scheme: String
        /// The web app's return path (`/home`).
        public var path: String
        /// A secret of the web app's session; the deep link's code is redeemable only with it.
        public var binding: String
        public var responseMode: ResponseMode?
        public var acrValues: [String]?

        public init(scheme: String, path: String, binding: String, responseMode: ResponseMode? = nil, acrValues: [String]? = nil) {
            self.scheme = scheme
            self.path = path
            self.binding = binding
            self.responseMode = responseMode
            self.acrValues = acrValues
        }

        enum CodingKeys: String, CodingKey {
            case scheme, path, binding, responseMode = "response_mode", acrValues = "acr_values"
        }
    }

    /// The answer to each of the three starts: the URL to show, and for the exchange its `state`, for the
    /// completion the link its final page opens.
    public struct AuthorizationStarted: Codable, Sendable, Equatable {
        public var authorizationURL: String
        /// `POST /exchange/start`: the `state` the request carries.
        public var state: String?
        /// `POST /completion/start`: the app link the companion's final page opens.
        public var returnURL: String?
        /// Seconds the companion keeps the authorization.
        public var expiresIn: Int?

        public init(authorizationURL: String, state: String? = nil, returnURL: String? = nil, expiresIn: Int? = nil) {
            self.authorizationURL = authorizationURL
            self.state = state
            self.returnURL = returnURL
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case authorizationURL = "authorization_url", state, returnURL = "return_url", expiresIn = "expires_in"
        }
    }

    /// `POST /exchange`, in one of two shapes: the callback of an authorization the companion started, with
    /// its binding; or the code, verifier, redirect URI and nonce of one the app started and checked.
    public struct Exchange: Codable, Sendable, Equatable {
        public var callbackURL: String?
        public var binding: String?
        public var code: String?
        public var codeVerifier: String?
        public var redirectURI: String?
        public var nonce: String?

        /// The response to an authorization the companion started.
        public init(callbackURL: String, binding: String) {
            self.callbackURL = callbackURL
            self.binding = binding
        }

        /// The code of an authorization the app started.
        public init(code: String, codeVerifier: String, redirectURI: String, nonce: String) {
            self.code = code
            self.codeVerifier = codeVerifier
            self.redirectURI = redirectURI
            self.nonce = nonce
        }

        enum CodingKeys: String, CodingKey {
            case callbackURL = "callback_url", binding, code, codeVerifier = "code_verifier", redirectURI = "redirect_uri", nonce
        }
    }

    /// `POST /completion/status`: the long poll for a backend completion's result.
    public struct CompletionStatus: Codable, Sendable, Equatable {
        public var flowID: String
        /// The one-time value the final page's app link carried, once the app received it.
        public var result: String?
        /// Seconds to wait for a change (the companion caps it).
        public var wait: Double?

        public init(flowID: String, result: String? = nil, wait: Double? = nil) {
            self.flowID = flowID
            self.result = result
            self.wait = wait
        }

        enum CodingKeys: String, CodingKey {
            case flowID = "flow_id", result, wait
        }
    }

    /// What `POST /exchange`, `POST /bridge/redeem` and `POST /completion/status` answer: who signed in and
    /// a session or the provider's tokens; for the status route, where the sign-in stands.
    public struct SignInAnswer: Codable, Sendable, Equatable {
        /// Where a backend completion stands (`POST /completion/status` only).
        public struct Status: RawRepresentable, Codable, Sendable, Hashable {
            public let rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            /// The provider has not answered the companion yet.
            public static let pending = Status(rawValue: "pending")
            /// The provider answered; the result waits for the app link's one-time value.
            public static let awaitingReturn = Status(rawValue: "awaiting_return")
            public static let completed = Status(rawValue: "completed")
            public static let failed = Status(rawValue: "failed")
        }

        public var status: Status?
        /// With ``Status/failed``: the provider's error (`access_denied`) or `server_error`.
        public var error: String?
        public var subject: String?
        public var acr: String?
        /// A first-party session of the companion's.
        public var session: String?
        /// Seconds until the session, or the access token, expires.
        public var expiresIn: Int?
        public var accessToken: String?
        public var tokenType: String?
        public var idToken: String?
        public var refreshToken: String?

        public init(status: Status) {
            self.status = status
        }

        public init(status: Status? = nil, subject: String, acr: String?, session: String?, tokens: TokenResponse?, expiresIn: Int?) {
            self.status = status
            self.subject = subject
            self.acr = acr
            self.session = session
            self.expiresIn = expiresIn
            self.accessToken = tokens?.accessToken
            self.tokenType = tokens?.tokenType
            self.idToken = tokens?.idToken
            self.refreshToken = tokens?.refreshToken
        }

        /// The provider's tokens, when the answer carries an access token and its type (RFC 6749 §5.1 requires
        /// `token_type`; a missing one is not guessed).
        public var tokens: TokenResponse? {
            guard let accessToken, let tokenType, !tokenType.isEmpty else { return nil }
            return TokenResponse(accessToken: accessToken, tokenType: tokenType, expiresIn: expiresIn, refreshToken: refreshToken, idToken: idToken)
        }

        enum CodingKeys: String, CodingKey {
            case status, error, subject = "sub", acr, session, expiresIn = "expires_in", accessToken = "access_token", tokenType = "token_type"
            case idToken = "id_token", refreshToken = "refresh_token"
        }
    }

    /// `POST /bridge/redeem`: the deep link's one-time code, with the web app's binding.
    public struct BridgeRedeem: Codable, Sendable, Equatable {
        public var handoffotp: String
        public var binding: String

        public init(handoffotp: String, binding: String) {
            self.handoffotp = handoffotp
            self.binding = binding
        }
    }

    /// `POST /revoke`: one token the app holds, and what kind it is (`refresh_token` or `access_token`).
    public struct Revocation: Codable, Sendable, Equatable {
        public var token: String
        public var tokenTypeHint: String

        public init(token: String, tokenTypeHint: String) {
            self.token = token
            self.tokenTypeHint = tokenTypeHint
        }

        enum CodingKeys: String, CodingKey {
            case token
            case tokenTypeHint = "token_type_hint"
        }
    }

    /// `POST /permission`: an upfront permission to return to one app callback (Norwegian BankID), for the
    /// statement the app's backend registered.
    public struct PermissionRequest: Codable, Sendable, Equatable {
        public var appCallbackURI: String
        /// The one-time ID the companion gave the app's backend for the statement the user is to approve.
        public var statementID: String

        public init(appCallbackURI: String, statementID: String) {
            self.appCallbackURI = appCallbackURI
            self.statementID = statementID
        }

        enum CodingKeys: String, CodingKey {
            case appCallbackURI = "app_callback_uri"
            case statementID = "statement_id"
        }

        /// Only `app_callback_uri` and `statement_id`: the permission's type and statement are the backend's,
        /// and a body that names them is refused rather than half taken.
        public init(from decoder: any Decoder) throws {
            let names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            let known = [CodingKeys.appCallbackURI.rawValue, CodingKeys.statementID.rawValue]
            if let other = names.first(where: { !known.contains($0) }) {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(other.prefix(40)) is not a field of this request"))
            }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            appCallbackURI = try c.decode(String.self, forKey: .appCallbackURI)
            statementID = try c.decode(String.self, forKey: .statementID)
        }

        private struct AnyKey: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }

    /// The answer to `POST /permission` (201).
    public struct PermissionGranted: Codable, Sendable, Equatable {
        public var permissionToken: String
        /// The message BankID shows the user with the permission, for the app to show beside it.
        public var bindingMessage: String?

        public init(permissionToken: String, bindingMessage: String? = nil) {
            self.permissionToken = permissionToken
            self.bindingMessage = bindingMessage
        }

        enum CodingKeys: String, CodingKey {
            case permissionToken = "permission_token"
            case bindingMessage = "binding_message"
        }
    }

    /// `POST /handoff`, sent with the app's access token in `Authorization`.
    public struct HandOffRequest: Codable, Sendable, Equatable {
        /// The web app to open, on the companion's allow-list.
        public var goto: String?

        public init(goto: String?) { self.goto = goto }
    }

    /// The answer to `POST /handoff` (201).
    public struct HandOffIssued: Codable, Sendable, Equatable {
        public var handoffotp: String
        public var expiresIn: Int
        /// The companion's own redeem URL for `goto`, when the request named one.
        public var redeemURL: String?

        public init(handoffotp: String, expiresIn: Int, redeemURL: String?) {
            self.handoffotp = handoffotp
            self.expiresIn = expiresIn
            self.redeemURL = redeemURL
        }

        enum CodingKeys: String, CodingKey { case handoffotp, expiresIn = "expires_in", redeemURL = "redeem_url" }
    }
}

extension CompanionAPI {
    /// The header that carries an App Attest assertion on a start route: the key ID, a challenge from
    /// `POST /attest/challenge` and the assertion, each base64url, separated by spaces. The assertion is made
    /// over ``attestedClientData(challenge:method:path:body:)``.
    public static let attestationHeader = "Switchback-App-Attestation"

    /// The challenge field of an assertion on a request for a started sign-in's result (`POST /exchange`,
    /// `POST /completion/status`): no challenge, because such a request gives up nothing twice (the result
    /// is handed over once) and its body names the sign-in; the assertion's growing counter still refuses a
    /// replay.
    public static let unchallenged = "-"

    /// The header that carries a Google Play Integrity verdict (an Android app's classic request) on a start
    /// route: a challenge from `POST /attest/challenge` and the integrity token, separated by a space. The
    /// request's nonce is ``playIntegrityNonce(challenge:method:path:body:)``.
    public static let playIntegrityHeader = "Switchback-Play-Integrity"

    /// The nonce of a Play Integrity request for a start route: base64url (unpadded) of SHA-256 of
    /// ``attestedClientData(challenge:method:path:body:)``, 32 bytes as Google's 16…500 allows.
    public static func playIntegrityNonce(challenge: String, method: String, path: String, body: Data) -> String {
        Base64URL.encode(Data(SHA256.hash(data: attestedClientData(challenge: challenge, method: method, path: path, body: body))))
    }

    /// What an assertion on a start route signs: the challenge, the request line and the body, so that
    /// it is good for this one request only.
    public static func attestedClientData(challenge: String, method: String, path: String, body: Data) -> Data {
        Data("\(challenge)\n\(method) \(path)\n".utf8) + body
    }

    /// `POST /wallet/start`: a presentation request bound to the app's secret.
    public struct WalletStart: Codable, Sendable, Equatable {
        public var binding: String

        public init(binding: String) { self.binding = binding }
    }

    /// `POST /wallet/start`'s answer: the link that opens the wallet.
    public struct WalletStarted: Codable, Sendable, Equatable {
        public var walletURL: String
        /// The app link the wallet opens with the `response_code` (the companion's `wallet.appLink`).
        public var returnURL: String?
        public var expiresIn: Int

        public init(walletURL: String, returnURL: String?, expiresIn: Int) {
            self.walletURL = walletURL
            self.returnURL = returnURL
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case walletURL = "wallet_url"
            case returnURL = "return_url"
            case expiresIn = "expires_in"
        }
    }

    /// `POST /wallet/redeem`: the `response_code` the wallet returned with, and the secret the request started with.
    public struct WalletRedeem: Codable, Sendable, Equatable {
        public var responseCode: String
        public var binding: String

        public init(responseCode: String, binding: String) {
            self.responseCode = responseCode
            self.binding = binding
        }

        enum CodingKeys: String, CodingKey {
            case responseCode = "response_code"
            case binding
        }
    }

    /// `POST /wallet/redeem`'s answer: each credential's verified, disclosed claims by DCQL query `id`.
    public struct WalletPresented: Codable, Sendable, Equatable {
        public var credentials: [String: [[String: JSONValue]]]

        public init(credentials: [String: [[String: JSONValue]]]) { self.credentials = credentials }
    }

    /// `POST /wallet/apple/start`'s answer: what the app puts in its `PKIdentityRequest`, and the
    /// request's ID for the verify.
    public struct AppleIdentityStarted: Codable, Sendable, Equatable {
        public var requestID: String
        /// The request's nonce, base64url: 32 random bytes for `PKIdentityRequest.nonce`.
        public var nonce: String
        public var merchantIdentifier: String
        public var expiresIn: Int

        public init(requestID: String, nonce: String, merchantIdentifier: String, expiresIn: Int) {
            self.requestID = requestID
            self.nonce = nonce
            self.merchantIdentifier = merchantIdentifier
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case requestID = "request_id"
            case nonce
            case merchantIdentifier = "merchant_identifier"
            case expiresIn = "expires_in"
        }
    }

    /// `POST /wallet/apple/verify`: Wallet's `encryptedData` (base64url) for a started request, with the
    /// secret it was started with.
    public struct AppleIdentityVerify: Codable, Sendable, Equatable {
        public var requestID: String
        public var binding: String
        public var encryptedData: String

        public init(requestID: String, binding: String, encryptedData: String) {
            self.requestID = requestID
            self.binding = binding
            self.encryptedData = encryptedData
        }

        enum CodingKeys: String, CodingKey {
            case requestID = "request_id"
            case binding
            case encryptedData = "encrypted_data"
        }
    }

    /// `POST /attest/challenge`'s answer.
    public struct AttestationChallenge: Codable, Sendable, Equatable {
        public var challenge: String
        public var expiresIn: Int

        public init(challenge: String, expiresIn: Int) {
            self.challenge = challenge
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case challenge
            case expiresIn = "expires_in"
        }
    }

    /// `POST /attest/register`: a new key's attestation over SHA-256 of a challenge's UTF-8 bytes.
    public struct AttestationRegistration: Codable, Sendable, Equatable {
        /// The key ID `generateKey()` returned, base64url.
        public var keyID: String
        /// The attestation object, base64url.
        public var attestation: String
        public var challenge: String

        public init(keyID: String, attestation: String, challenge: String) {
            self.keyID = keyID
            self.attestation = attestation
            self.challenge = challenge
        }

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case attestation, challenge
        }
    }
}

/// A body whose description hides its secrets; its mirror shows only that description, so that `dump`, a
/// debugger's summary or `Mirror` do not show the stored fields either.
@_spi(SwitchbackInternals) public protocol RedactedBody: CustomStringConvertible, CustomReflectable {}

extension RedactedBody {
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}

extension CompanionAPI.ExchangeStart: RedactedBody {}
extension CompanionAPI.CompletionStart: RedactedBody {}
extension CompanionAPI.BridgeStart: RedactedBody {}
extension CompanionAPI.AuthorizationStarted: RedactedBody {}
extension CompanionAPI.Exchange: RedactedBody {}
extension CompanionAPI.CompletionStatus: RedactedBody {}
extension CompanionAPI.SignInAnswer: RedactedBody {}
extension CompanionAPI.BridgeRedeem: RedactedBody {}
extension CompanionAPI.PermissionGranted: RedactedBody {}
extension CompanionAPI.HandOffIssued: RedactedBody {}

// The bodies' descriptions show their shape, never a secret: bindings, flow IDs, codes, verifiers, nonces,
// sessions, tokens and one-time values are shown as present or absent (`Redaction.secret`), URLs without
// their query values. A body that reaches a log line or a test failure gives nothing away.

extension CompanionAPI.ExchangeStart: CustomStringConvertible {
    public var description: String {
        "ExchangeStart(redirectURI: \(redirectURI), binding: \(Redaction.secret(binding)), acrValues: \(acrValues ?? []), loginHint: \(Redaction.secret(loginHint)))"
    }
}

extension CompanionAPI.CompletionStart: CustomStringConvertible {
    public var description: String {
        "CompletionStart(flowID: \(Redaction.secret(flowID)), responseMode: \(responseMode?.rawValue ?? "nil"), acrValues: \(acrValues ?? []), loginHint: \(Redaction.secret(loginHint)))"
    }
}

extension CompanionAPI.BridgeStart: CustomStringConvertible {
    public var description: String {
        "BridgeStart(scheme: \(scheme), path: \(path), binding: \(Redaction.secret(binding)), responseMode: \(responseMode?.rawValue ?? "nil"))"
    }
}

extension CompanionAPI.AuthorizationStarted: CustomStringConvertible {
    public var description: String {
        let shown = [authorizationURL, returnURL].map { $0.flatMap(URL.init(string:)).map(Redaction.describe) ?? "nil" }
        return
            "AuthorizationStarted(authorizationURL: \(shown[0]), state: \(Redaction.secret(state)), returnURL: \(shown[1]), expiresIn: \(expiresIn.map(String.init) ?? "nil"))"
    }
}

extension CompanionAPI.Exchange: CustomStringConvertible {
    public var description: String {
        let secrets = [("binding", binding), ("code", code), ("codeVerifier", codeVerifier), ("nonce", nonce)]
        return
            "Exchange(callbackURL: \(callbackURL.flatMap(URL.init(string:)).map(Redaction.describe) ?? "nil"), redirectURI: \(redirectURI ?? "nil"), "
            + secrets.map { "\($0.0): \(Redaction.secret($0.1))" }.joined(separator: ", ") + ")"
    }
}

extension CompanionAPI.CompletionStatus: CustomStringConvertible {
    public var description: String {
        "CompletionStatus(flowID: \(Redaction.secret(flowID)), result: \(Redaction.secret(result)), wait: \(wait.map { "\($0)" } ?? "nil"))"
    }
}

extension CompanionAPI.SignInAnswer: CustomStringConvertible {
    public var description: String {
        let secrets = [("session", session), ("accessToken", accessToken), ("idToken", idToken), ("refreshToken", refreshToken)]
        return
            "SignInAnswer(status: \(status?.rawValue ?? "nil"), error: \(error.map { OAuthErrorResponse.plainCode($0) ?? "‹not a code›" } ?? "nil"), subject: \(subject ?? "nil"), acr: \(acr ?? "nil"), "
            + secrets.map { "\($0.0): \(Redaction.secret($0.1))" }.joined(separator: ", ")
            + ", tokenType: \(tokenType ?? "nil"), expiresIn: \(expiresIn.map(String.init) ?? "nil"))"
    }
}

extension CompanionAPI.BridgeRedeem: CustomStringConvertible {
    public var description: String { "BridgeRedeem(handoffotp: \(Redaction.secret(handoffotp)), binding: \(Redaction.secret(binding)))" }
}

extension CompanionAPI.PermissionGranted: CustomStringConvertible {
    public var description: String { "PermissionGranted(permissionToken: \(Redaction.secret(permissionToken)))" }
}

extension CompanionAPI.HandOffIssued: CustomStringConvertible {
    public var description: String {
        "HandOffIssued(handoffotp: \(Redaction.secret(handoffotp)), expiresIn: \(expiresIn), redeemURL: \(redeemURL.flatMap(URL.init(string:)).map(Redaction.describe) ?? "nil"))"
    }
}
