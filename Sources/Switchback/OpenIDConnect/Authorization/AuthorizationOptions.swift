import Foundation

/// How the provider returns the authorization response.
public enum ResponseMode: String, Sendable, Codable, Equatable {
    case query
    case fragment
    case formPost = "form_post"
}

/// What the provider returns from the authorization endpoint.
public enum ResponseType: String, Sendable, Codable, Equatable {
    /// An authorization code, redeemed with the PKCE verifier: the default, and the only shape an app
    /// should receive itself.
    case code
    /// The legacy implicit shape (OpenID Connect Core §3.2): the access token and ID token themselves, in
    /// the fragment or by form_post, with `nonce` and `at_hash` required. Only for a backend that receives
    /// the response and turns it into a one-time code (the companion's bridge), never for an app's own
    /// redirect URI: the tokens travel in a URL.
    case idTokenToken = "id_token token"
}

/// The per-sign-in parameters of an authorization request.
public struct AuthorizationOptions: Sendable {
    /// `code` unless a provider offers nothing else.
    public var responseType: ResponseType
    public var responseMode: ResponseMode?
    /// The scopes of this request in place of ``ClientConfiguration/scopes`` (a preset's documented ones);
    /// `openid` is added when the identity is an ID token. A companion's routes ask for its own
    /// `provider.scopes` instead.
    public var scopes: [String]?
    public var acrValues: [String]
    public var uiLocales: [String]
    public var loginHint: String?
    public var prompt: [String]
    /// `max_age` in seconds; the ID token's `auth_time` is then required and checked.
    public var maxAge: Int?
    /// The `claims` request parameter (OpenID Connect Core §5.5), as a JSON object.
    public var claims: JSONValue?
    /// Provider-specific parameters (`app_callback_uri`, `idp_params`, …). They may not replace a
    /// parameter the core sets for security (`state`, `nonce`, `code_challenge`, `redirect_uri`, …).
    public var extraParameters: [(String, String)]

    public init(
        responseType: ResponseType = .code,
        responseMode: ResponseMode? = nil,
        scopes: [String]? = nil,
        acrValues: [String] = [],
        uiLocales: [String] = [],
        loginHint: String? = nil,
        prompt: [String] = [],
        maxAge: Int? = nil,
        claims: JSONValue? = nil,
        extraParameters: [(String, String)] = []
    ) {
        self.responseType = responseType
        self.responseMode = responseMode
        self.scopes = scopes
        self.acrValues = acrValues
        self.uiLocales = uiLocales
        self.loginHint = loginHint
        self.prompt = prompt
        self.maxAge = maxAge
        self.claims = claims
        self.extraParameters = extraParameters
    }

    /// Parameters the core owns; an extra parameter may not use these names.
    public static let reservedNames: Set<String> = [
        "response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge",
        "code_challenge_method", "response_mode", "request_uri", "request", "acr_values", "ui_locales",
        "login_hint", "prompt", "max_age", "claims", "client_secret", "client_assertion", "client_assertion_type",
        "dpop_jkt",
    ]
}
