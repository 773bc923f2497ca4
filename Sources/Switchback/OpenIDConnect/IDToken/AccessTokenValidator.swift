public import Foundation

/// Validates a JWT access token (RFC 9068) with the provider's keys: `typ` `at+jwt`, an asymmetric
/// signature, the issuer, the audience this resource server expects, expiry and a subject. For a server
/// that accepts the app's access token (a session hand-off, an API).
@_spi(SwitchbackInternals) public struct AccessTokenValidator: Sendable {
    /// The claims a valid access token carries.
    @_spi(SwitchbackInternals) public struct Claims: Sendable, Equatable, Decodable {
        @_spi(SwitchbackInternals) public let sub: String
        @_spi(SwitchbackInternals) public let clientID: String?
        /// `azp`, which some providers send instead of (or beside) `client_id`.
        @_spi(SwitchbackInternals) public let authorizedParty: String?
        @_spi(SwitchbackInternals) public let scope: String?
        @_spi(SwitchbackInternals) public let exp: Double
        /// `cnf.jkt` (RFC 9449 §6.1): the thumbprint of the DPoP key the token is bound to. Any other
        /// `cnf` member (mTLS) is kept as an empty, unmatchable thumbprint: the token is still bound.
        @_spi(SwitchbackInternals) public let confirmationThumbprint: String?
        /// `preferred_username` (OpenID Connect Core §5.1), when the provider puts it in its access tokens.
        @_spi(SwitchbackInternals) public let preferredUsername: String?
        /// `iat` (RFC 9068 §2.2): when the provider issued the token, on its clock.
        @_spi(SwitchbackInternals) public let iat: Double?
        /// `sid`, when the provider names the sign-in session the token belongs to.
        @_spi(SwitchbackInternals) public let sid: String?

        private enum CodingKeys: String, CodingKey {
            case sub, client_id, azp, scope, exp, cnf, preferred_username, iat, sid
        }

        private struct Confirmation: Decodable {
            let jkt: String?
        }

        /// The claims of a payload read by ``JSONReader``, typed as ``init(from:)`` types them.
        init(_ members: JSONMembers) throws {
            guard let sub = try members.string("sub"), let exp = try members.number("exp") else { throw JSONMembers.Mismatch() }
            self.sub = sub
            self.exp = exp
            clientID = try members.string("client_id")
            authorizedParty = try members.string("azp")
            scope = try members.string("scope")
            if members.contains("cnf") {
                if case .object(let confirmation)? = members["cnf"], case .string(let jkt)? = confirmation["jkt"] {
                    confirmationThumbprint = jkt
                } else {
                    confirmationThumbprint = ""
                }
            } else {
                confirmationThumbprint = nil
            }
            preferredUsername = (try? members.string("preferred_username")) ?? nil
            iat = (try? members.number("iat")) ?? nil
            sid = (try? members.string("sid")) ?? nil
        }

        @_spi(SwitchbackInternals) public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            sub = try container.decode(String.self, forKey: .sub)
            clientID = try container.decodeIfPresent(String.self, forKey: .client_id)
            authorizedParty = try container.decodeIfPresent(String.self, forKey: .azp)
            scope = try container.decodeIfPresent(String.self, forKey: .scope)
            exp = try container.decode(Double.self, forKey: .exp)
            confirmationThumbprint = container.contains(.cnf) ? ((try? container.decode(Confirmation.self, forKey: .cnf))?.jkt ?? "") : nil
            preferredUsername = try? container.decodeIfPresent(String.self, forKey: .preferred_username)
            iat = (try? container.decodeIfPresent(Double.self, forKey: .iat)) ?? nil
            sid = (try? container.decodeIfPresent(String.self, forKey: .sid)) ?? nil
        }
    }

    /// The registered claims checked beside ``Claims``.
    private struct Registered {
        let iss: String?
        let aud: [String]?
        let nbf: Double?

        init(_ members: JSONMembers) throws {
            iss = try members.string("iss")
            aud = try members.stringOrStrings("aud")
            nbf = try members.number("nbf")
        }
    }

    @_spi(SwitchbackInternals) public let issuer: String
    @_spi(SwitchbackInternals) public let audience: String
    @_spi(SwitchbackInternals) public let allowedAlgorithms: Set<String>
    @_spi(SwitchbackInternals) public let clockSkew: TimeInterval
    private let keys: JWKSCache
    private let clock: any WallClock

    @_spi(SwitchbackInternals) public init(
        issuer: String, audience: String, keys: JWKSCache, allowedAlgorithms: Set<String> = SigningAlgorithms.idTokenDefaults,
        clockSkew: TimeInterval = 60,
        clock: any WallClock = SystemClock()
    ) {
        self.issuer = issuer
        self.audience = audience
        self.allowedAlgorithms = allowedAlgorithms.intersection(SigningAlgorithms.asymmetric)
        self.clockSkew = min(max(clockSkew, 0), 300)
        self.keys = keys
        self.clock = clock
    }

    /// The token's claims, or a typed error saying which check failed.
    @_spi(SwitchbackInternals) public func validate(_ token: String) async throws -> Claims {
        let jws = try CompactJWS(token, malformed: .idTokenMalformed)
        guard let typ = jws.header.typ?.lowercased(), typ == "at+jwt" || typ == "application/at+jwt" else {
            throw SwitchbackError(.idTokenMalformed, "the access token's typ is not at+jwt (RFC 9068 §2.1)")
        }
        guard allowedAlgorithms.contains(jws.header.alg) else {
            throw SwitchbackError(.unsupportedAlgorithm, "alg \"\(jws.header.alg.prefix(20))\" is not allowed for access tokens")
        }
        try await keys.verify(jws)
        // One read of the payload for both.
        guard let members = JSONReader.members(jws.payload), let registered = try? Registered(members),
            let claims = try? Claims(members)
        else {
            throw SwitchbackError(.idTokenMalformed, "the access token lacks sub or exp, or its claims have the wrong types")
        }
        guard registered.iss == issuer else { throw SwitchbackError(.idTokenIssuerInvalid, "the access token was issued by another issuer") }
        guard registered.aud?.contains(audience) == true else {
            throw SwitchbackError(.audienceInvalid, "the access token is not meant for this audience")
        }
        let now = clock.now().timeIntervalSince1970
        guard claims.exp > now - clockSkew else { throw SwitchbackError(.tokenExpired, "the access token has expired") }
        if let nbf = registered.nbf, nbf > now + clockSkew { throw SwitchbackError(.tokenNotYetValid, "the access token is not valid yet") }
        guard !claims.sub.isEmpty else { throw SwitchbackError(.subjectMissing, "the access token has an empty sub") }
        return claims
    }
}
