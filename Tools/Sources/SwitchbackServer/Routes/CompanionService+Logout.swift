import Foundation
import HTTPTypes
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback

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
            do {
                try await store.insert(
                    .logoutTokenID, digest: Secrets.digest(logout.issuer + "\u{0}" + logout.jti), value: Data([1]),
                    expiresAt: logout.issuedAt.addingTimeInterval(IDTokenValidator.logoutTokenLifetime + 300))
            } catch let error as SwitchbackError where error.code == .storeFailed {
                throw CompanionError(.invalidRequest, "this logout token was already used")
            }
            if let subject = logout.subject { try await markLoggedOut("sub", logout.issuer, subject, at: now) }
            if let sessionID = logout.sessionID { try await markLoggedOut("sid", logout.issuer, sessionID, at: now) }
            logger.info("back-channel logout", metadata: ["by": "\(logout.subject != nil ? "sub" : "")\(logout.sessionID != nil ? "+sid" : "")"])
            answer = Response(status: .ok, headers: Replies.noStore)
        } catch let error as CompanionError {
            logger.notice("back-channel logout refused", metadata: ["reason": "\(error.message.prefix(120))"])
            var refused = error.json
            for field in Replies.noStore { refused.headers[field.name] = field.value }
            answer = refused
        }
        return answer
    }

    /// Records that `name` (`sub` or `sid`) `value` at `issuer` signed out at `now`: sessions made before
    /// then end when next used. Kept as long as a session lives, so no session made before it outlives it.
    private func markLoggedOut(_ name: String, _ issuer: String, _ value: String, at now: Date) async throws {
        let digest = Self.logoutDigest(name, issuer, value)
        let mark = Data(String(now.timeIntervalSince1970).utf8)
        let expiresAt = now.addingTimeInterval(configuration.session.lifetime + 60)
        if try await store.replace(.loggedOut, digest: digest, value: mark, expiresAt: expiresAt, now: now) { return }
        do {
            try await store.insert(.loggedOut, digest: digest, value: mark, expiresAt: expiresAt)
        } catch let error as SwitchbackError where error.code == .storeFailed {
            // Another instance wrote one meanwhile, or an expired one is not purged yet: take it, write ours.
            _ = try await store.take(.loggedOut, digest: digest, now: now)
            try await store.insert(.loggedOut, digest: digest, value: mark, expiresAt: expiresAt)
        }
    }

    /// Whether a Back-Channel Logout for the session's user or provider session arrived after it began.
    func loggedOut(_ record: SessionRecord) async throws -> Bool {
        guard let issuer = record.issuer else { return false }
        let now = clock.now()
        for (name, value) in [("sub", record.subject), ("sid", record.sessionID)] {
            guard let value, let mark = try await store.read(.loggedOut, digest: Self.logoutDigest(name, issuer, value), now: now),
                let seconds = TimeInterval(String(decoding: mark, as: UTF8.self))
            else { continue }
            if Date(timeIntervalSince1970: seconds) >= record.createdAt { return true }
        }
        return false
    }

    private static func logoutDigest(_ name: String, _ issuer: String, _ value: String) -> String {
        Secrets.digest(name + "\u{0}" + issuer + "\u{0}" + value)
    }
}
