import Foundation
import HTTPTypes
import Hummingbird
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// What tokens are used for once issued: userinfo (Bearer or DPoP-bound), and RP-initiated logout.
extension Provider {
    // MARK: DPoP

    /// Verifies a DPoP proof for this provider's `path` and uses its `jti` up; returns the key's thumbprint.
    /// With ``EmulatorConfiguration/requiresDPoPNonce`` a proof without the current nonce is refused with
    /// ``DPoPProof/Refusal/useNonce`` (its `jti` is not used up: the retry is a new proof anyway).
    func checkProof(_ proof: String?, method: String, path: String, accessToken: String?) async -> Result<String, DPoPProof.Refusal> {
        switch DPoPProof.verify(
            proof, method: method, url: issuer.issuer + path, accessToken: accessToken, now: clock.now(), requiresExpiry: profile.singpassRequests)
        {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let verified):
            if configuration.requiresDPoPNonce, verified.nonce != (await state.currentDPoPNonce(lifetime: configuration.dpopNonceLifetime)) {
                return .failure(.useNonce)
            }
            guard
                await state.useOnce(
                    verified.jti, scope: "dpop " + verified.thumbprint, until: verified.issuedAt.addingTimeInterval(2 * DPoPProof.window))
            else {
                return .failure(DPoPProof.Refusal("the DPoP proof was already used (jti replay)"))
            }
            return .success(verified.thumbprint)
        }
    }

    /// The `DPoP-Nonce` header a response carries when the emulator asks for nonces (RFC 9449 §8.2).
    func nonceHeader() async -> String? {
        configuration.requiresDPoPNonce ? await state.currentDPoPNonce(lifetime: configuration.dpopNonceLifetime) : nil
    }

    /// A refused proof as the token or PAR endpoint answers it: `use_dpop_nonce` with the nonce (§8.1), or
    /// `invalid_dpop_proof`.
    func proofRefused(_ refusal: DPoPProof.Refusal) async -> Response {
        guard refusal == .useNonce, let nonce = await nonceHeader() else {
            return Reply.oauthError(.badRequest, profile.invalidDPoPError, refusal.description)
        }
        var response = Reply.oauthError(.badRequest, "use_dpop_nonce", "the DPoP proof must carry the server's nonce")
        response.headers[Reply.dpopNonce] = nonce
        return response
    }

    static func dpopHeader(_ headers: HTTPFields) -> String? {
        headers.first { $0.name.canonicalName == "dpop" }?.value
    }

    // MARK: RP-Initiated Logout

    /// OpenID Connect RP-Initiated Logout 1.0: with a valid `id_token_hint` the user's refresh tokens at
    /// that client are revoked; the user agent goes to a registered `post_logout_redirect_uri` (with
    /// `state`) or sees a signed-out page.
    func endSession(query: String) async -> Response {
        let parameters: [String: String]
        switch AuthorizationRequest.parameters(query) {
        case .success(let decoded): parameters = decoded
        case .failure(let refusal): return refusal.frontChannelResponse
        }
        var clientID = parameters["client_id"]
        var subject: String?
        if let hint = parameters["id_token_hint"] {
            guard let claims = await keys.verifiedClaims(hint), claims["iss"] == .string(issuer.issuer),
                case .string(let sub)? = claims["sub"], case .string(let audience)? = claims["aud"],
                clientID == nil || clientID == audience
            else {
                return Reply.page(.badRequest, title: "Invalid request", message: "The id_token_hint was not issued here, or not to this client.")
            }
            clientID = audience
            subject = sub
        }
        let target = parameters["post_logout_redirect_uri"]
        if let target {
            guard let clientID, let client = configuration.client(clientID), client.postLogoutRedirectURIs.contains(target) else {
                return Reply.page(.badRequest, title: "Invalid request", message: "The post_logout_redirect_uri is not registered for this client.")
            }
        }
        // Only a request found valid signs anyone out.
        if let clientID, let subject { await state.revokeRefreshTokens(clientID: clientID, subject: subject) }
        guard let target else {
            return Reply.page(.ok, title: "Signed out", message: "You are signed out.")
        }
        var location = target
        if let state = parameters["state"] { location += (target.contains("?") ? "&" : "?") + FormEncoding.encode([("state", state)]) }
        return Response(status: .found, headers: [.location: location, .cacheControl: "no-store"])
    }

    /// UAE Pass's logout ("4. Logout": `/idshub/logout?redirect_uri=…`): the only parameter documented is
    /// `redirect_uri`, where the user agent goes afterwards; no `state`, no `id_token_hint`, no `client_id`.
    /// Assumed (UAE Pass does not say): the address must be one a client registered, or an open redirect
    /// would be served; anything else is ignored, with the signed-out page shown.
    func uaePassLogout(query: String) -> Response {
        guard case .success(let parameters) = AuthorizationRequest.parameters(query), let target = parameters["redirect_uri"],
            configuration.clients.contains(where: { $0.postLogoutRedirectURIs.contains(target) })
        else {
            return Reply.page(.ok, title: "Signed out", message: "You are signed out of UAE PASS.")
        }
        return Response(status: .found, headers: [.location: target, .cacheControl: "no-store"])
    }

    // MARK: Revocation

    /// Token revocation (RFC 7009): the client authenticates as at the token endpoint (a public client by
    /// its `client_id`); a token of another client is refused, an unknown one answered 200 (§2.2). A
    /// refresh token takes its whole sign-in with it, access tokens included (§2.1).
    func revoke(form body: ByteBuffer?, authorization: String?) async -> Response {
        guard let body, case .success(let form) = AuthorizationRequest.parameters(String(buffer: body)) else {
            return Reply.oauthError(.badRequest, "invalid_request", "the body must be a form")
        }
        let client: EmulatorConfiguration.Client
        switch await authenticate(form: form, authorization: authorization) {
        case .success(let authenticated): client = authenticated
        case .failure(let failure): return failure.response
        }
        guard let token = form["token"], !token.isEmpty else {
            return Reply.oauthError(.badRequest, "invalid_request", "token is required")
        }
        switch await state.revoke(token, clientID: client.clientID) {
        case .revoked, .unknown: return Response(status: .ok, headers: [.cacheControl: "no-store"])
        case .otherClient: return Reply.oauthError(.badRequest, "invalid_grant", "the token was issued to another client")
        }
    }

    // MARK: Userinfo

    /// Token introspection (RFC 7662) for a confidential client: `active` with the token's subject, client,
    /// scope and expiry, or only `active: false` for an unknown, expired or revoked token.
    func introspect(form body: ByteBuffer?, authorization: String?) async -> Response {
        switch await confidentialClient(form: body, authorization: authorization, purpose: "tokens are introspected") {
        case .failure(let refusal):
            return refusal.response
        case .success(let (_, form)):
            guard let token = form["token"], let (grant, expires) = await state.accessToken(token) else {
                return Reply.json(.object(["active": .bool(false)]))
            }
            var answer: [String: JSONValue] = [
                "active": .bool(true), "sub": .string(grant.subject), "client_id": .string(grant.clientID), "iss": .string(issuer.issuer),
                "scope": .string(grant.scope.joined(separator: " ")), "exp": .number(expires.timeIntervalSince1970.rounded(.down)),
                // RFC 7662 §2.2: when the token was issued (its lifetime back from its expiry).
                "iat": .number((expires.timeIntervalSince1970 - accessTokenLifetime).rounded(.down)),
                "token_type": .string(grant.boundKey == nil ? "Bearer" : "DPoP"),
            ]
            // RFC 7662 §2.2: the audience, when access tokens are issued for a resource server (RFC 9068's `aud`).
            if let audience = configuration.accessTokenAudience { answer["aud"] = .string(audience) }
            // RFC 9449 §6.2: introspection of a bound token names the key's thumbprint.
            if let bound = grant.boundKey { answer["cnf"] = .object(["jkt": .string(bound)]) }
            // RFC 7662 §2.2: a human-readable identifier of the resource owner.
            if let user = configuration.users.first(where: { $0.subject == grant.subject }) { answer["username"] = .string(user.username) }
            return Reply.json(.object(answer))
        }
    }

    func userInfo(method: String, authorization: String?, dpop: String?, form body: ByteBuffer?) async -> Response {
        var token: String?
        var scheme = "bearer"
        if let authorization, let space = authorization.firstIndex(of: " ") {
            scheme = authorization[..<space].lowercased()
            token = String(authorization[authorization.index(after: space)...])
        } else if let body, let fields = FormEncoding.decode(String(buffer: body), plusIsSpace: true) {
            token = fields.first { $0.0 == "access_token" }?.1
        }
        var grant: ProviderState.Grant?
        if let token { grant = profile.spendsAccessTokens ? await state.spendAccessToken(token) : await state.grant(forAccessToken: token) }
        guard let token, let grant,
            let user = configuration.users.first(where: { $0.subject == grant.subject })
        else {
            return Reply.bearerError()
        }
        // RFC 9449 §7: a bound token only with the DPoP scheme and a proof by its key for this request.
        if let bound = grant.boundKey {
            guard scheme == "dpop" else { return Reply.bearerError(scheme: "DPoP") }
            switch await checkProof(dpop, method: method, path: "/userinfo", accessToken: token) {
            case .success(let thumbprint) where thumbprint == bound:
                break
            case .failure(let refusal) where refusal == .useNonce:
                // RFC 9449 §9: a resource server asks for its nonce with 401 and `use_dpop_nonce`.
                var response = Reply.json(.object(["error": .string("use_dpop_nonce")]), status: .unauthorized)
                response.headers[.wwwAuthenticate] = #"DPoP error="use_dpop_nonce", algs="ES256""#
                response.headers[Reply.dpopNonce] = await nonceHeader()
                return response
            default:
                return Reply.bearerError(scheme: "DPoP")
            }
        } else if scheme != "bearer" {
            return Reply.bearerError()
        }
        // The contract's form of `sub` (UAE Pass: `UAEPASS/<uuid>`), else the subject itself.
        var claims: [String: JSONValue] = ["sub": .string(providerSubject(user.subject))]
        if let options = profile.uaePassOptions, grant.scope.contains(UAEPassOptions.profileScope) {
            // UAE Pass "Obtaining authenticated user information": the identity a client reads here, for the
            // documented scope (UAE Pass "Obtaining the OAuth2 access code").
            claims["uuid"] = .string(user.subject)
            claims["userType"] = .string(options.accountType)
            claims["fullnameEN"] = .string(user.name)
            claims["email"] = .string(user.email)
        }
        // `acr` where the contract says userinfo carries it (none for UAE Pass, whose samples have none).
        if profile.contract?.flag(.userInfoACR) == true, let acr = grant.acr { claims["acr"] = .string(acr) }
        if grant.scope.contains("profile") { claims["name"] = .string(user.name) }
        if grant.scope.contains("email") {
            claims["email"] = .string(user.email)
            claims["email_verified"] = .bool(true)
        }
        // Singpass ("5. Requesting for userinfo"): for a client with an encryption key, userinfo is a JWS
        // inside a JWE, as the ID token is, carrying iss, aud and iat.
        if case .singpass = profile.handOff, let client = configuration.client(grant.clientID), !client.keys(use: "enc").isEmpty {
            claims["iss"] = .string(issuer.issuer)
            claims["aud"] = .string(client.clientID)
            claims["iat"] = .number(Double(Int(await state.currentDate.timeIntervalSince1970)))
            do {
                let token = try encryptIfRegistered(try await keys.sign(claims, algorithm: client.idTokenAlgorithm), client: client)
                return Response(
                    status: .ok, headers: [.contentType: "application/jwt", .cacheControl: "no-store"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: token))
                )
            } catch {
                return Reply.oauthError(.internalServerError, "server_error", "the userinfo response could not be signed and encrypted")
            }
        }
        return Reply.json(.object(claims))
    }
}
