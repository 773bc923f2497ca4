import Crypto
import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// The provider's endpoints. Each handler reads the request, asks `ProviderState`, and answers the
/// way the specifications prescribe, including for malformed input.
struct Provider: Sendable {
    let configuration: EmulatorConfiguration
    let profile: Profile
    let keys: SigningKeys
    let state: ProviderState
    /// The provider's time (``Emulator/start(profile:configuration:host:port:clock:shutdownSignals:logger:)``).
    let clock: any WallClock
    let issuer: IssuerBox
    let faults: FaultBoard
    static let maximumBody = 64 * 1024

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/.well-known/openid-configuration") { _, _ in
            // UAE Pass documents its endpoints and publishes no discovery document.
            guard profile.uaePassOptions.map(\.servesDiscovery) ?? true else {
                return Reply.oauthError(
                    .notFound, "not_found", "this provider publishes no discovery document; its endpoints are documented under /idshub/")
            }
            return Reply.json(discoveryDocument())
        }
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
        router.post("/revoke") { request, _ in
            var request = request
            return await revoke(form: try? await request.collectBody(upTo: Self.maximumBody), authorization: request.headers[.authorization])
        }
        router.post("/introspect") { request, _ in
            var request = request
            return await introspect(form: try? await request.collectBody(upTo: Self.maximumBody), authorization: request.headers[.authorization])
        }
        // UAE Pass's documented paths (https://id.uaepass.ae/idshub/{authorize,token,userinfo,logout}).
        router.get("/idshub/authorize") { request, _ in await authorize(query: request.uri.query ?? "", userAgent: request.headers[.userAgent]) }
        router.post("/idshub/token") { request, _ in
            var request = request
            let body = try? await request.collectBody(upTo: Self.maximumBody)
            return await token(form: body, authorization: request.headers[.authorization], dpop: Self.dpopHeader(request.headers))
        }
        router.get("/idshub/userinfo") { request, _ in
            await userInfo(method: "GET", authorization: request.headers[.authorization], dpop: Self.dpopHeader(request.headers), form: nil)
        }
        router.get("/idshub/logout") { request, _ in uaePassLogout(query: request.uri.query ?? "") }
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
            "introspection_endpoint": .string("\(base)/introspect"),
            "revocation_endpoint": .string("\(base)/revoke"),
            "pushed_authorization_request_endpoint": .string("\(base)/par"),
            "end_session_endpoint": .string("\(base)/end_session"),
            "response_types_supported": .array(profile.responseTypes.map(JSONValue.string)),
            "response_modes_supported": .array(profile.acceptedResponseModes.map(JSONValue.string)),
            "grant_types_supported": .array([.string("authorization_code"), .string("refresh_token")]),
            "subject_types_supported": .array([.string("public")]),
            "id_token_signing_alg_values_supported": .array([.string("RS256"), .string("ES256")]),
            "code_challenge_methods_supported": .array([.string("S256")]),
            "token_endpoint_auth_methods_supported": .array(
                (profile.fapi2 ? ["private_key_jwt"] : ["none", "client_secret_basic", "client_secret_post", "private_key_jwt"]).map(JSONValue.string)
            ),
            "require_pushed_authorization_requests": .bool(profile.fapi2),
            "id_token_encryption_alg_values_supported": .array(CompactJWE.keyManagementAlgorithms.sorted().map(JSONValue.string)),
            "id_token_encryption_enc_values_supported": .array(CompactJWE.contentEncryptions.sorted().map(JSONValue.string)),
            "dpop_signing_alg_values_supported": .array([.string("ES256")]),
            "token_endpoint_auth_signing_alg_values_supported": .array(["RS256", "ES256"].map(JSONValue.string)),
            "scopes_supported": .array((profile.contract?.list(.allowedScopes) ?? ["openid", "profile", "email"]).map(JSONValue.string)),
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
            var outcome = ProviderState.PushedRequest.unknown
            if let clientID = parameters["client_id"] { outcome = await state.takePushed(requestURI, clientID: clientID) }
            switch outcome {
            case .taken(let id):
                guard let pending = await state.pending(id) else { break }
                return await begin(pending, requestID: id, userAgent: userAgent)
            case .spent(let pending) where profile.contract?.flag(.redirectsInvalidRequestURI) == true:
                // The provider's contract: an expired or used request goes back to its redirect URI with its state.
                return await authorizationRedirect(for: pending).error("invalid_request_uri", "The request_uri provided is invalid")
            case .spent, .unknown:
                break
            }
            return Reply.page(
                .badRequest, title: "Invalid request", message: "The request_uri is unknown, expired, already used or not this client's.")
        }
        guard !profile.fapi2 else {
            return Reply.page(.badRequest, title: "Invalid request", message: "This provider takes authorization requests only by PAR (request_uri).")
        }
        switch AuthorizationRequest.validate(parameters, configuration: configuration, profile: profile, issuer: issuer.issuer) {
        case .success(let pending):
            return await begin(pending, requestID: await state.begin(pending), userAgent: userAgent)
        case .failure(let refusal):
            return refusal.frontChannelResponse
        }
    }

    /// The first page of a sign-in: the password page, or the hand-off to the authenticator app.
    /// The first page of a sign-in for the browser whose `userAgent` asked (Norwegian BankID's biometrics
    /// need the BankID app on iOS).
    func begin(_ pending: ProviderState.Pending, requestID: String, userAgent: String?) async -> Response {
        switch profile.handOff {
        case .uaePass(let options) where pending.acrValues.contains(UAEPassOptions.onDeviceACR):
            return await uaePassHandOff(pending, requestID: requestID, options: options)
        case .bankIDNorway:
            return await bankIDNorwayHandOff(pending, requestID: requestID, onIOS: UserAgent.isIOS(userAgent))
        case .mitID:
            return await mitIDHandOff(pending, requestID: requestID)
        case .bankIDSweden(let options):
            return await bankIDSwedenHandOff(pending, requestID: requestID, options: options)
        case .singpass:
            return await singpassHandOff(pending, requestID: requestID)
        case .uaePass:
            // The web sign-in: a password (the emulator's convenience), or the identifier and a push to the
            // app on the user's phone with a number to match (UAE Pass's documented web flow).
            let transaction = await state.startTransaction(requestID: requestID, clientID: pending.clientID, acr: UAEPassOptions.webACR)
            var response = Reply.loginPage(requestID: requestID, clientID: pending.clientID, failed: false, otherPhone: transaction.reference)
            setSessionCookie(transaction, on: &response)
            return response
        case nil:
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
        case .success(let client): parameters["client_id"] = client.clientID
        case .failure(let failure): return failure.response
        }
        // RFC 9449 §10.1: a proof at PAR must be valid, and match dpop_jkt when both are sent.
        if let dpop {
            switch await checkProof(dpop, method: "POST", path: "/par", accessToken: nil) {
            case .success(let thumbprint) where parameters["dpop_jkt"] == nil || parameters["dpop_jkt"] == thumbprint:
                parameters["dpop_jkt"] = thumbprint
            case .success:
                return Reply.oauthError(.badRequest, profile.invalidDPoPError, "dpop_jkt names another key than the DPoP proof")
            case .failure(let refusal):
                return await proofRefused(refusal)
            }
        }
        // Singpass (FAPI 2.0): a DPoP proof at PAR, or dpop_jkt when the request carries no proof.
        if profile.fapi2, parameters["dpop_jkt"] == nil {
            return Reply.oauthError(
                .badRequest, profile.missingDPoPError, "a DPoP proof (or dpop_jkt) is required at the pushed authorization request")
        }
        switch AuthorizationRequest.validate(parameters, configuration: configuration, profile: profile, issuer: issuer.issuer) {
        case .success(let pending):
            let uri = await state.push(pending, lifetime: profile.pushedRequestLifetime)
            return Reply.json(.object(["request_uri": .string(uri), "expires_in": .number(profile.pushedRequestLifetime)]), status: .created)
        case .failure(let refusal):
            return refusal.jsonResponse
        }
    }

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
        if await faults(for: pending).contains(.authorizationError) {
            return await refuse(requestID, pending, error: "access_denied", "the user declined")
        }
        let redirect = await authorizationRedirect(for: pending)
        if pending.responseType == "id_token token" {
            return await finishImplicit(requestID: requestID, pending: pending, subject: subject, acr: acr, redirect: redirect)
        }
        guard
            let issued = await state.issueCode(
                for: requestID, subject: subject, acr: acr, lifetime: profile.codeLifetime(configured: configuration.codeLifetime))
        else {
            return Reply.page(.badRequest, title: "Expired", message: "This sign-in request is unknown or already used.")
        }
        return redirect.success(code: issued.code)
    }

    /// Ends a pending request with an error response to the client, in its response mode.
    func refuse(_ requestID: String, _ pending: ProviderState.Pending, error: String = "invalid_request", _ description: String) async -> Response {
        await state.discard(requestID)
        return await authorizationRedirect(for: pending).error(error, description)
    }

    /// Where and how the authorization response for `pending` goes, with the `iss` the faults leave.
    func authorizationRedirect(for pending: ProviderState.Pending) async -> AuthorizationRedirect {
        let faults = await faults(for: pending)
        var responseIssuer: String? = issuer.issuer
        if faults.contains(.wrongIssuerParameter) { responseIssuer = Self.foreignIssuer }
        if faults.contains(.missingIssuerParameter) { responseIssuer = nil }
        return AuthorizationRedirect(
            redirectURI: pending.redirectURI, mode: pending.responseMode, state: pending.state, issuer: responseIssuer,
            tapToReturn: pending.tapToReturn
        )
    }

    func faults(for pending: ProviderState.Pending) async -> Set<Fault> {
        await faults.faults(for: pending.clientID).union(pending.faults)
    }
}
