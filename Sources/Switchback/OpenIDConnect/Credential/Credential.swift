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
    /// Where the identity came from: a validated ID token, or (for providers that issue none, such as
    /// UAE Pass) the userinfo endpoint; see ``IdentitySource`` for what each proves.
    public var identitySource: IdentitySource
    /// The userinfo claims the identity was read from, when ``identitySource`` is ``IdentitySource/userInfo``.
    public var userInfoClaims: [String: JSONValue]?
    /// The DPoP key the access and refresh tokens are bound to (`token_type` `DPoP`): the sign-in's own,
    /// needed for every use of them. Stored with the credential, so only in protected storage.
    public var dpopKey: DPoPKey?
    /// The user agent the sign-in ran in, as ``SignInCoordinator`` records it, so that a sign-out shows the
    /// provider's end-session page in the same kind (and none after an ephemeral sign-in) without the app
    /// remembering; nil when unknown (signed in before it was recorded, or without the coordinator).
    public var userAgent: UserAgentStrategy?

    public init(
        issuer: String, clientID: String, accessToken: String, tokenType: String, refreshToken: String?,
        idToken: String?, idTokenClaims: IDTokenClaims?, expiresAt: Date?, scopes: [String],
        identitySource: IdentitySource = .idToken, userInfoClaims: [String: JSONValue]? = nil, dpopKey: DPoPKey? = nil,
        userAgent: UserAgentStrategy? = nil
    ) {
        self.dpopKey = dpopKey
        self.userAgent = userAgent
        self.identitySource = identitySource
        self.userInfoClaims = userInfoClaims
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

    /// The subject the ID token names, or the userinfo answer when the identity came from there.
    public var subject: String? {
        if let sub = idTokenClaims?.sub { return sub }
        if case .string(let sub)? = userInfoClaims?["sub"] { return sub }
        return nil
    }

    private enum CodingKeys: String, CodingKey {
        case issuer, clientID, accessToken, tokenType, refreshToken, idToken, idTokenClaims, expiresAt, scopes, identitySource, userInfoClaims
        case dpopKey, userAgent
    }

    /// Credentials stored before ``identitySource`` existed read as ID-token identities; a user agent this
    /// version does not know reads as unknown.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            issuer: try c.decode(String.self, forKey: .issuer), clientID: try c.decode(String.self, forKey: .clientID),
            accessToken: try c.decode(String.self, forKey: .accessToken), tokenType: try c.decode(String.self, forKey: .tokenType),
            refreshToken: try c.decodeIfPresent(String.self, forKey: .refreshToken), idToken: try c.decodeIfPresent(String.self, forKey: .idToken),
            idTokenClaims: try c.decodeIfPresent(IDTokenClaims.self, forKey: .idTokenClaims),
            expiresAt: try c.decodeIfPresent(Date.self, forKey: .expiresAt),
            scopes: try c.decode([String].self, forKey: .scopes),
            identitySource: try c.decodeIfPresent(IdentitySource.self, forKey: .identitySource) ?? .idToken,
            userInfoClaims: try c.decodeIfPresent([String: JSONValue].self, forKey: .userInfoClaims),
            dpopKey: try c.decodeIfPresent(DPoPKey.self, forKey: .dpopKey),
            userAgent: try? c.decodeIfPresent(UserAgentStrategy.self, forKey: .userAgent)
        )
    }

    /// True when the access token has expired at `date` or will within `leeway` seconds.
    public func isExpired(at date: Date, leeway: TimeInterval = 30) -> Bool {
        guard let expiresAt else { return false }
        return date.addingTimeInterval(leeway) >= expiresAt
    }
}

extension Credential {
    /// The authentication context: the ID token's `acr`, or the userinfo's when the identity came from there.
    public var acr: String? {
        if let acr = idTokenClaims?.acr { return acr }
        if case .string(let acr)? = userInfoClaims?["acr"] { return acr }
        return nil
    }
}

extension Credential: CustomStringConvertible {
    /// Never shows a token.
    public var description: String {
        "Credential(issuer: \(issuer), subject: \(subject ?? "?"), identity: \(identitySource), acr: \(acr ?? "none"), expiresAt: \(expiresAt.map { "\($0)" } ?? "unknown"), refreshable: \(refreshToken != nil))"
    }
}
