import Foundation
import Hummingbird
import Logging
import NIOCore
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// An authorization the server started, kept under its `state` until the provider answers.
struct PendingAuthorization: Codable, Sendable {
    enum Purpose: Codable, Sendable {
        /// Redeemed by `POST /exchange` only with the binding whose digest this is and, when the start was
        /// attested, an assertion by the same App Attest key (`attestedKey`, its base64url ID).
        case exchange(bindingDigest: String, attestedKey: String? = nil)
        /// Return to `scheme://oauth<path>`; the code is redeemable only with the binding whose digest this is.
        case bridge(scheme: String, path: String, bindingDigest: String)
        /// Report to the app whose flow ID has this digest; the result is sealed with `resultKey` (derived
        /// from the flow ID, which only the app holds). Asked for only with an assertion by `attestedKey`
        /// when the start was attested.
        case completion(flowDigest: String, resultKey: String, attestedKey: String? = nil)

        var route: Route {
            switch self {
            case .exchange: .exchange
            case .bridge: .bridge
            case .completion: .completion
            }
        }
    }

    /// The route an authorization was started for, and the only one that may use it up.
    enum Route: Sendable {
        case exchange
        case bridge
        case completion
    }

    let session: AuthorizationSession
    let purpose: Purpose
}

/// A finished sign-in, before it is delivered.
struct SignInOutcome: Codable, Sendable {
    struct Tokens: Codable, Sendable {
        let accessToken: String
        let tokenType: String
        let idToken: String?
        let refreshToken: String?
        let expiresAt: Date?
    }

    let subject: String
    let acr: String?
    let tokens: Tokens?
    /// The provider and its session (`sid` of the ID token), which a Back-Channel Logout names.
    let issuer: String?
    let sessionID: String?
    /// The ID token's `iat`: when the provider signed the user in, on the provider's clock.
    let signedInAt: Date?

    init(subject: String, acr: String?, tokens: Tokens?, issuer: String? = nil, sessionID: String? = nil, signedInAt: Date? = nil) {
        self.subject = subject
        self.acr = acr
        self.tokens = tokens
        self.issuer = issuer
        self.sessionID = sessionID
        self.signedInAt = signedInAt
    }

    init(_ credential: Credential) {
        self.init(
            subject: credential.subject ?? "", acr: credential.acr,
            tokens: Tokens(
                accessToken: credential.accessToken, tokenType: credential.tokenType, idToken: credential.idToken,
                refreshToken: credential.refreshToken,
                expiresAt: credential.expiresAt
            ),
            issuer: credential.issuer, sessionID: credential.idTokenClaims?.sid,
            signedInAt: credential.idTokenClaims?.iat.map(Date.init(timeIntervalSince1970:))
        )
    }

    /// The outcome without the provider's tokens, for a result delivered as a session.
    func withoutTokens() -> SignInOutcome {
        SignInOutcome(subject: subject, acr: acr, tokens: nil, issuer: issuer, sessionID: sessionID, signedInAt: signedInAt)
    }
}

/// A first-party session.
struct SessionRecord: Codable, Sendable, Equatable {
    let subject: String
    let acr: String?
    let createdAt: Date
    let expiresAt: Date
    /// The provider that signed the user in, and its session: a Back-Channel Logout naming either ends
    /// this session (nil in records written before they were kept, and for a session without a provider).
    var issuer: String? = nil
    var sessionID: String? = nil
    /// When the provider signed the user in (the ID token's `iat`), which a `sub` logout is compared with.
    var signedInAt: Date? = nil
}

extension CompanionAPI.HandOffRequest: FlatJSON {
    func json() -> Data {
        var writer = JSONObjectWriter()
        writer.add("goto", goto)
        return writer.data()
    }

    init(json members: JSONMembers) throws { self.init(goto: try members.string("goto")) }
}

extension CompanionAPI.HandOffIssued: FlatJSON {
    func json() -> Data {
        var writer = JSONObjectWriter()
        writer.add("expires_in", expiresIn)
        writer.add("handoffotp", handoffotp)
        writer.add("redeem_url", redeemURL)
        return writer.data()
    }

    init(json members: JSONMembers) throws {
        guard let code = try members.string("handoffotp"), let expiresIn = try members.number("expires_in"), let whole = Int(exactly: expiresIn)
        else { throw JSONMembers.Mismatch() }
        self.init(handoffotp: code, expiresIn: whole, redeemURL: try members.string("redeem_url"))
    }
}

extension SessionRecord: FlatJSON {
    func json() -> Data {
        var writer = JSONObjectWriter()
        writer.add("acr", acr)
        writer.add("createdAt", createdAt.timeIntervalSince1970)
        writer.add("expiresAt", expiresAt.timeIntervalSince1970)
        writer.add("issuer", issuer)
        writer.add("sessionID", sessionID)
        writer.add("signedInAt", signedInAt?.timeIntervalSince1970)
        writer.add("subject", subject)
        return writer.data()
    }

    init(json members: JSONMembers) throws {
        guard let subject = try members.string("subject"), let createdAt = try members.number("createdAt"),
            let expiresAt = try members.number("expiresAt")
        else { throw JSONMembers.Mismatch() }
        self.init(
            subject: subject, acr: try members.string("acr"), createdAt: Date(timeIntervalSince1970: createdAt),
            expiresAt: Date(timeIntervalSince1970: expiresAt), issuer: try members.string("issuer"), sessionID: try members.string("sessionID"),
            signedInAt: try members.number("signedInAt").map(Date.init(timeIntervalSince1970:)))
    }
}
