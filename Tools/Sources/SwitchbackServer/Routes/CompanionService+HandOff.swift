import Foundation
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// Session hand-off: a signed-in app opens a web app already signed in, through a one-time code.
extension CompanionService {
    /// Who an access token presented at `POST /handoff` belongs to, and the key it is bound to.
    struct TokenOwner {
        let subject: String
        let clientID: String
        /// What the provider calls the account, for the redeem page.
        let displayName: String?
        /// `cnf.jkt`, or `""` for a token bound by another method; nil for a Bearer token.
        let boundThumbprint: String?
        /// The token's `exp`, which the web session never outlives (nil when introspection names none).
        let expiresAt: Date?
        /// The token's `iat`, on the provider's clock: a Back-Channel Logout of the subject is compared with it.
        let issuedAt: Date?
        /// The provider's sign-in session (`sid`), when the token names it.
        let sessionID: String?
    }

    static let handOffPath = CompanionAPI.Path.handOff
    static let redeemPath = CompanionAPI.Path.handOffRedeem

    /// `POST /handoff` with `Authorization: Bearer <access token>` (or `DPoP <token>` with a `DPoP` proof for
    /// a sender-constrained token): the token is checked (introspection or local JWT validation), it must
    /// have been issued to an accepted client, then a one-time code is issued. With a `goto` in the body
    /// the answer also carries the complete redeem URL.
    func issueHandOff(_ request: Request) async throws -> Response {
        guard let handOff = configuration.handOff, let allowList else { throw CompanionError(.notConfigured, "session hand-off is off") }
        guard let header = request.headers[.authorization], let space = header.firstIndex(of: " ") else {
            throw CompanionError(.invalidToken, "send the app's access token as Authorization: Bearer (or DPoP with a proof)")
        }
        let scheme = header[..<space].lowercased()
        guard scheme == "bearer" || scheme == "dpop" else {
            throw CompanionError(.invalidToken, "send the app's access token as Authorization: Bearer (or DPoP with a proof)")
        }
        let token = String(header[header.index(after: space)...].trimmingSpaces())
        let body =
            request.headers[.contentLength].flatMap(Int.init) == 0
            ? CompanionAPI.HandOffRequest(goto: nil) : try await decode(CompanionAPI.HandOffRequest.self, from: request)
        if let goto = body.goto, allowList.permits(goto) == nil {
            throw CompanionError(.notAllowed, "goto is not on this server's redirect allow-list")
        }
        let owner = try await validate(accessToken: token, as: handOff)
        try await checkPossession(
            of: token, owner: owner, scheme: scheme, proof: request.headers[.init("DPoP")!], dpopBoundOnly: handOff.dpopBoundOnly)
        let now = clock.now()
        let grant = HandOffGrant(
            subject: owner.subject, clientID: owner.clientID, issuedAt: now, expiresAt: now.addingTimeInterval(handOff.codeLifetime),
            displayName: owner.displayName.map { String($0.prefix(120)) }, tokenExpiresAt: owner.expiresAt,
            sessionID: owner.sessionID.flatMap { $0.utf8.count <= 1024 ? $0 : nil }, signedInAt: owner.issuedAt
        )
        let code = try await store.issue(grant, entropy: entropy)
        metrics.record(.handOffIssued)
        logger.info("hand-off code issued", metadata: ["lifetime": "\(Int(handOff.codeLifetime))", "client": "\(owner.clientID.prefix(80))"])
        let redeem = body.goto.map { Self.redeemURL(base: url(Self.redeemPath), code: code, goto: $0).absoluteString }
        return Replies.json(CompanionAPI.HandOffIssued(handoffotp: code, expiresIn: Int(handOff.codeLifetime), redeemURL: redeem), status: .created)
    }

    /// The URL that redeems `code` and continues to `goto`.
    static func redeemURL(base: URL, code: String, goto: String) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = "handoffotp=\(FormEncoding.escape(code))&goto=\(FormEncoding.escape(goto))"
        return components.url!
    }

    /// The clients whose tokens buy a hand-off.
    private func acceptedClients(_ handOff: ServerConfiguration.HandOff) throws -> Set<String> {
        try Set(handOff.acceptedClients ?? [requireProvider().configuration.clientID])
    }

    private func validate(accessToken token: String, as handOff: ServerConfiguration.HandOff) async throws -> TokenOwner {
        guard !token.isEmpty, token.utf8.count <= 8192 else { throw CompanionError(.invalidToken, "the access token is empty or too long") }
        let provider = try requireProvider()
        let accepted = try acceptedClients(handOff)
        let client = await provider.anyClient()
        switch handOff.validation {
        case .introspection:
            let answer: TokenIntrospection
            do {
                answer = try await client.tokenClient().introspect(token)
            } catch let error as SwitchbackError {
                throw CompanionError(.providerFailed, "the token could not be introspected: \(error.message)")
            }
            guard answer.active, let subject = answer.subject, !subject.isEmpty, (answer.expiresAt ?? .distantFuture) > clock.now() else {
                throw CompanionError(.invalidToken, "the access token is not active")
            }
            // A token the provider issued to another relying party for the same user must not buy a
            // session here (a confused deputy): the client, and the issuer and audience when given, are ours.
            guard let clientID = answer.clientID, accepted.contains(clientID) else {
                throw CompanionError(.invalidToken, "the access token was not issued to a client this server accepts")
            }
            if let issuer = answer.issuer, issuer != provider.configuration.issuer {
                throw CompanionError(.invalidToken, "the access token was issued by another provider")
            }
            if let required = handOff.audience {
                // This server must be named: an answer without `aud` says nothing about whom the token is for.
                guard answer.audience?.contains(required) ?? false else {
                    throw CompanionError(.invalidToken, "the access token is not meant for this server (aud)")
                }
            } else if let audience = answer.audience, accepted.isDisjoint(with: audience) {
                throw CompanionError(.invalidToken, "the access token is meant for another audience")
            }
            try Self.requireScope(handOff.requiredScope, in: answer.scope)
            return TokenOwner(
                subject: subject, clientID: clientID, displayName: answer.username,
                boundThumbprint: answer.isSenderConstrained ? (answer.confirmationThumbprint ?? "") : nil, expiresAt: answer.expiresAt,
                issuedAt: answer.issuedAt, sessionID: answer.sessionID
            )
        case .jwt:
            let claims: AccessTokenValidator.Claims
            do {
                claims = try await client.accessTokenValidator(audience: handOff.audience ?? "").validate(token)
            } catch let error as SwitchbackError where [.jwksFetchFailed, .discoveryFailed, .transportFailed].contains(error.code) {
                throw CompanionError(.providerFailed, "the provider's keys could not be fetched")
            } catch let error as SwitchbackError {
                throw CompanionError(.invalidToken, "the access token is not valid: \(error.message)")
            }
            let named = [claims.clientID, claims.authorizedParty].compactMap { $0 }
            guard let clientID = named.first, named.allSatisfy(accepted.contains) else {
                throw CompanionError(.invalidToken, "the access token was not issued to a client this server accepts")
            }
            try Self.requireScope(handOff.requiredScope, in: claims.scope)
            return TokenOwner(
                subject: claims.sub, clientID: clientID, displayName: claims.preferredUsername, boundThumbprint: claims.confirmationThumbprint,
                expiresAt: Date(timeIntervalSince1970: claims.exp), issuedAt: claims.iat.map(Date.init(timeIntervalSince1970:)), sessionID: claims.sid
            )
        }
    }

    /// The token's space-separated `scope` (RFC 6749 §3.3, RFC 7662, RFC 9068) includes `required`.
    static func requireScope(_ required: String?, in scope: String?) throws {
        guard let required else { return }
        guard let scope, scope.split(separator: " ").contains(where: { $0 == required }) else {
            throw CompanionError(.invalidToken, "the access token was not granted the \(required) scope this server requires for a hand-off")
        }
    }

    /// RFC 9449 §7: a sender-constrained token comes with the `DPoP` scheme and a fresh, single-use proof by
    /// its key for this request; a Bearer token never with the `DPoP` scheme.
    private func checkPossession(of token: String, owner: TokenOwner, scheme: String, proof: String?, dpopBoundOnly: Bool) async throws {
        guard let bound = owner.boundThumbprint else {
            if dpopBoundOnly { throw CompanionError(.invalidToken, "this server accepts only DPoP-bound access tokens for a hand-off") }
            guard scheme == "bearer" else { throw CompanionError(.invalidToken, "this access token is not DPoP-bound; send it as Bearer") }
            return
        }
        guard scheme == "dpop" else {
            throw CompanionError(.invalidToken, "this access token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof")
        }
        let now = clock.now()
        let verified: DPoPProof.Verified
        switch DPoPProof.verify(proof, method: "POST", url: url(Self.handOffPath).absoluteString, accessToken: token, now: now) {
        case .success(let result): verified = result
        case .failure(let refusal): throw CompanionError(.invalidToken, "the DPoP proof is refused: \(refusal.description)")
        }
        guard !bound.isEmpty, ConstantTime.equals(verified.thumbprint, bound) else {
            throw CompanionError(.invalidToken, "the DPoP proof is signed by another key than the one the token is bound to")
        }
        // Each proof works once across every instance: its jti (scoped to the key) is kept for twice the iat window.
        try await insertNew(
            .proofID, secret: verified.thumbprint + " " + verified.jti, true, expiresAt: verified.issuedAt.addingTimeInterval(2 * DPoPProof.window),
            taken: CompanionError(.invalidToken, "this DPoP proof was already used"))
    }

    // MARK: Redeem

    /// `GET /handoff/redeem?handoffotp=…&goto=…`: an interstitial that names the account and asks the user to
    /// continue with a same-origin POST. Nothing is used up and no cookie is set by a GET, so a link sent by
    /// someone else cannot silently sign this browser in (login CSRF) or replace its session.
    func showRedeem(_ request: Request) async throws -> Response {
        guard configuration.handOff != nil, let allowList else { throw CompanionError(.notConfigured, "session hand-off is off") }
        let pairs = FormEncoding.decode(request.uri.query ?? "", plusIsSpace: true) ?? []
        let (code, target, goto) = try redeemFields(pairs, allowList: allowList)
        guard Secrets.isIssued(code), let grant = try await store.lookUp(.handOffCode, secret: code, as: HandOffGrant.self, now: clock.now()) else {
            throw CompanionError(.invalidGrant, "this sign-in link has expired or was already used")
        }
        let current = try await session(of: request)
        return Self.redeemPage(
            action: url(Self.redeemPath), code: code, goto: goto, account: Self.account(grant), subject: grant.subject, destination: target,
            replacing: current?.subject
        )
    }

    /// `POST /handoff/redeem` from the interstitial: same-origin only; consumes the code once, replaces an
    /// existing session only when the user confirmed it, sets the session cookie and redirects.
    func redeemHandOff(_ request: Request) async throws -> Response {
        guard configuration.handOff != nil, let allowList else { throw CompanionError(.notConfigured, "session hand-off is off") }
        try requireSameOrigin(request)
        let form = try await self.form(from: request)
        let (code, target, goto) = try redeemFields(form.fields.map { ($0.key, $0.value) }, allowList: allowList)
        let now = clock.now()
        let current = sessionID(of: request)
        let grant: HandOffGrant
        var replaced = false
        if current == nil {
            // No session here to replace, so nothing to ask the user: the code is used up at once (one store
            // round trip fewer than looking first). A code whose token has expired is used up with it.
            guard let taken = try await store.redeem(code, now: now) else {
                throw CompanionError(.invalidGrant, "this sign-in link has expired or was already used")
            }
            grant = taken
        } else {
            switch try await redeemReplacing(code, confirmed: form.fields["replace"], current: current, target: target, goto: goto, now: now) {
            case .ask(let page): return page
            case .redeemed(let taken, let hadSession):
                grant = taken
                replaced = hadSession
            }
        }
        if let tokenExpiry = grant.tokenExpiresAt, tokenExpiry <= now {
            throw CompanionError(.invalidGrant, "the app's access token behind this link has expired; open the link from the app again")
        }
        // The browser's previous session (of any subject) ends: a new sign-in never inherits an old session ID.
        if let current { _ = try await store.take(.session, digest: Secrets.digest(current), now: now) }
        // The access token was the provider's: a Back-Channel Logout for its session (`sid`, when the token
        // named one) or for this subject after the token was issued (`iat`, on the provider's clock, as the
        // logout token's is) ends the session too. The session never outlives the access token that bought it.
        let session = try await issueSession(
            subject: grant.subject, acr: nil, issuer: configuration.provider?.issuer, sessionID: grant.sessionID, signedInAt: grant.signedInAt,
            notAfter: grant.tokenExpiresAt)
        metrics.record(.handOffRedeemed)
        logger.info("hand-off code redeemed", metadata: ["destination": "\(target.host ?? "")", "replaced": "\(replaced)"])
        return Replies.redirect(target.absoluteString, cookie: sessionCookie(session.id, expiresAt: session.record.expiresAt))
    }

    /// What a redeem in a browser that has a session comes to.
    private enum ReplacingRedeem {
        /// Another account is signed in here and the user did not confirm replacing it: the page asking.
        case ask(Response)
        case redeemed(HandOffGrant, hadSession: Bool)
    }

    /// A browser with a session cookie: the code is looked at first, and used up only when it is for the
    /// same account or the user confirmed replacing the other. An expired token behind it uses nothing up.
    private func redeemReplacing(_ code: String, confirmed: String?, current: String?, target: URL, goto: String, now: Date) async throws
        -> ReplacingRedeem
    {
        guard Secrets.isIssued(code), let preview = try await store.lookUp(.handOffCode, secret: code, as: HandOffGrant.self, now: now) else {
            throw CompanionError(.invalidGrant, "this sign-in link has expired or was already used")
        }
        if let tokenExpiry = preview.tokenExpiresAt, tokenExpiry <= now {
            throw CompanionError(.invalidGrant, "the app's access token behind this link has expired; open the link from the app again")
        }
        var currentRecord: SessionRecord?
        if let current { currentRecord = try await lookUpDroppingTampered(.session, secret: current, as: SessionRecord.self) }
        if let currentRecord, currentRecord.subject != preview.subject, confirmed != currentRecord.subject {
            var page = Self.redeemPage(
                action: url(Self.redeemPath), code: code, goto: goto, account: Self.account(preview), subject: preview.subject, destination: target,
                replacing: currentRecord.subject
            )
            page.status = .conflict
            return .ask(page)
        }
        guard let grant = try await store.redeem(code, now: now) else {
            throw CompanionError(.invalidGrant, "this sign-in link has expired or was already used")
        }
        return .redeemed(grant, hadSession: currentRecord != nil)
    }

    /// Exactly one `handoffotp` and one allow-listed `goto`; a refused target uses nothing up.
    private func redeemFields(_ pairs: [(String, String)], allowList: RedirectAllowList) throws -> (code: String, target: URL, goto: String) {
        let codes = pairs.filter { $0.0 == "handoffotp" }.map(\.1)
        let gotos = pairs.filter { $0.0 == "goto" }.map(\.1)
        guard codes.count == 1, gotos.count == 1 else { throw CompanionError(.invalidRequest, "the link needs exactly one handoffotp and one goto") }
        guard let target = allowList.permits(gotos[0]) else {
            throw CompanionError(.notAllowed, "this link's destination is not allowed, so it was not followed")
        }
        return (codes[0], target, gotos[0])
    }

    /// A state-changing browser POST must come from this server's own pages: its `Origin` is this server's
    /// origin, or, from a browser that sends no `Origin`, `Sec-Fetch-Site` says same-origin.
    func requireSameOrigin(_ request: Request) throws {
        if let origin = request.headers[.origin] {
            guard ASCIICase.equals(origin.utf8, lowercased: self.origin.utf8) else {
                throw CompanionError(.crossOrigin, "this form may only be sent from this server's own page")
            }
            return
        }
        guard request.headers[.init("Sec-Fetch-Site")!]?.lowercased() == "same-origin" else {
            throw CompanionError(.crossOrigin, "this form may only be sent from this server's own page")
        }
    }

    /// How the page names the account: the provider's name for it with the subject, or the subject alone.
    static func account(_ grant: HandOffGrant) -> String {
        grant.displayName.map { "\($0) (\(grant.subject))" } ?? grant.subject
    }

    /// The interstitial: who the link signs in, where it goes, and what it replaces. No script.
    static func redeemPage(action: URL, code: String, goto: String, account: String, subject: String, destination: URL, replacing current: String?)
        -> Response
    {
        var fields = "<input type=\"hidden\" name=\"handoffotp\" value=\"\(Replies.escape(code))\">"
        fields += "<input type=\"hidden\" name=\"goto\" value=\"\(Replies.escape(goto))\">"
        var message = "Continue to \(destination.host ?? "the web app") signed in as \(account)."
        if let current, current != subject {
            message += " This browser is signed in as \(current); continuing signs that account out here."
            fields += "<input type=\"hidden\" name=\"replace\" value=\"\(Replies.escape(current))\">"
        }
        let form =
            "<form method=\"post\" action=\"\(Replies.escape(action.absoluteString))\" id=\"confirm\">\(fields)"
            + "<button type=\"submit\" id=\"continue\">Continue as \(Replies.escape(account))</button></form>"
        // The POST answers with a redirect to the destination, which `form-action` must allow.
        return Replies.page(status: .ok, title: "Continue signed in?", message: message, extra: form, formTargets: [destination.webOrigin])
    }

    // MARK: Sessions

    /// `GET /session`: who the cookie (or `Authorization: Session …`) belongs to, for the web app.
    func describeSession(_ request: Request) async throws -> Response {
        guard let session = try await session(of: request) else { throw CompanionError(.invalidToken, "no valid session") }
        var reply: [String: Any] = ["sub": session.subject, "expires_in": max(0, Int(session.expiresAt.timeIntervalSince(clock.now())))]
        if let acr = session.acr { reply["acr"] = acr }
        return Replies.json(reply)
    }

    /// `POST /session/logout`: ends the session the cookie or `Authorization: Session …` names and clears the
    /// cookie. With a cookie the request must be same-origin (no cross-site logout); 204 either way, so the
    /// answer tells nothing about whether a session existed.
    func endSession(_ request: Request) async throws -> Response {
        // Only an explicit `Authorization: Session` header is safe from cross-site use; a cookie (even beside
        // another Authorization scheme) needs the same-origin check.
        if !(request.headers[.authorization]?.lowercased().hasPrefix("session ") ?? false) { try requireSameOrigin(request) }
        if let id = sessionID(of: request) {
            let ended = try await store.take(.session, digest: Secrets.digest(id), now: clock.now()) != nil
            if ended {
                metrics.record(.sessionEnded)
                logger.info("session ended")
            }
        }
        var headers = Replies.noStore
        headers[.setCookie] = expiredSessionCookie()
        return Response(status: .noContent, headers: headers)
    }
}
