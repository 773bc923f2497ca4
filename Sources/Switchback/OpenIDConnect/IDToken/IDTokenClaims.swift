import Foundation

/// The registered claims of an ID token (OpenID Connect Core §2), as sent.
///
/// Every field is optional here so that a missing claim is reported by the validator with its own
/// error code instead of as a parse failure.
public struct IDTokenClaims: Sendable, Equatable, Codable {
    public var iss: String?
    public var sub: String?
    public var aud: [String]?
    public var exp: Double?
    public var iat: Double?
    public var nbf: Double?
    public var nonce: String?
    public var azp: String?
    public var authTime: Double?
    public var acr: String?
    public var amr: [String]?
    public var atHash: String?
    public var cHash: String?
    public var sid: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nbf, nonce, azp, acr, amr, sid
        case authTime = "auth_time"
        case atHash = "at_hash"
        case cHash = "c_hash"
    }

    public init(
        iss: String? = nil, sub: String? = nil, aud: [String]? = nil, exp: Double? = nil, iat: Double? = nil,
        nbf: Double? = nil, nonce: String? = nil, azp: String? = nil, authTime: Double? = nil, acr: String? = nil,
        amr: [String]? = nil, atHash: String? = nil, cHash: String? = nil, sid: String? = nil
    ) {
        self.iss = iss
        self.sub = sub
        self.aud = aud
        self.exp = exp
        self.iat = iat
        self.nbf = nbf
        self.nonce = nonce
        self.azp = azp
        self.authTime = authTime
        self.acr = acr
        self.amr = amr
        self.atHash = atHash
        self.cHash = cHash
        self.sid = sid
    }

    /// The claims of a payload read by ``JSONReader``, typed as ``init(from:)`` types them.
    init(_ members: JSONMembers) throws {
        self.init(
            iss: try members.string("iss"), sub: try members.string("sub"), aud: try members.stringOrStrings("aud"),
            exp: try members.number("exp"), iat: try members.number("iat"), nbf: try members.number("nbf"), nonce: try members.string("nonce"),
            azp: try members.string("azp"), authTime: try members.number("auth_time"), acr: try members.string("acr"),
            amr: try members.strings("amr"), atHash: try members.string("at_hash"), cHash: try members.string("c_hash"),
            sid: try members.string("sid"))
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decodeIfPresent(String.self, forKey: .iss)
        sub = try container.decodeIfPresent(String.self, forKey: .sub)
        if let single = try? container.decodeIfPresent(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decodeIfPresent([String].self, forKey: .aud)
        }
        exp = try container.decodeIfPresent(Double.self, forKey: .exp)
        iat = try container.decodeIfPresent(Double.self, forKey: .iat)
        nbf = try container.decodeIfPresent(Double.self, forKey: .nbf)
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        azp = try container.decodeIfPresent(String.self, forKey: .azp)
        authTime = try container.decodeIfPresent(Double.self, forKey: .authTime)
        acr = try container.decodeIfPresent(String.self, forKey: .acr)
        amr = try container.decodeIfPresent([String].self, forKey: .amr)
        atHash = try container.decodeIfPresent(String.self, forKey: .atHash)
        cHash = try container.decodeIfPresent(String.self, forKey: .cHash)
        sid = try container.decodeIfPresent(String.self, forKey: .sid)
    }
}

/// A validated ID token: its claims, its header's algorithm and key, and the raw JWT.
public struct IDToken: Sendable, Equatable {
    /// The signed compact JWT (for an encrypted ID token, the JWS it held); a bearer credential, never log it.
    public let rawValue: String
    public let algorithm: String
    public let keyID: String?
    public let claims: IDTokenClaims
    /// The decoded payload, kept so that ``allClaims`` is computed only when asked for.
    let payload: Data

    /// Every claim, including ones the core does not model.
    public var allClaims: [String: JSONValue] {
        (try? JSONDecoder().decode([String: JSONValue].self, from: payload)) ?? [:]
    }
}

extension IDToken: CustomStringConvertible {
    public var description: String {
        "IDToken(alg: \(algorithm), iss: \(claims.iss ?? "?"), sub: \(claims.sub ?? "?"), acr: \(claims.acr ?? "none"))"
    }
}
