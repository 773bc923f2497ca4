public import Foundation

/// The provider's answer about an access token (RFC 7662 §2.2). Inactive tokens carry nothing else.
@_spi(SwitchbackInternals) public struct TokenIntrospection: Sendable, Equatable, Decodable {
    @_spi(SwitchbackInternals) public let active: Bool
    @_spi(SwitchbackInternals) public let subject: String?
    @_spi(SwitchbackInternals) public let clientID: String?
    @_spi(SwitchbackInternals) public let issuer: String?
    @_spi(SwitchbackInternals) public let scope: String?
    @_spi(SwitchbackInternals) public let expiresAt: Date?
    /// The token's audiences (`aud`, a string or an array), when the provider says.
    @_spi(SwitchbackInternals) public let audience: [String]?
    /// `token_type`: `Bearer`, or `DPoP` for a sender-constrained token.
    @_spi(SwitchbackInternals) public let tokenType: String?
    /// `cnf.jkt` (RFC 9449 §6.2): the thumbprint of the key the token is bound to.
    @_spi(SwitchbackInternals) public let confirmationThumbprint: String?
    /// `username` (RFC 7662 §2.2): a human-readable identifier of the resource owner, when the provider sends one.
    @_spi(SwitchbackInternals) public let username: String?
    /// `iat` (RFC 7662 §2.2): when the provider issued the token, on its clock.
    @_spi(SwitchbackInternals) public let issuedAt: Date?
    /// `sid`, when the provider names the sign-in session the token belongs to (OpenID Connect Back-Channel
    /// Logout 1.0 §2.1's identifier; not a member RFC 7662 registers, sent by providers that put it in their tokens).
    @_spi(SwitchbackInternals) public let sessionID: String?

    @_spi(SwitchbackInternals) public init(
        active: Bool, subject: String? = nil, clientID: String? = nil, issuer: String? = nil, scope: String? = nil, expiresAt: Date? = nil,
        audience: [String]? = nil, tokenType: String? = nil, confirmationThumbprint: String? = nil, username: String? = nil,
        issuedAt: Date? = nil, sessionID: String? = nil
    ) {
        self.issuedAt = issuedAt
        self.sessionID = sessionID
        self.username = username
        self.active = active
        self.subject = subject
        self.clientID = clientID
        self.issuer = issuer
        self.scope = scope
        self.expiresAt = expiresAt
        self.audience = audience
        self.tokenType = tokenType
        self.confirmationThumbprint = confirmationThumbprint
    }

    /// Whether the token may only be used with a proof of possession: typed `DPoP`, or bound by `cnf`.
    @_spi(SwitchbackInternals) public var isSenderConstrained: Bool {
        tokenType?.lowercased() == "dpop" || confirmationThumbprint != nil
    }

    private enum CodingKeys: String, CodingKey {
        case active, sub, client_id, iss, scope, exp, aud, token_type, cnf, username, iat, sid
    }

    private struct Confirmation: Decodable {
        let jkt: String?
    }

    @_spi(SwitchbackInternals) public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        active = try container.decode(Bool.self, forKey: .active)
        subject = try container.decodeIfPresent(String.self, forKey: .sub)
        clientID = try container.decodeIfPresent(String.self, forKey: .client_id)
        issuer = try container.decodeIfPresent(String.self, forKey: .iss)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        expiresAt = try container.decodeIfPresent(Double.self, forKey: .exp).map(Date.init(timeIntervalSince1970:))
        if let many = try? container.decodeIfPresent([String].self, forKey: .aud) {
            audience = many
        } else {
            audience = try container.decodeIfPresent(String.self, forKey: .aud).map { [$0] }
        }
        tokenType = try container.decodeIfPresent(String.self, forKey: .token_type)
        username = try? container.decodeIfPresent(String.self, forKey: .username)
        issuedAt = (try? container.decodeIfPresent(Double.self, forKey: .iat)).flatMap { $0 }.map(Date.init(timeIntervalSince1970:))
        sessionID = (try? container.decodeIfPresent(String.self, forKey: .sid)) ?? nil
        // A `cnf` of another confirmation method (x5t#S256 for mTLS) still marks the token as bound; it
        // cannot be proven here, so it is kept as an unmatchable thumbprint.
        if container.contains(.cnf) {
            let confirmation = try? container.decode(Confirmation.self, forKey: .cnf)
            confirmationThumbprint = confirmation?.jkt ?? ""
        } else {
            confirmationThumbprint = nil
        }
    }
}
