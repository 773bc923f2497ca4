import Crypto
import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// The token endpoint: client authentication, code redemption, refresh, and the ID tokens (with the
/// faults that break them).
extension Provider {
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
        case .success(let authenticated): client = authenticated
        case .failure(let failure): return failure.response
        }
        if profile.uaePassOptions?.requiresClientSecret == true, client.authentication == .none {
            return Reply.oauthError(
                .unauthorized, "invalid_client", "this provider authenticates clients with client_secret_basic; a public client cannot redeem")
        }
        var proofKey: String?
        if dpop == nil, profile.fapi2 {
            return Reply.oauthError(.badRequest, profile.missingDPoPError, "a DPoP proof is required at the token endpoint")
        }
        if dpop != nil || profile.fapi2 {
            switch await checkProof(dpop, method: "POST", path: "/token", accessToken: nil) {
            case .success(let thumbprint): proofKey = thumbprint
            case .failure(let refusal): return await proofRefused(refusal)
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
        case "refresh_token" where !profile.issuesRefreshTokens:
            // The provider's contract: its token endpoint takes no refresh grant (Singpass: authorization_code only).
            return Reply.oauthError(.badRequest, "unsupported_grant_type", "this provider issues no refresh tokens")
        case "refresh_token": return await refresh(form: form, client: client, faults: faults, proofKey: proofKey)
        case "client_credentials": return await clientCredentials(form: form, client: client)
        default: return Reply.oauthError(.badRequest, "unsupported_grant_type", "use authorization_code, refresh_token or client_credentials")
        }
    }

    struct ClientAuthenticationFailure: Error {
        let response: Response
    }

    /// Authenticates the client by the method it is registered for (only `private_key_jwt` under FAPI 2.0).
    func authenticate(form: [String: String], authorization: String?) async -> Result<EmulatorConfiguration.Client, ClientAuthenticationFailure> {
        switch await authenticateAnyMethod(form: form, authorization: authorization) {
        case .success(let client) where profile.fapi2 && client.authentication != .privateKeyJWT:
            return .failure(
                ClientAuthenticationFailure(
                    response: Reply.oauthError(.unauthorized, "invalid_client", "this provider authenticates clients only by private_key_jwt")
                ))
        case let result:
            return result
        }
    }

    private func authenticateAnyMethod(form: [String: String], authorization: String?) async -> Result<
        EmulatorConfiguration.Client, ClientAuthenticationFailure
    > {
        let invalid = ClientAuthenticationFailure(
            response: Reply.oauthError(.unauthorized, "invalid_client", "client authentication failed", basicChallenge: authorization != nil))
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
    func authenticateAssertion(form: [String: String], authorization: String?) async -> Result<
        EmulatorConfiguration.Client, ClientAuthenticationFailure
    > {
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
        let policy = profile.fapi2 ? ClientAssertion.Policy.fapi2(issuer: issuer.issuer) : .lenient(issuer: issuer.issuer)
        switch await ClientAssertion.verify(assertion, jwks: client.signingJWKS, clientID: clientID, policy: policy) {
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

    /// `grant_type=client_credentials` for a confidential client: an access token for the client itself,
    /// with the scopes asked for (Norwegian BankID's `openid permissions/client` for its permissions API).
    func clientCredentials(form: [String: String], client: EmulatorConfiguration.Client) async -> Response {
        guard client.authentication != .none else {
            return Reply.oauthError(.unauthorized, "unauthorized_client", "client_credentials is for confidential clients")
        }
        let scopes = Set((form["scope"] ?? "").split(separator: " ").map(String.init))
        let token = await state.issueClientToken(clientID: client.clientID, scopes: scopes, lifetime: accessTokenLifetime)
        return Reply.json(
            .object([
                "access_token": .string(token), "token_type": .string("Bearer"), "expires_in": .number(accessTokenLifetime),
                "scope": .string(scopes.sorted().joined(separator: " ")),
            ]))
    }

    func refresh(form: [String: String], client: EmulatorConfiguration.Client, faults: Set<Fault>, proofKey: String?) async -> Response {
        await state.countRefreshRequest()
        if let refreshToken = form["refresh_token"], let (family, owner) = await state.rotatedFamily(of: refreshToken), owner == client.clientID {
            // A token already rotated away came back: under RFC 9700 §4.14.2 the whole family goes.
            if configuration.refreshTokenReuse == .revokesFamily { await state.revokeFamily(family) }
            return Reply.oauthError(.badRequest, "invalid_grant", "the refresh token was already used")
        }
        guard let refreshToken = form["refresh_token"], let grant = await state.grant(forRefreshToken: refreshToken),
            grant.clientID == client.clientID
        else {
            return Reply.oauthError(.badRequest, "invalid_grant", "unknown or revoked refresh token")
        }
        if let bound = grant.boundKey, bound != proofKey {
            return Reply.oauthError(.badRequest, "invalid_grant", "the refresh token is bound to a DPoP key; prove it")
        }
        await state.rotateRefreshToken(refreshToken)
        return await issue(grant, client: client, code: nil, faults: faults, proofKey: proofKey)
    }

    /// An RFC 9068 access token when ``EmulatorConfiguration/accessTokenAudience`` is set; nil for an opaque one.
    func jwtAccessToken(_ grant: ProviderState.Grant, client: EmulatorConfiguration.Client) async throws -> String? {
        guard let audience = configuration.accessTokenAudience else { return nil }
        let now = clock.now().timeIntervalSince1970.rounded(.down)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer.issuer), "sub": .string(grant.subject), "aud": .string(audience), "client_id": .string(client.clientID),
            "iat": .number(now), "exp": .number(now + accessTokenLifetime), "jti": .string(UUID().uuidString),
            "scope": .string(grant.scope.joined(separator: " ")),
        ]
        // RFC 9449 §6.1: a DPoP-bound JWT access token names its key's thumbprint.
        if let bound = grant.boundKey { claims["cnf"] = .object(["jkt": .string(bound)]) }
        return try await keys.sign(claims, algorithm: client.idTokenAlgorithm, type: "at+jwt")
    }

    /// The `sub` this provider gives a user in its ID tokens and userinfo: the contract's prefix (UAE Pass:
    /// `UAEPASS/`) before the user's identifier, else the identifier itself.
    func providerSubject(_ subject: String) -> String {
        (profile.contract?.text(.subjectPrefix) ?? "") + subject
    }

    /// Seconds an access token lives: the profile's (ID.me: 5 minutes), else the configuration's.
    var accessTokenLifetime: TimeInterval { profile.effectiveAccessTokenLifetime ?? configuration.tokenLifetime }

    /// The issuer that faults put where the emulator's own belongs.
    static let foreignIssuer = "https://issuer.invalid"

    /// Issues tokens for a grant; `code` is nil for a refresh (whose ID token carries no nonce).
    func issue(_ grant: ProviderState.Grant, client: EmulatorConfiguration.Client, code: String?, faults: Set<Fault>, proofKey: String?) async
        -> Response
    {
        var grant = grant
        grant.boundKey = proofKey
        let idToken: String
        let tokens: (access: String, refresh: String?)
        do {
            let access = try await jwtAccessToken(grant, client: client)
            tokens = await state.issueTokens(
                for: grant, code: code, lifetime: accessTokenLifetime, refresh: profile.issuesRefreshTokens, access: access)
            idToken = try await signIDToken(
                idTokenClaims(grant, client: client, accessToken: tokens.access, code: code, faults: faults), client: client, faults: faults)
        } catch {
            return Reply.oauthError(.internalServerError, "server_error", "the ID token could not be signed")
        }
        var body: [String: JSONValue] = [
            "access_token": .string(tokens.access), "token_type": .string(proofKey == nil ? "Bearer" : "DPoP"),
            "expires_in": .number(accessTokenLifetime), "id_token": .string(idToken), "scope": .string(grant.scope.joined(separator: " ")),
        ]
        // UAE Pass's documented token response: access_token, scope, token_type, expires_in (no ID token).
        if profile.uaePassOptions?.issuesIDToken == false { body["id_token"] = nil }
        if let refreshToken = tokens.refresh { body["refresh_token"] = .string(refreshToken) }
        return Reply.json(.object(body))
    }

    /// The implicit response (`response_type=id_token token`): the access token and an ID token carrying
    /// the nonce and `at_hash`, sent to the client in the fragment or by form_post. No refresh token.
    func finishImplicit(requestID: String, pending: ProviderState.Pending, subject: String, acr: String?, redirect: AuthorizationRedirect) async
        -> Response
    {
        guard let client = configuration.client(pending.clientID), let grant = await state.issueImplicit(for: requestID, subject: subject, acr: acr)
        else {
            return Reply.page(.badRequest, title: "Expired", message: "This sign-in request is unknown or already used.")
        }
        let faults = await faults(for: pending)
        do {
            let access = try await jwtAccessToken(grant, client: client)
            let tokens = await state.issueTokens(for: grant, code: nil, lifetime: accessTokenLifetime, refresh: false, access: access)
            let idToken = try await signIDToken(
                idTokenClaims(grant, client: client, accessToken: tokens.access, code: nil, implicit: true, faults: faults), client: client,
                faults: faults
            )
            return redirect.success([
                ("access_token", tokens.access), ("token_type", "Bearer"), ("id_token", idToken), ("expires_in", String(Int(accessTokenLifetime))),
            ])
        } catch {
            return redirect.error("server_error", "the ID token could not be signed")
        }
    }

    /// `code` is nil for a refresh (whose ID token carries no nonce) and for an implicit response (which does).
    func idTokenClaims(
        _ grant: ProviderState.Grant, client: EmulatorConfiguration.Client, accessToken: String, code: String?, implicit: Bool = false,
        faults: Set<Fault>
    ) -> [String: JSONValue] {
        func halfHash(_ value: String) -> JSONValue { .string(Base64URL.encode(Array(SHA256.hash(data: Data(value.utf8))).prefix(16))) }
        let now = clock.now().timeIntervalSince1970.rounded(.down)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer.issuer), "sub": .string(providerSubject(grant.subject)), "aud": .string(client.clientID),
            "iat": .number(now), "exp": .number(now + accessTokenLifetime),
            "auth_time": .number(grant.authTime.timeIntervalSince1970.rounded(.down)), "at_hash": halfHash(accessToken),
        ]
        if let acr = grant.acr { claims["acr"] = .string(acr) }
        if let attributes = subjectAttributes(grant) { claims["sub_attributes"] = .object(attributes) }
        if client.backChannelLogoutSession { claims["sid"] = .string(grant.family) }
        if let code {
            claims["c_hash"] = halfHash(code)
            if let nonce = grant.nonce { claims["nonce"] = .string(nonce) }
        } else if implicit {
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
        var signed = try await keys.sign(claims, algorithm: client.idTokenAlgorithm)
        if faults.contains(.badSignature), let dot = signed.lastIndex(of: "."),
            var signature = Base64URL.decode(String(signed[signed.index(after: dot)...])), !signature.isEmpty
        {
            signature[signature.startIndex] ^= 0x01
            signed = signed[...dot] + Base64URL.encode(signature)
        }
        return try encryptIfRegistered(signed, client: client)
    }

    /// Signed, then encrypted (OpenID Connect Core §10.2) to the client's `use: enc` key when it
    /// registered one, as Singpass encrypts every ID token; the JWE header names the key's `kid` and
    /// `cty: JWT`.
    func encryptIfRegistered(_ signed: String, client: EmulatorConfiguration.Client) throws -> String {
        guard let key = client.keys(use: "enc").first else { return signed }
        let alg: String =
            if case .string(let named)? = key["alg"] { named } else if key["kty"] == .string("RSA") { "RSA-OAEP-256" } else { "ECDH-ES+A256KW" }
        return try CompactJWE.encrypt(
            Data(signed.utf8), to: key, alg: alg,
            enc: client.idTokenEncryption ?? profile.contract?.text(.idTokenContentEncryption) ?? "A256CBC-HS512",
            header: ["cty": .string("JWT")])
    }

    /// Singpass's `sub_attributes` for the identity scopes granted (its contract's `subjectAttributes`):
    /// `user.identity` gives the account type, the identity number and its country, `name`, `email` and
    /// `mobileno` the like-named attribute. Nil without the term or without such a scope.
    func subjectAttributes(_ grant: ProviderState.Grant) -> [String: JSONValue]? {
        guard profile.contract?.flag(.subjectAttributes) == true, let user = configuration.users.first(where: { $0.subject == grant.subject })
        else { return nil }
        var attributes: [String: JSONValue] = [:]
        if grant.scope.contains("user.identity") {
            // An emulator's made-up identity number, in the NRIC's shape (a letter, seven digits, a letter).
            let digits = SHA256.hash(data: Data(user.subject.utf8)).prefix(7).map { String($0 % 10) }.joined()
            attributes["account_type"] = .string("standard")
            attributes["identity_number"] = .string("S" + digits + "D")
            attributes["identity_coi"] = .string("SG")
        }
        if grant.scope.contains("name") { attributes["name"] = .string(user.name) }
        if grant.scope.contains("email") { attributes["email"] = .string(user.email) }
        if grant.scope.contains("mobileno") { attributes["mobileno"] = .string("+6591234567") }
        return attributes.isEmpty ? nil : attributes
    }
}
