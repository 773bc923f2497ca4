public import Foundation
import Crypto
import JWTKit

/// Validates ID tokens exactly as OpenID Connect Core §3.1.3.7 asks, on top of jwt-kit signatures.
///
/// There is no switch to skip a check: the audience, issuer, signature, expiry and (when one was sent)
/// nonce are always verified.
public struct IDTokenValidator: Sendable {
    /// What this particular token must match besides the client-wide rules.
    public struct Expectations: Sendable {
        /// The nonce sent in the authorization request; when set, the token must carry it.
        public var nonce: String?
        /// The `max_age` requested; `auth_time` is then required and must be recent enough.
        public var maxAge: Int?
        /// The access token issued with this ID token, to check `at_hash` against.
        public var accessToken: String?
        /// The authorization code issued with this ID token, to check `c_hash` against.
        public var code: String?
        /// Requires `at_hash` (implicit and hybrid flows).
        public var requireAccessTokenHash: Bool
        /// Requires `c_hash` (hybrid flow).
        public var requireCodeHash: Bool

        public init(
            nonce: String?, maxAge: Int? = nil, accessToken: String? = nil, code: String? = nil,
            requireAccessTokenHash: Bool = false, requireCodeHash: Bool = false
        ) {
            self.nonce = nonce
            self.maxAge = maxAge
            self.accessToken = accessToken
            self.code = code
            self.requireAccessTokenHash = requireAccessTokenHash
            self.requireCodeHash = requireCodeHash
        }
    }

    public let issuer: String
    public let clientID: String
    public let allowedAlgorithms: Set<String>
    public let clockSkew: TimeInterval
    public let requiredACRValues: Set<String>
    /// The client's keys for encrypted ID tokens; when any is set, a plain (unencrypted) ID token is refused.
    public let decryptionKeys: [DecryptionKey]
    private let keys: JWKSCache
    @_spi(SwitchbackInternals) public let clock: any WallClock

    /// Creates a validator. `allowedAlgorithms` is filtered to asymmetric algorithms: `none` and
    /// HMAC can never be allowed.
    public init(
        issuer: String,
        clientID: String,
        allowedAlgorithms: Set<String>,
        clockSkew: TimeInterval = 60,
        requiredACRValues: Set<String> = [],
        decryptionKeys: [DecryptionKey] = [],
        keys: JWKSCache,
        clock: any WallClock
    ) {
        self.decryptionKeys = decryptionKeys
        self.issuer = issuer
        self.clientID = clientID
        self.allowedAlgorithms = allowedAlgorithms.intersection(SigningAlgorithms.asymmetric)
        self.clockSkew = min(max(clockSkew, 0), 300)
        self.requiredACRValues = requiredACRValues
        self.keys = keys
        self.clock = clock
    }

    /// Decrypts the token when it is a JWE, then verifies the signature and every claim of the signed
    /// token inside, returning it validated (its ``IDToken/rawValue`` is the signed token).
    public func validate(_ token: String, expectations: Expectations) async throws -> IDToken {
        let jws = try signedJWS(token, malformed: .idTokenMalformed, requireEncryption: !decryptionKeys.isEmpty)
        try Self.checkExplicitType(jws.header.typ)
        try await verifySignature(jws, allowed: allowedAlgorithms)
        let claims: IDTokenClaims
        do {
            guard let members = JSONReader.members(jws.payload) else { throw JSONMembers.Mismatch() }
            claims = try IDTokenClaims(members)
        } catch {
            throw SwitchbackError(.idTokenMalformed, "the ID token's claims are not a JSON object of the registered types")
        }
        try checkClaims(claims, algorithm: jws.header.alg, expectations: expectations)
        return IDToken(rawValue: jws.compact, algorithm: jws.header.alg, keyID: jws.header.kid, claims: claims, payload: jws.payload)
    }

    /// Verifies a JWS signature with the provider's keys and returns its payload (used for signed userinfo).
    func verifiedPayload(of token: String, allowed: Set<String>, malformed: SwitchbackError.Code) async throws -> Data {
        let jws = try signedJWS(token, malformed: malformed, requireEncryption: false)
        try await verifySignature(jws, allowed: allowed.intersection(SigningAlgorithms.asymmetric))
        return jws.payload
    }

    /// The signed token, split: `token` itself when it is a JWS, the JWS inside it when it is a JWE (OpenID
    /// Connect Core §10.2: signed, then encrypted). A plain token when `requireEncryption`, and an
    /// encrypted one for a client that holds no decryption key, are refused. A plain token is read once.
    @_spi(SwitchbackInternals) public func signedJWS(_ token: String, malformed: SwitchbackError.Code, requireEncryption: Bool) throws -> CompactJWS {
        if !requireEncryption, let plain = try CompactJWS.unlessEncrypted(token, malformed: malformed) { return plain }
        return try CompactJWS(signedToken(token, malformed: malformed, requireEncryption: requireEncryption), malformed: malformed)
    }

    /// The signed token's text, decrypted when it is a JWE; see ``signedJWS(_:malformed:requireEncryption:)``.
    func signedToken(_ token: String, malformed: SwitchbackError.Code, requireEncryption: Bool) throws -> String {
        guard CompactJWE.isEncrypted(token) else {
            guard !requireEncryption else {
                throw SwitchbackError(.idTokenNotEncrypted, "the client expects encrypted tokens and the provider sent a plain one")
            }
            return token
        }
        guard !decryptionKeys.isEmpty else {
            throw SwitchbackError(
                .idTokenDecryptionFailed,
                "the provider sent an encrypted token and the client has no decryption key (ClientConfiguration.decryptionKeys)")
        }
        let (header, plaintext) = try CompactJWE.decrypt(token, keys: decryptionKeys)
        if let cty = header["cty"], cty != .string("JWT"), cty != .string("jwt") {
            throw SwitchbackError(malformed, "the encrypted token's content type is not a nested JWT")
        }
        let inner = String(decoding: plaintext, as: UTF8.self)
        guard !CompactJWE.isEncrypted(inner) else {
            throw SwitchbackError(malformed, "the encrypted token holds another encrypted token, not a signed one")
        }
        return inner
    }

    /// RFC 8725 §3.11: a JWT typed for another profile (`at+jwt`, `logout+jwt`, `dpop+jwt`, any
    /// `…+jwt`, with or without `application/`) is never accepted as an ID token. OpenID Connect sets no
    /// `typ` for ID tokens; absent or `JWT` is accepted.
    static func checkExplicitType(_ typ: String?) throws {
        // Absent or `JWT`, as providers write it, without lowering the case first.
        guard let typ, typ != "JWT" else { return }
        let lowered = typ.lowercased()
        let mediaType = lowered.hasPrefix("application/") ? String(lowered.dropFirst("application/".count)) : lowered
        guard mediaType == "jwt" else {
            throw SwitchbackError(
                .idTokenMalformed, "the token's typ \"\(typ.prefix(40))\" names another kind of JWT, not an ID token (RFC 8725 §3.11)")
        }
    }

    @_spi(SwitchbackInternals) public func verifySignature(_ jws: CompactJWS, allowed: Set<String>) async throws {
        let alg = jws.header.alg
        guard allowed.contains(alg) else {
            throw SwitchbackError(
                .unsupportedAlgorithm, "alg \"\(alg.prefix(20))\" is not allowed (allowed: \(allowed.sorted().joined(separator: ", ")))")
        }
        try await keys.verify(jws)
    }

    private func checkClaims(_ claims: IDTokenClaims, algorithm: String, expectations: Expectations) throws {
        let now = clock.now().timeIntervalSince1970
        guard let iss = claims.iss, iss == issuer else {
            throw SwitchbackError(.idTokenIssuerInvalid, "the ID token's iss \"\(claims.iss?.prefix(200) ?? "missing")\" is not \"\(issuer)\"")
        }
        guard let audience = claims.aud, audience.contains(clientID) else {
            throw SwitchbackError(.audienceInvalid, claims.aud == nil ? "the ID token has no aud" : "the ID token's aud does not contain this client")
        }
        if audience.count > 1, claims.azp == nil {
            throw SwitchbackError(.authorizedPartyInvalid, "the ID token has several audiences but no azp")
        }
        if let azp = claims.azp, azp != clientID {
            throw SwitchbackError(.authorizedPartyInvalid, "the ID token's azp names another client")
        }
        guard let sub = claims.sub, !sub.isEmpty else {
            throw SwitchbackError(.subjectMissing, "the ID token has no sub")
        }
        guard let exp = claims.exp, now < exp + clockSkew else {
            throw SwitchbackError(.tokenExpired, claims.exp == nil ? "the ID token has no exp" : "the ID token expired at \(Int(claims.exp!))")
        }
        guard let iat = claims.iat, iat <= now + clockSkew else {
            throw SwitchbackError(.issuedAtInvalid, claims.iat == nil ? "the ID token has no iat" : "the ID token's iat is in the future")
        }
        if let nbf = claims.nbf, nbf > now + clockSkew {
            throw SwitchbackError(.tokenNotYetValid, "the ID token is not valid before \(Int(nbf))")
        }
        if let expected = expectations.nonce {
            guard let nonce = claims.nonce, ConstantTime.equals(nonce, expected) else {
                throw SwitchbackError(.nonceMismatch, claims.nonce == nil ? "the ID token has no nonce" : "the ID token's nonce is not the one sent")
            }
        }
        try checkHash(
            claims.atHash, of: expectations.accessToken, required: expectations.requireAccessTokenHash, algorithm: algorithm,
            code: .accessTokenHashInvalid, name: "at_hash")
        try checkHash(
            claims.cHash, of: expectations.code, required: expectations.requireCodeHash, algorithm: algorithm, code: .codeHashInvalid, name: "c_hash")
        if let maxAge = expectations.maxAge {
            guard let authTime = claims.authTime else {
                throw SwitchbackError(.authTimeInvalid, "max_age was requested but the ID token has no auth_time")
            }
            guard authTime + Double(maxAge) + clockSkew >= now else {
                throw SwitchbackError(.authTimeInvalid, "the user authenticated more than max_age (\(maxAge) s) ago")
            }
        }
        if !requiredACRValues.isEmpty {
            guard let acr = claims.acr, requiredACRValues.contains(acr) else {
                throw SwitchbackError(
                    .acrNotSatisfied,
                    "the ID token's acr \"\(claims.acr?.prefix(120) ?? "missing")\" is not one of \(requiredACRValues.sorted().joined(separator: ", "))"
                )
            }
        }
    }

    private func checkHash(
        _ claimed: String?, of value: String?, required: Bool, algorithm: String, code: SwitchbackError.Code, name: String
    ) throws {
        guard let claimed else {
            if required { throw SwitchbackError(code, "the ID token has no \(name)") }
            return
        }
        guard let value else { return }
        guard let expected = Self.leftHalfHash(of: value, algorithm: algorithm), ConstantTime.equals(claimed, expected) else {
            throw SwitchbackError(code, "the ID token's \(name) does not match")
        }
    }

    /// The OpenID Connect `at_hash`/`c_hash` value: base64url of the left half of the hash the JWS
    /// algorithm uses (SHA-512 for EdDSA with Ed25519).
    static func leftHalfHash(of value: String, algorithm: String) -> String? {
        let data = Data(value.utf8)
        let digest: [UInt8]
        switch algorithm {
        case "RS256", "PS256", "ES256": digest = Array(SHA256.hash(data: data))
        case "RS384", "PS384", "ES384": digest = Array(SHA384.hash(data: data))
        case "RS512", "PS512", "ES512", "EdDSA": digest = Array(SHA512.hash(data: data))
        default: return nil
        }
        return Base64URL.encode(digest.prefix(digest.count / 2))
    }

    /// Checks that a refreshed ID token still speaks of the same sign-in (OpenID Connect Core §12.2).
    public static func checkRefreshed(_ refreshed: IDTokenClaims, previous: IDTokenClaims) throws {
        guard refreshed.iss == previous.iss, refreshed.sub == previous.sub, Set(refreshed.aud ?? []) == Set(previous.aud ?? []) else {
            throw SwitchbackError(.refreshedIDTokenMismatch, "the refreshed ID token changed iss, sub or aud")
        }
        if refreshed.azp != nil, previous.azp == nil {
            throw SwitchbackError(.refreshedIDTokenMismatch, "the refreshed ID token newly carries azp")
        }
        if let authTime = previous.authTime, let newAuthTime = refreshed.authTime, newAuthTime != authTime {
            throw SwitchbackError(.refreshedIDTokenMismatch, "the refreshed ID token changed auth_time")
        }
    }
}
