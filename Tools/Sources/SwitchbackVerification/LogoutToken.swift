public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// A verified Back-Channel Logout token (OpenID Connect Back-Channel Logout 1.0 §2.4): the provider says
/// that the user `subject`, or the session `sessionID`, signed out, and every session of it at this relying
/// party ends (§2.7). A server receives it with ``IDTokenValidator/validateLogoutToken(_:)``; the replay of
/// its ``jti`` is the receiver's to refuse (§2.6 step 8), for as long as ``IDTokenValidator/logoutTokenLifetime``.
public struct LogoutToken: Sendable, Equatable {
    public let issuer: String
    /// `sub`: every session of this user at this issuer ends. At least one of it and ``sessionID`` is set.
    public let subject: String?
    /// `sid`: the provider's session whose sign-ins end (the `sid` of their ID tokens).
    public let sessionID: String?
    /// `jti`, unique per token.
    public let jti: String
    public let issuedAt: Date

    /// The `events` member that makes a JWT a logout token (§2.4).
    public static let event = "http://schemas.openid.net/event/backchannel-logout"
}

extension IDTokenValidator {
    /// How old a logout token may be: a provider sends it when the user signs out, not later (§4 asks for
    /// expiry times of two minutes at most). A token without `exp` (the 2022 text has none; glewlwyd sends
    /// none) is taken only this long after its `iat`, so a receiver keeps each `jti` this long.
    public static let logoutTokenLifetime: TimeInterval = 300

    /// Validates a Back-Channel Logout token as §2.6 lists: decrypted when the client uses encrypted ID
    /// tokens, signed by the provider with an allowed algorithm (never `none` or HMAC), typed `logout+jwt`
    /// or `JWT` or untyped, issued by this issuer to this client, recent (`iat`, and `exp` when present),
    /// with `jti`, the back-channel-logout event, `sub` or `sid`, and no `nonce` (so an ID token is never
    /// taken for one). Throws ``SwitchbackError/Code/logoutTokenInvalid`` (or the signature's own code).
    public func validateLogoutToken(_ token: String) async throws -> LogoutToken {
        let payload: Data
        do {
            let jws = try signedJWS(token, malformed: .logoutTokenInvalid, requireEncryption: !decryptionKeys.isEmpty)
            if let typ = jws.header.typ?.lowercased(), !["jwt", "logout+jwt", "application/logout+jwt", "application/jwt"].contains(typ) {
                throw SwitchbackError(.logoutTokenInvalid, "the token's typ \"\(typ.prefix(40))\" names another kind of JWT (RFC 8725 §3.11)")
            }
            try await verifySignature(jws, allowed: allowedAlgorithms)
            payload = jws.payload
        } catch let error as SwitchbackError where error.code != .logoutTokenInvalid {
            throw SwitchbackError(
                .logoutTokenInvalid, "the logout token's signature or encryption is not the provider's: \(error.message)", underlying: error)
        }
        guard case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payload) else {
            throw SwitchbackError(.logoutTokenInvalid, "the logout token's claims are not a JSON object")
        }
        func refuse(_ message: String) -> SwitchbackError { SwitchbackError(.logoutTokenInvalid, "the logout token " + message) }
        guard claims["iss"] == .string(issuer) else { throw refuse("was not issued by \(issuer)") }
        let audience: [String]
        switch claims["aud"] {
        case .string(let single)?: audience = [single]
        case .array(let values)?: audience = values.compactMap { if case .string(let value) = $0 { value } else { nil } }
        default: audience = []
        }
        guard audience.contains(clientID) else { throw refuse("is not addressed to this client") }
        // As for ID tokens here: with several audiences the token must name this client as its party.
        if audience.count > 1, claims["azp"] != .string(clientID) { throw refuse("has several audiences and does not name this client as azp") }
        let now = clock.now().timeIntervalSince1970
        guard case .number(let iat)? = claims["iat"], iat <= now + clockSkew, now - iat <= Self.logoutTokenLifetime + clockSkew else {
            throw refuse("has no iat, or one not within the last \(Int(Self.logoutTokenLifetime)) seconds")
        }
        switch claims["exp"] {
        case nil: break
        case .number(let exp)? where exp + clockSkew > now: break
        default: throw refuse("has expired")
        }
        guard case .string(let jti)? = claims["jti"], !jti.isEmpty, jti.utf8.count <= 256 else { throw refuse("has no jti") }
        guard case .object(let events)? = claims["events"], case .object? = events[LogoutToken.event] else {
            throw refuse("does not carry the back-channel-logout event")
        }
        guard claims["nonce"] == nil else { throw refuse("carries a nonce, which a logout token never does") }
        var subject: String?
        var sessionID: String?
        if let sub = claims["sub"] {
            guard case .string(let value) = sub, !value.isEmpty else { throw refuse("has a sub that is not a string") }
            subject = value
        }
        if let sid = claims["sid"] {
            guard case .string(let value) = sid, !value.isEmpty else { throw refuse("has a sid that is not a string") }
            sessionID = value
        }
        guard subject != nil || sessionID != nil else { throw refuse("names neither a sub nor a sid") }
        return LogoutToken(issuer: issuer, subject: subject, sessionID: sessionID, jti: jti, issuedAt: Date(timeIntervalSince1970: iat))
    }
}

extension OIDCClient {
    /// Validates a Back-Channel Logout token from this client's provider (``IDTokenValidator/validateLogoutToken(_:)``).
    public func validateLogoutToken(_ token: String) async throws -> LogoutToken {
        try await idTokenValidator().validateLogoutToken(token)
    }
}
