public import Foundation

/// What a completed sign-in yields: the tokens, when the access token expires, and the validated identity.
public struct Credential: Sendable, Codable, Equatable {
    public var issuer: String
    public var clientID: String
    public var accessToken: String
    public var tokenType: String
    public var refreshToken: String?
    public var idToken: String?
    public var idTokenClaims: IDTokenClaims?
    public var expiresAt: Date?
    public var scopes: [String]

    public init(
        issuer: String, clientID: String, accessToken: String, tokenType: String, refreshToken: String?,
        idToken: String?, idTokenClaims: IDTokenClaims?, expiresAt: Date?, scopes: [String]
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.idTokenClaims = idTokenClaims
        self.expiresAt = expiresAt
        self.scopes = scopes
    }

    /// The subject the ID token names.
    public var subject: String? { idTokenClaims?.sub }

    /// True when the access token has expired at `date` or will within `leeway` seconds.
    public func isExpired(at date: Date, leeway: TimeInterval = 30) -> Bool {
        guard let expiresAt else { return false }
        return date.addingTimeInterval(leeway) >= expiresAt
    }
}

extension Credential: CustomStringConvertible {
    /// Never shows a token.
    public var description: String {
        "Credential(issuer: \(issuer), subject: \(subject ?? "?"), acr: \(idTokenClaims?.acr ?? "none"), expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown"), refreshable: \(refreshToken != nil))"
    }
}
