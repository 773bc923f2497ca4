import Foundation

// The sign-in routes' bodies: exchange, completion, bridge, and revocation.
extension CompanionAPI {
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
            case redirectURI = "redirect_uri"
            case binding
            case acrValues = "acr_values"
            case loginHint = "login_hint"
            case uiLocales = "ui_locales"
            case parameters
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
            case flowID = "flow_id"
            case responseMode = "response_mode"
            case acrValues = "acr_values"
            case loginHint = "login_hint"
            case uiLocales = "ui_locales"
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
            case scheme, path, binding
            case responseMode = "response_mode"
            case acrValues = "acr_values"
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
            case authorizationURL = "authorization_url"
            case state
            case returnURL = "return_url"
            case expiresIn = "expires_in"
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
            case callbackURL = "callback_url"
            case binding, code
            case codeVerifier = "code_verifier"
            case redirectURI = "redirect_uri"
            case nonce
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
            case flowID = "flow_id"
            case result, wait
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
            case status, error
            case subject = "sub"
            case acr, session
            case expiresIn = "expires_in"
            case accessToken = "access_token"
            case tokenType = "token_type"
            case idToken = "id_token"
            case refreshToken = "refresh_token"
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
}
