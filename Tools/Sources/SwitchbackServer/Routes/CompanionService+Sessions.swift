import Foundation
import Hummingbird
import Logging
import NIOCore
@_spi(SwitchbackInternals) import Switchback

// First-party sessions: issued, set as a cookie, and read back from a request.
extension CompanionService {
    /// A new first-party session.
    func issueSession(
        subject: String, acr: String?, issuer: String?, sessionID: String? = nil, signedInAt: Date? = nil, notAfter: Date? = nil
    ) async throws -> (id: String, record: SessionRecord) {
        let now = clock.now()
        let full = now.addingTimeInterval(configuration.session.lifetime)
        let record = SessionRecord(
            subject: subject, acr: acr, createdAt: now, expiresAt: notAfter.map { min($0, full) } ?? full, issuer: issuer,
            sessionID: sessionID, signedInAt: signedInAt)
        let id = try await store.issue(.session, record, expiresAt: record.expiresAt, entropy: entropy)
        metrics.record(.sessionIssued)
        return (id, record)
    }

    /// The `Set-Cookie` value for a session: Secure, HttpOnly, SameSite, Path and Max-Age always.
    func sessionCookie(_ id: String, expiresAt: Date) -> String {
        let session = configuration.session
        let maxAge = max(0, Int(expiresAt.timeIntervalSince(clock.now()).rounded(.down)))
        return "\(session.effectiveCookieName)=\(id); Path=\(session.cookiePath); Max-Age=\(maxAge); Secure; HttpOnly; SameSite=\(session.sameSite)"
    }

    /// The `Set-Cookie` value that removes the session cookie.
    func expiredSessionCookie() -> String {
        let session = configuration.session
        return "\(session.effectiveCookieName)=; Path=\(session.cookiePath); Max-Age=0; Secure; HttpOnly; SameSite=\(session.sameSite)"
    }

    /// The session ID a request's `Authorization: Session …` header or cookie carries, when it has the shape
    /// of one this server issued.
    func sessionID(of request: Request) -> String? {
        RequestReading.sessionID(
            authorization: request.headers[.authorization], cookie: request.headers[.cookie], cookieName: configuration.session.effectiveCookieName)
    }

    /// The session a request's cookie or `Authorization: Session …` header names.
    func session(of request: Request) async throws -> SessionRecord? {
        guard let id = sessionID(of: request), let record = try await lookUpDroppingTampered(.session, secret: id, as: SessionRecord.self)
        else { return nil }
        // The sealed expiry, not only the row's: a database writer can move the row's `expires_at`, not this.
        guard record.expiresAt > clock.now() else {
            _ = try await store.take(.session, digest: Secrets.digest(id), now: clock.now())
            return nil
        }
        if try await loggedOut(record) {
            // The provider said this user or session signed out after the session began: it ends here.
            _ = try await store.take(.session, digest: Secrets.digest(id), now: clock.now())
            logger.info("session ended by the provider's back-channel logout")
            return nil
        }
        return record
    }
}
