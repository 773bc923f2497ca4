public import Foundation

/// The provider's answer about an access token (RFC 7662 §2.2). Inactive tokens carry nothing else.
public struct TokenIntrospection: Sendable, Equatable, Decodable {
    public let active: Bool
    public let subject: String?
    public let clientID: String?
    public let issuer: String?
    public let scope: String?
    public let expiresAt: Date?

    public init(active: Bool, subject: String? = nil, clientID: String? = nil, issuer: String? = nil, scope: String? = nil, expiresAt: Date? = nil) {
        self.active = active
        self.subject = subject
        self.clientID = clientID
        self.issuer = issuer
        self.scope = scope
        self.expiresAt = expiresAt
    }

    private enum CodingKeys: String, CodingKey {
        case active, sub, client_id, iss, scope, exp
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        active = try container.decode(Bool.self, forKey: .active)
        subject = try container.decodeIfPresent(String.self, forKey: .sub)
        clientID = try container.decodeIfPresent(String.self, forKey: .client_id)
        issuer = try container.decodeIfPresent(String.self, forKey: .iss)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        expiresAt = try container.decodeIfPresent(Double.self, forKey: .exp).map(Date.init(timeIntervalSince1970:))
    }
}
