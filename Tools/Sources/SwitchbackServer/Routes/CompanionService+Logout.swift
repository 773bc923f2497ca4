import Foundation
import HTTPTypes
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

// OpenID Connect Back-Channel Logout 1.0 (errata set 1): the provider posts a signed logout token when the
// user signs out there; the sessions this companion made for that user, or for that provider session, end.
extension CompanionService {
    /// `POST /logout/backchannel` (§2.5): a form with one `logout_token`. 200 when it was valid, whether or
    /// not a session of it existed (§2.7); 400 with an OAuth error for anything else (§2.8), `no-store`
    /// either way. Anyone may call it, so it does nothing for a token the provider did not sign, and a
    /// valid token works once (its `jti` is kept while it would be taken). Not rate-limited: a provider
    /// signing many users out at once sends from one address.
    func backChannelLogout(_ request: Request) async throws -> Response {
        let provider = try requireProvider()
        let answer: Response
        do {
            let fields = try await form(from: request).fields
            guard let token = fields["logout_token"], !token.isEmpty else {
                throw CompanionError(.invalidRequest, "the body has no logout_token")
            }
            let logout: LogoutToken
            do {
                logout = try await provider.anyClient().validateLogoutToken(token)
            } catch let error as SwitchbackError where error.code == .logoutTokenInvalid {
                throw CompanionError(.invalidRequest, error.message)
            }
            let now = clock.now()
            let jti = Secrets.digest(logout.issuer + "\u{0}" + logout.jti)
            do {
                // Kept past the longest a token is taken (its lifetime and the largest clock skew), with a margin.
                try await store.insert(
                    .logoutTokenID, digest: jti, value: Data([1]),
                    expiresAt: logout.issuedAt.addingTimeInterval(IDTokenValidator.logoutTokenLifetime + 900))
            } catch let error as SwitchbackError where error.code == .storeFailed {
                // A store that failed is not a replay: only a jti that is there is one.
                guard try await store.read(.logoutTokenID, digest: jti, now: now) != nil else { throw error }
                throw CompanionError(.invalidRequest, "this logout token was already used")
            }
            do {
                if let subject = logout.subject { try await markLoggedOut("sub", logout.issuer, subject, at: logout.issuedAt) }
                if let sessionID = logout.sessionID { try await markLoggedOut("sid", logout.issuer, sessionID, at: logout.issuedAt) }
            } catch {
                // The provider may send it again (§2.5): it must not then be taken for a replay.
                _ = try? await store.take(.logoutTokenID, digest: jti, now: now)
                throw error
            }
            metrics.record(.backChannelLogout)
            logger.info("back-channel logout", metadata: ["by": "\(logout.subject != nil ? "sub" : "")\(logout.sessionID != nil ? "+sid" : "")"])
            answer = Response(status: .ok, headers: Replies.noStore)
        } catch let error as CompanionError {
            logger.notice("back-channel logout refused", metadata: ["reason": "\(Self.printable(error.message.prefix(120)))"])
            var refused = error.json
            for field in Replies.noStore { refused.headers[field.name] = field.value }
            answer = refused
        }
        return answer
    }

    /// Records that `name` (`sub` or `sid`) `value` at `issuer` signed out at `time` (the logout token's
    /// `iat`, the provider's clock): a `sub`'s sessions of sign-ins before then end when next used, a `sid`'s
    /// all of them (a provider session is never reused). Kept as long as a session lives; never moved back.
    private func markLoggedOut(_ name: String, _ issuer: String, _ value: String, at time: Date) async throws {
        let now = clock.now()
        let digest = Self.logoutDigest(name, issuer, value)
        let expiresAt = now.addingTimeInterval(configuration.session.lifetime + 900)
        var latest = time
        if let existing = try await store.read(.loggedOut, digest: digest, now: now),
            let seconds = TimeInterval(String(decoding: existing, as: UTF8.self))
        {
            latest = max(latest, Date(timeIntervalSince1970: seconds))
        }
        let mark = Data(String(latest.timeIntervalSince1970).utf8)
        if try await store.replace(.loggedOut, digest: digest, value: mark, expiresAt: expiresAt, now: now) { return }
        do {
            try await store.insert(.loggedOut, digest: digest, value: mark, expiresAt: expiresAt)
        } catch let error as SwitchbackError where error.code == .storeFailed {
            // Another instance wrote one meanwhile, or an expired one is not purged yet: take it, write ours.
            _ = try await store.take(.loggedOut, digest: digest, now: now)
            try await store.insert(.loggedOut, digest: digest, value: mark, expiresAt: expiresAt)
        }
    }

    /// Whether a Back-Channel Logout ended the session: one for its provider session (`sid`), whenever it
    /// came, or one for its user (`sub`) issued at or after the sign-in, both times the provider's (the
    /// logout token's `iat`, the sign-in's ID token `iat`; the session's own start where there was none).
    func loggedOut(_ record: SessionRecord) async throws -> Bool {
        guard let issuer = record.issuer else { return false }
        let now = clock.now()
        if let sessionID = record.sessionID, try await store.read(.loggedOut, digest: Self.logoutDigest("sid", issuer, sessionID), now: now) != nil {
            return true
        }
        guard let mark = try await store.read(.loggedOut, digest: Self.logoutDigest("sub", issuer, record.subject), now: now),
            let seconds = TimeInterval(String(decoding: mark, as: UTF8.self))
        else { return false }
        return Date(timeIntervalSince1970: seconds) >= (record.signedInAt ?? record.createdAt)
    }

    /// `text` with control characters replaced, for a log line (a refused token's fields are the caller's).
    static func printable(_ text: Substring) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }

    private static func logoutDigest(_ name: String, _ issuer: String, _ value: String) -> String {
        Secrets.digest(name + "\u{0}" + issuer + "\u{0}" + value)
    }
}
