import Crypto
import Foundation
import Hummingbird
import Switchback

/// The provider's endpoints. Each handler reads the request, asks `ProviderState`, and answers the
/// way the specifications prescribe, including for malformed input.
@available(macOS 14, iOS 17, *)
struct Provider: Sendable {
    let configuration: EmulatorConfiguration
    let profile: Profile
    let keys: SigningKeys
    let state: ProviderState
    let issuer: IssuerBox
    let faults: FaultBoard
    static let maximumBody = 64 * 1024

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/.well-known/openid-configuration") { _, _ in Reply.json(discoveryDocument()) }
        router.get("/jwks") { _, _ in Reply.json(await keys.jwks(withUnparseableKey: await faults.anyClient(has: .unparseableJWK))) }
        router.get("/authorize") { request, _ in await authorize(query: request.uri.query ?? "", userAgent: request.headers[.userAgent]) }
        router.post("/login") { request, _ in
            var request = request
            return await login(form: try? await request.collectBody(upTo: Self.maximumBody))
        }
        router.post("/token") { request, _ in
            var request = request
            let body = try? await request.collectBody(upTo: Self.maximumBody)
            return await token(form: body, authorization: request.headers[.authorization], dpop: Self.dpopHeader(request.headers))
        }
        router.post("/par") { request, _ in
            var request = request
            let body = try? await request.collectBody(upTo: Self.maximumBody)
            return await pushAuthorizationRequest(form: body, authorization: request.headers[.authorization], dpop: Self.dpopHeader(request.headers))
        }
        router.get("/userinfo") { request, _ in
            await userInfo(method: "GET", authorization: request.headers[.authorization], dpop: Self.dpopHeader(request.headers), form: nil)
        }
        router.post("/userinfo") { request, _ in
            var request = request
            return await userInfo(
                method: "POST", authorization: request.headers[.authorization], dpop: Self.dpopHeader(request.headers),
                form: try? await request.collectBody(upTo: Self.maximumBody)
            )
        }
        addHandOffRoutes(to: router)
        router.get("/end_session") { request, _ in await endSession(query: request.uri.query ?? "") }
        router.post("/emulator/rotate-keys") { _, _ in
            do {
                try await keys.rotate()
                return Reply.json(await keys.jwks())
            } catch {
                return Reply.oauthError(.internalServerError, "server_error", "the keys could not be rotated")
            }
        }
        router.post("/emulator/faults") { request, _ in
            var request = request
            return await setFaults(form: try? await request.collectBody(upTo: Self.maximumBody))
        }
        return router
    }

    /// `POST /emulator/faults` with `client_id` and `faults` (comma-separated, empty for none): switches
    /// faults at run time, for integrators driving the command-line emulator from their own tests.
    func setFaults(form body: ByteBuffer?) async -> Response {
        guard let body, case .success(let form) = AuthorizationRequest.parameters(String(buffer: body)) else {
            return Reply.oauthError(.badRequest, "invalid_request", "the body must be a form with client_id and faults")
        }
        guard let clientID = form["client_id"], configuration.client(clientID) != nil else {
            return Reply.oauthError(.badRequest, "invalid_request", "client_id is missing or not registered")
        }
        switch Fault.list(form["faults"] ?? "") {
        case .success(let listed):
            await faults.set(listed, for: clientID)
            return Reply.json(.object(["client_id": .string(clientID), "faults": .array(listed.map(\.rawValue).sorted().map(JSONValue.string))]))
        case .failure(let unknown):
            return Reply.oauthError(.badRequest, "invalid_request", unknown.description)
        }
    }

    func discoveryDocument() -> JSONValue {
        let base = issuer.issuer
        return .object([
            "issuer": .string(base),
            "authorization_endpoint": .string("\(base)/authorize"),
            "token_endpoint": .string("\(base)/token"),
            "jwks_uri": .string("\(base)/jwks"),
            "userinfo_endpoint": .string("\(base)/userinfo"),
            "pushed_authorization_request_endpoint": .string("\(base)/par"),
            "end_session_endpoint": .string("\(base)/end_session"),
            "response_types_supported": .array([.string("code")]),
            "response_modes_supported": .array(profile.responseModes.map(JSONValue.string)),
            "grant_types_supported": .array([.string("authorization_code"), .string("refresh_token")]),
            "subject_types_supported": .array([.string("public")]),
            "id_token_signing_alg_values_supported": .array([.string("RS256"), .string("ES256")]),
            "code_challenge_methods_supported": .array([.string("S256")]),
            "token_endpoint_auth_methods_supported": .array(
                (profile.fapi2 ? ["private_key_jwt"] : ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]).map(JSONValue.string)
            ),
            "require_pushed_authorization_requests": .bool(profile.fapi2),
            "dpop_signing_alg_values_supported": .array([.string("ES256")]),
            "token_endpoint_auth_signing_alg_values_supported": .array(["RS256", "ES256"].map(JSONValue.string)),
            "scopes_supported": .array(["openid", "profile", "email"].map(JSONValue.string)),
            "authorization_response_iss_parameter_supported": .bool(true),
        ])
    }

    // MARK: Authorization endpoint

    func authorize(query: String, userAgent: String?) async -> Response {
        if profile.refusesEmbeddedWebViews, UserAgent.isEmbeddedWebView(userAgent) {
            return Reply.page(
                .forbidden, title: "Browser not supported",
                message: "This provider does not run inside an app's embedded web view. Open the sign-in in the system browser."
            )
        }
        let parameters: [String: String]
        switch AuthorizationRequest.parameters(query) {
        case .success(let decoded): parameters = decoded
        case .failure(let refusal): return refusal.frontChannelResponse
        }
        if let requestURI = parameters["request_uri"] {
            // RFC 9126 §4: a pushed request, single use, for the client that pushed it.
            guard let clientID = parameters["client_id"], let id = await state.takePushed(requestURI, clientID: clientID),
                let pending = await state.pending(id)
            else {
                return Reply.page(.badRequest, title: "Invalid request", message: "The request_uri is unknown, expired, already used or not this client's.")
            }
            return await begin(pending, requestID: id)
        }
        guard !profile.fapi2 else {
            return Reply.page(.badRequest, title: "Invalid request", message: "This provider takes authorization requests only by PAR (request_uri).")
        }
        switch AuthorizationRequest.validate(parameters, configuration: configuration, profile: profile, issuer: issuer.issuer) {
        case .success(let pending):
            return await begin(pending, requestID: await state.begin(pending))
        case .failure(let refusal):
            return refusal.frontChannelResponse
        }
    }

    /// The first page of a sign-in: the password page, or the hand-off to the authenticator app.
    func begin(_ pending: ProviderState.Pending, requestID: String) async -> Response {
        switch profile.handOff {
        case .uaePass(let options) where pending.acrValues.contains(UAEPassOptions.onDeviceACR):
            return await uaePassHandOff(pending, requestID: requestID, options: options)
        case .bankIDNorway:
            return await bankIDNorwayHandOff(pending, requestID: requestID)
        case .mitID:
            return await mitIDHandOff(pending, requestID: requestID)
        case .bankIDSweden(let options):
            return await bankIDSwedenHandOff(pending, requestID: requestID, options: options)
        case .singpass:
            return await singpassHandOff(pending, requestID: requestID)
        case .uaePass, nil:
            return Reply.loginPage(requestID: requestID, clientID: pending.clientID, failed: false)
        }
    }

    /// Pushed authorization requests (RFC 9126): the client authenticates as at the token endpoint.
    func pushAuthorizationRequest(form body: ByteBuffer?, authorization: String?, dpop: String?) async -> Response {
        guard let body else { return Reply.oauthError(.badRequest, "invalid_request", "the body is missing or too large") }
        var parameters: [String: String]
        switch AuthorizationRequest.parameters(String(buffer: body)) {
        case .success(let decoded): parameters = decoded
        case .failure(let refusal): return refusal.jsonResponse
        }
        guard parameters["request_uri"] == nil else {
            return Reply.oauthError(.badRequest, "invalid_request", "request_uri may not be pushed")
        }
        switch await authenticate(form: parameters, authorization: authorization) {
        case .success(let client) where profile.fapi2 && client.authentication != .privateKeyJWT:
            return Reply.oauthError(.unauthorized, "invalid_client", "this provider authenticates clients only by private_key_jwt")
        case .success(let client): parameters["client_id"] = client.clientID
        case .failure(let failure): return failure.response
        }
        // RFC 9449 §10.1: a proof at PAR must be valid, and match dpop_jkt when both are sent.
        if let dpop {
            switch await checkProof(dpop, method: "POST", path: "/par", accessToken: nil) {
            case .success(let thumbprint) where parameters["dpop_jkt"] == nil || parameters["dpop_jkt"] == thumbprint:
                parameters["dpop_jkt"] = thumbprint
            case .success:
                return Reply.oauthError(.badRequest, "invalid_dpop_proof", "dpop_jkt names another key than the DPoP proof")
            case .failure(let refusal):
                return Reply.oauthError(.badRequest, "invalid_dpop_proof", refusal.description)
            }
        }
        switch AuthorizationRequest.validate(parameters, configuration: configuration, profile: profile, issuer: issuer.issuer) {
        case .success(let pending):
            let uri = await state.push(pending, lifetime: Self.pushedRequestLifetime)
            return Reply.json(.object(["request_uri": .string(uri), "expires_in": .number(Self.pushedRequestLifetime)]), status: .created)
        case .failure(let refusal):
            return refusal.jsonResponse
        }
    }

    static let pushedRequestLifetime: TimeInterval = 90

    func login(form body: ByteBuffer?) async -> Response {
        guard let body, let fields = FormEncoding.decode(String(buffer: body), plusIsSpace: true) else {
            return Reply.page(.badRequest, title: "Invalid request", message: "The form could not be read.")
        }
        let form = Dictionary(fields, uniquingKeysWith: { first, _ in first })
        guard let requestID = form["request"], let pending = await state.pending(requestID) else {
            return Reply.page(.badRequest, title: "Expired", message: "This sign-in request is unknown or already used.")
        }
        guard let user = configuration.users.first(where: { $0.username == form["username"] }),
            let password = form["password"], ConstantTime.equals(password, user.password)
        else {
            return Reply.loginPage(requestID: requestID, clientID: pending.clientID, failed: true)
        }
        let acr: String? =
            switch profile.handOff {
            case .uaePass: UAEPassOptions.webACR
            case .bankIDNorway, .mitID, .bankIDSweden, .singpass, nil: nil
            }
        return await finish(requestID: requestID, pending: pending, subject: user.subject, acr: acr)
    }

    /// Ends a sign-in: the code (or, under a fault, an error) goes back to the client in its response mode.
    func finish(requestID: String, pending: ProviderState.Pending, subject: String, acr: String?) async -> Response {
        let redirect = await authorizationRedirect(for: pending)
        if await faults(for: pending).contains(.authorizationError) {
            await state.discard(requestID)
            return redirect.error("access_denied", "the user declined")
        }
        guard let issued = await state.issueCode(for: requestID, subject: subject, acr: acr, lifetime: profile.codeLifetime ?? configuration.codeLifetime) else {
            return Reply.page(.badRequest, title: "Expired", message: "This sign-in request is unknown or already used.")
        }
        return redirect.success(code: issued.code)
    }

    /// Where and how the authorization response for `pending` goes, with the `iss` the faults leave.
    func authorizationRedirect(for pending: ProviderState.Pending) async -> AuthorizationRedirect {
        let faults = await faults(for: pending)
        var responseIssuer: String? = issuer.issuer
        if faults.contains(.wrongIssuerParameter) { responseIssuer = Self.foreignIssuer }
        if faults.contains(.missingIssuerParameter) { responseIssuer = nil }
        return AuthorizationRedirect(
            redirectURI: pending.redirectURI, mode: pending.responseMode, state: pending.state, issuer: responseIssuer, tapToReturn: profile.tapToReturn
        )
    }

    func faults(for pending: ProviderState.Pending) async -> Set<Fault> {
        await faults.faults(for: pending.clientID).union(pending.faults)
    }

    // MARK: Token endpoint

    func token(form body: ByteBuffer?, authorization: String?, dpop: String?) async -> Response {
        guard let body else { return Reply.oauthError(.badRequest, "invalid_request", "the body is missing or too large") }
        let form: [String: String]
        switch AuthorizationRequest.parameters(String(buffer: body)) {
        case .success(let decoded): form = decoded
        case .failure(let refusal): return refusal.jsonResponse
        }
        let client: EmulatorConfiguration.Client
        switch await authenticate(form: form, authorization: authorization) {
        case .success(let authenticated) where profile.fapi2 && authenticated.authentication != .privateKeyJWT:
            return Reply.oauthError(.unauthorized, "invalid_client", "this provider authenticates clients only by private_key_jwt")
        case .success(let authenticated): client = authenticated
        case .failure(let failure): return failure.response
        }
        var proofKey: String?
        if dpop != nil || profile.fapi2 {
            switch await checkProof(dpop, method: "POST", path: "/token", accessToken: nil) {
            case .success(let thumbprint): proofKey = thumbprint
            case .failure(let refusal): return Reply.oauthError(.badRequest, "invalid_dpop_proof", refusal.description)
            }
        }
        var requested: Set<Fault> = []
        if let code = form["code"], let grant = await state.peek(code: code) {
            requested = grant.faults
        } else if let refreshToken = form["refresh_token"], let grant = await state.grant(forRefreshToken: refreshToken) {
            requested = grant.faults
        }
        let faults = await self.faults.faults(for: client.clientID).union(requested)
        if faults.contains(.tokenUnavailable) {
            return Reply.oauthError(.serviceUnavailable, "temporarily_unavailable", "the token endpoint is unavailable (emulator fault token-5xx)")
        }
        if faults.contains(.tokenGarbage) {
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: "<html><body>502 Bad Gateway</body></html>"))
            )
        }
        if faults.contains(.tokenSlow) {
            try? await Task.sleep(for: .seconds(configuration.slowResponseDelay))
        }
        switch form["grant_type"] {
        case "authorization_code": return await redeemCode(form: form, client: client, faults: faults, proofKey: proofKey)
        case "refresh_token": return await refresh(form: form, client: client, faults: faults, proofKey: proofKey)
        default: return Reply.oauthError(.badRequest, "unsupported_grant_type", "use authorization_code or refresh_token")
        }
    }

    struct ClientAuthenticationFailure: Error {
        let response: Response
    }

    func authenticate(form: [String: String], authorization: String?) async -> Result<EmulatorConfiguration.Client, ClientAuthenticationFailure> {
        let invalid = ClientAuthenticationFailure(response: Reply.oauthError(.unauthorized, "invalid_client", "client authentication failed", basicChallenge: authorization != nil))
        if form["client_assertion"] != nil || form["client_assertion_type"] != nil {
            return await authenticateAssertion(form: form, authorization: authorization)
        }
        var presentedID = form["client_id"]
        var presentedSecret = form["client_secret"]
        var method = presentedSecret == nil ? EmulatorConfiguration.Client.Authentication.none : .clientSecretPost
        if let authorization, authorization.lowercased().hasPrefix("basic ") {
            guard let decoded = Data(base64Encoded: String(authorization.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) }),
                let colon = decoded.firstIndex(of: ":"),
                let id = String(decoded[..<colon]).removingPercentEncoding,
                let secret = String(decoded[decoded.index(after: colon)...]).removingPercentEncoding,
                presentedSecret == nil, presentedID == nil || presentedID == id
            else { return .failure(invalid) }
            presentedID = id
            presentedSecret = secret
            method = .clientSecretBasic
        }
        guard let presentedID, let client = configuration.client(presentedID), client.authentication == method else {
            return .failure(invalid)
        }
        if method != .none {
            guard let secret = client.secret, let presentedSecret, ConstantTime.equals(secret, presentedSecret) else { return .failure(invalid) }
        }
        return .success(client)
    }

    /// `private_key_jwt`: one method at a time, the assertion verified with the client's keys, its `jti` used once.
    func authenticateAssertion(form: [String: String], authorization: String?) async -> Result<EmulatorConfiguration.Client, ClientAuthenticationFailure> {
        func refuse(_ description: String) -> Result<EmulatorConfiguration.Client, ClientAuthenticationFailure> {
            .failure(ClientAuthenticationFailure(response: Reply.oauthError(.unauthorized, "invalid_client", description)))
        }
        guard authorization == nil, form["client_secret"] == nil else { return refuse("use one client authentication method") }
        guard form["client_assertion_type"] == ClientAssertion.type, let assertion = form["client_assertion"],
            let clientID = ClientAssertion.claimedClient(assertion), form["client_id"] == nil || form["client_id"] == clientID
        else {
            return refuse("client_assertion_type must be \(ClientAssertion.type) with a client_assertion JWT whose iss is the client_id")
        }
        guard let client = configuration.client(clientID), client.authentication == .privateKeyJWT else {
            return refuse("the client is unknown or not registered for private_key_jwt")
        }
        let base = issuer.issuer
        switch await ClientAssertion.verify(assertion, jwks: client.jwks, clientID: clientID, audiences: [base, base + "/token", base + "/par"]) {
        case .failure(let refusal):
            return refuse(refusal.description)
        case .success(let verified):
            guard await state.useOnce(verified.jti, scope: clientID, until: verified.expires) else {
                return refuse("the client assertion was already used (jti replay)")
            }
            return .success(client)
        }
    }

    func redeemCode(form: [String: String], client: EmulatorConfiguration.Client, faults: Set<Fault>, proofKey: String?) async -> Response {
        guard let code = form["code"], let redirectURI = form["redirect_uri"], let verifier = form["code_verifier"] else {
            return Reply.oauthError(.badRequest, "invalid_request", "code, redirect_uri and code_verifier are required")
        }
        let grant: ProviderState.Grant
        switch await state.redeem(code: code) {
        case .granted(let granted): grant = granted
        case .unknown: return Reply.oauthError(.badRequest, "invalid_grant", "unknown code")
        case .expired: return Reply.oauthError(.badRequest, "invalid_grant", "the code has expired")
        case .replayed: return Reply.oauthError(.badRequest, "invalid_grant", "the code was already used; its tokens are revoked")
        }
        guard grant.clientID == client.clientID, grant.redirectURI == redirectURI else {
            return Reply.oauthError(.badRequest, "invalid_grant", "the code was issued to another client or redirect_uri")
        }
        let challenge = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
        guard (43...128).contains(verifier.utf8.count), ConstantTime.equals(challenge, grant.codeChallenge) else {
            return Reply.oauthError(.badRequest, "invalid_grant", "the code_verifier does not match the code_challenge")
        }
        if let bound = grant.boundKey, bound != proofKey {
            return Reply.oauthError(.badRequest, "invalid_grant", "the code is bound to another DPoP key (dpop_jkt)")
        }
        return await issue(grant, client: client, code: code, faults: faults, proofKey: proofKey)
    }

    func refresh(form: [String: String], client: EmulatorConfiguration.Client, faults: Set<Fault>, proofKey: String?) async -> Response {
        guard let refreshToken = form["refresh_token"], let grant = await state.grant(forRefreshToken: refreshToken), grant.clientID == client.clientID else {
            return Reply.oauthError(.badRequest, "invalid_grant", "unknown or revoked refresh token")
        }
        if let bound = grant.boundKey, bound != proofKey {
            return Reply.oauthError(.badRequest, "invalid_grant", "the refresh token is bound to a DPoP key; prove it")
        }
        await state.revokeRefreshToken(refreshToken)
        return await issue(grant, client: client, code: nil, faults: faults, proofKey: proofKey)
    }

    /// The issuer that faults put where the emulator's own belongs.
    static let foreignIssuer = "https://issuer.invalid"

    /// Issues tokens for a grant; `code` is nil for a refresh (whose ID token carries no nonce).
    func issue(_ grant: ProviderState.Grant, client: EmulatorConfiguration.Client, code: String?, faults: Set<Fault>, proofKey: String?) async -> Response {
        var grant = grant
        grant.boundKey = proofKey
        let tokens = await state.issueTokens(for: grant, code: code, lifetime: configuration.tokenLifetime, refresh: true)
        let idToken: String
        do {
            idToken = try await signIDToken(idTokenClaims(grant, client: client, accessToken: tokens.access, code: code, faults: faults), client: client, faults: faults)
        } catch {
            return Reply.oauthError(.internalServerError, "server_error", "the ID token could not be signed")
        }
        var body: [String: JSONValue] = [
            "access_token": .string(tokens.access), "token_type": .string(proofKey == nil ? "Bearer" : "DPoP"),
            "expires_in": .number(configuration.tokenLifetime), "id_token": .string(idToken), "scope": .string(grant.scope.joined(separator: " ")),
        ]
        if let refreshToken = tokens.refresh { body["refresh_token"] = .string(refreshToken) }
        return Reply.json(.object(body))
    }

    func idTokenClaims(_ grant: ProviderState.Grant, client: EmulatorConfiguration.Client, accessToken: String, code: String?, faults: Set<Fault>) -> [String: JSONValue] {
        func halfHash(_ value: String) -> JSONValue { .string(Base64URL.encode(Array(SHA256.hash(data: Data(value.utf8))).prefix(16))) }
        let now = Date().timeIntervalSince1970.rounded(.down)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer.issuer), "sub": .string(grant.subject), "aud": .string(client.clientID),
            "iat": .number(now), "exp": .number(now + configuration.tokenLifetime),
            "auth_time": .number(grant.authTime.timeIntervalSince1970.rounded(.down)), "at_hash": halfHash(accessToken),
        ]
        if let acr = grant.acr { claims["acr"] = .string(acr) }
        if let code {
            claims["c_hash"] = halfHash(code)
            if let nonce = grant.nonce { claims["nonce"] = .string(nonce) }
        } else {
            if faults.contains(.refreshChangesIssuer) { claims["iss"] = .string(Self.foreignIssuer) }
            if faults.contains(.refreshChangesSubject) { claims["sub"] = .string(grant.subject + "-other") }
            if faults.contains(.refreshChangesAudience) {
                claims["aud"] = .array([.string(client.clientID), .string("another-client")])
                claims["azp"] = .string(client.clientID)
            }
        }
        for fault in faults {
            switch fault {
            case .wrongIssuer: claims["iss"] = .string(Self.foreignIssuer)
            case .missingIssuer: claims["iss"] = nil
            case .wrongAudience: claims["aud"] = .string("another-client")
            case .missingAudience: claims["aud"] = nil
            case .missingSubject: claims["sub"] = nil
            case .missingIssuedAt: claims["iat"] = nil
            case .wrongNonce: claims["nonce"] = .string("not-the-requested-nonce")
            case .badAccessTokenHash: claims["at_hash"] = halfHash(accessToken + "-other")
            case .missingAccessTokenHash: claims["at_hash"] = nil
            case .badCodeHash: if let code { claims["c_hash"] = halfHash(code + "-other") }
            case .missingCodeHash: claims["c_hash"] = nil
            default: break
            }
        }
        return claims
    }

    /// Signs with the client's algorithm, or breaks the signature the way the faults ask.
    func signIDToken(_ claims: [String: JSONValue], client: EmulatorConfiguration.Client, faults: Set<Fault>) async throws -> String {
        func encode(_ value: JSONValue) -> String { Base64URL.encode(Data(value.description.utf8)) }
        if faults.contains(.algNone) {
            return encode(.object(["alg": .string("none"), "typ": .string("JWT")])) + "." + encode(.object(claims)) + "."
        }
        if faults.contains(.hs256) {
            let input = encode(.object(["alg": .string("HS256"), "typ": .string("JWT")])) + "." + encode(.object(claims))
            let key = SymmetricKey(data: Data((client.secret ?? client.clientID).utf8))
            return input + "." + Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key))
        }
        if faults.contains(.rotateKeys) { try await keys.rotate() }
        let signed = try await keys.sign(claims, algorithm: client.idTokenAlgorithm)
        guard faults.contains(.badSignature), let dot = signed.lastIndex(of: "."), var signature = Base64URL.decode(String(signed[signed.index(after: dot)...])), !signature.isEmpty else {
            return signed
        }
        signature[signature.startIndex] ^= 0x01
        return signed[...dot] + Base64URL.encode(signature)
    }

    // MARK: DPoP

    /// Verifies a DPoP proof for this provider's `path` and uses its `jti` up; returns the key's thumbprint.
    func checkProof(_ proof: String?, method: String, path: String, accessToken: String?) async -> Result<String, DPoPProof.Refusal> {
        switch DPoPProof.verify(proof, method: method, url: issuer.issuer + path, accessToken: accessToken, now: Date()) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let verified):
            guard await state.useOnce(verified.jti, scope: "dpop " + verified.thumbprint, until: verified.issuedAt.addingTimeInterval(2 * DPoPProof.window)) else {
                return .failure(DPoPProof.Refusal("the DPoP proof was already used (jti replay)"))
            }
            return .success(verified.thumbprint)
        }
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

    // MARK: Userinfo

    func userInfo(method: String, authorization: String?, dpop: String?, form body: ByteBuffer?) async -> Response {
        var token: String?
        var scheme = "bearer"
        if let authorization, let space = authorization.firstIndex(of: " ") {
            scheme = authorization[..<space].lowercased()
            token = String(authorization[authorization.index(after: space)...])
        } else if let body, let fields = FormEncoding.decode(String(buffer: body), plusIsSpace: true) {
            token = fields.first { $0.0 == "access_token" }?.1
        }
        guard let token, let grant = await state.grant(forAccessToken: token),
            let user = configuration.users.first(where: { $0.subject == grant.subject })
        else {
            return Reply.bearerError()
        }
        // RFC 9449 §7: a bound token only with the DPoP scheme and a proof by its key for this request.
        if let bound = grant.boundKey {
            guard scheme == "dpop", case .success(let thumbprint) = await checkProof(dpop, method: method, path: "/userinfo", accessToken: token),
                thumbprint == bound
            else {
                return Reply.bearerError(scheme: "DPoP")
            }
        } else if scheme != "bearer" {
            return Reply.bearerError()
        }
        var claims: [String: JSONValue] = ["sub": .string(user.subject)]
        if grant.scope.contains("profile") { claims["name"] = .string(user.name) }
        if grant.scope.contains("email") {
            claims["email"] = .string(user.email)
            claims["email_verified"] = .bool(true)
        }
        return Reply.json(.object(claims))
    }
}
