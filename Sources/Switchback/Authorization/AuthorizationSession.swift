public import Foundation

/// What must be remembered between sending the user to the provider and receiving the callback.
///
/// It holds the PKCE verifier: persist it only in protected storage (the flow journal does), and never log it.
public struct AuthorizationSession: Sendable, Codable, Equatable {
    public let issuer: String
    public let clientID: String
    public let redirectURI: URL
    public let state: String
    public let nonce: String
    public let pkce: PKCE
    public let responseMode: ResponseMode
    public let maxAge: Int?
    /// The PAR `request_uri`, when the request was pushed.
    public let requestURI: String?
    /// The URL to open in the user agent.
    public let authorizationURL: URL
    public let createdAt: Date

    public init(
        issuer: String,
        clientID: String,
        redirectURI: URL,
        state: String,
        nonce: String,
        pkce: PKCE,
        responseMode: ResponseMode,
        maxAge: Int?,
        requestURI: String?,
        authorizationURL: URL,
        createdAt: Date
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.pkce = pkce
        self.responseMode = responseMode
        self.maxAge = maxAge
        self.requestURI = requestURI
        self.authorizationURL = authorizationURL
        self.createdAt = createdAt
    }
}

extension AuthorizationSession: CustomStringConvertible {
    /// No state, nonce or verifier is shown.
    public var description: String {
        "AuthorizationSession(issuer: \(issuer), clientID: \(clientID), redirectURI: \(redirectURI), responseMode: \(responseMode.rawValue), pushed: \(requestURI != nil))"
    }
}
