import Foundation
import Hummingbird
import Logging
import Switchback

/// Session hand-off: a signed-in app opens a web app already signed in, through a one-time code.
@available(macOS 14, iOS 17, *)
extension CompanionService {
    struct HandOffRequest: Decodable {
        let goto: String?
    }

    /// `POST /handoff` with `Authorization: Bearer <access token>`: the token is checked (introspection or
    /// local JWT validation), then a one-time code is issued. With a `goto` in the body the answer also
    /// carries the complete redeem URL.
    func issueHandOff(_ request: Request) async throws -> Response {
        guard let handOff = configuration.handOff, let allowList else { throw CompanionError(.notConfigured, "session hand-off is off") }
        guard let header = request.headers[.authorization], header.count > 7, header.prefix(7).lowercased() == "bearer " else {
            throw CompanionError(.invalidToken, "send the app's access token as Authorization: Bearer")
        }
        let token = String(header.dropFirst(7).trimmingSpaces())
        let body = request.headers[.contentLength].flatMap(Int.init) == 0 ? HandOffRequest(goto: nil) : try await decode(HandOffRequest.self, from: request)
        if let goto = body.goto, allowList.permits(goto) == nil {
            throw CompanionError(.notAllowed, "goto is not on this server's redirect allow-list")
        }
        let owner = try await validate(accessToken: token, as: handOff)
        let now = clock.now()
        let grant = HandOffGrant(subject: owner.subject, clientID: owner.clientID ?? configuration.provider?.clientID ?? "", issuedAt: now, expiresAt: now.addingTimeInterval(handOff.codeLifetime))
        let code = try await store.issue(grant, entropy: entropy)
        logger.info("hand-off code issued", metadata: ["lifetime": "\(Int(handOff.codeLifetime))"])
        var reply: [String: Any] = ["handoffotp": code, "expires_in": Int(handOff.codeLifetime)]
        if let goto = body.goto { reply["redeem_url"] = Self.redeemURL(base: url("/handoff/redeem"), code: code, goto: goto).absoluteString }
        return Replies.json(reply, status: .created)
    }

    /// The URL that redeems `code` and continues to `goto`.
    static func redeemURL(base: URL, code: String, goto: String) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = "handoffotp=\(FormEncoding.escape(code))&goto=\(FormEncoding.escape(goto))"
        return components.url!
    }

    private func validate(accessToken token: String, as handOff: ServerConfiguration.HandOff) async throws -> (subject: String, clientID: String?) {
        guard !token.isEmpty, token.utf8.count <= 8192 else { throw CompanionError(.invalidToken, "the access token is empty or too long") }
        let client = try await requireProvider().anyClient()
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
            return (subject, answer.clientID)
        case .jwt:
            do {
                let claims = try await client.accessTokenValidator(audience: handOff.audience ?? "").validate(token)
                return (claims.sub, claims.clientID)
            } catch let error as SwitchbackError where [.jwksFetchFailed, .discoveryFailed, .transportFailed].contains(error.code) {
                throw CompanionError(.providerFailed, "the provider's keys could not be fetched")
            } catch let error as SwitchbackError {
                throw CompanionError(.invalidToken, "the access token is not valid: \(error.message)")
            }
        }
    }

    /// `GET /handoff/redeem?handoffotp=…&goto=…`: checks `goto` first (a refused target uses nothing up),
    /// then consumes the code once, sets the session cookie and redirects. Anything else is an error page.
    func redeemHandOff(_ request: Request) async throws -> Response {
        guard configuration.handOff != nil, let allowList else { throw CompanionError(.notConfigured, "session hand-off is off") }
        let query = FormEncoding.decode(request.uri.query ?? "", plusIsSpace: true) ?? []
        let values = Dictionary(query, uniquingKeysWith: { _, _ in "" })
        guard query.filter({ $0.0 == "goto" }).count == 1, query.filter({ $0.0 == "handoffotp" }).count == 1 else {
            throw CompanionError(.invalidRequest, "the link needs exactly one handoffotp and one goto")
        }
        guard let goto = values["goto"], let target = allowList.permits(goto) else {
            throw CompanionError(.notAllowed, "this link's destination is not allowed, so it was not followed")
        }
        guard let code = values["handoffotp"], let grant = try await store.redeem(code, now: clock.now()) else {
            throw CompanionError(.invalidGrant, "this sign-in link has expired or was already used")
        }
        let session = try await issueSession(subject: grant.subject, acr: nil)
        logger.info("hand-off code redeemed", metadata: ["destination": "\(target.host ?? "")"])
        return Replies.redirect(target.absoluteString, cookie: sessionCookie(session.id))
    }

    /// `GET /session`: who the cookie (or `Authorization: Session …`) belongs to, for the web app.
    func describeSession(_ request: Request) async throws -> Response {
        guard let session = try await session(of: request) else { throw CompanionError(.invalidToken, "no valid session") }
        var reply: [String: Any] = ["sub": session.subject, "expires_in": max(0, Int(session.expiresAt.timeIntervalSince(clock.now())))]
        if let acr = session.acr { reply["acr"] = acr }
        return Replies.json(reply)
    }
}
