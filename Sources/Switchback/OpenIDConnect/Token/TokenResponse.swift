import Foundation

/// A successful token endpoint response (RFC 6749 §5.1).
public struct TokenResponse: Sendable, Equatable, Decodable {
    public let accessToken: String
    public let tokenType: String
    public let expiresIn: Int?
    public let refreshToken: String?
    public let idToken: String?
    public let scope: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case scope
    }

    public init(
        accessToken: String, tokenType: String, expiresIn: Int? = nil, refreshToken: String? = nil, idToken: String? = nil, scope: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        tokenType = try container.decode(String.self, forKey: .tokenType)
        // Some providers send expires_in as a string; accept both.
        if let seconds = try? container.decodeIfPresent(Int.self, forKey: .expiresIn) {
            expiresIn = seconds
        } else {
            expiresIn = try container.decodeIfPresent(String.self, forKey: .expiresIn).flatMap { Int($0) }
        }
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
    }
}

extension TokenResponse: CustomStringConvertible {
    /// Which tokens are present, never their values.
    public var description: String {
        "TokenResponse(tokenType: \(tokenType), expiresIn: \(expiresIn.map(String.init) ?? "nil"), refreshToken: \(refreshToken != nil), idToken: \(idToken != nil))"
    }
}
