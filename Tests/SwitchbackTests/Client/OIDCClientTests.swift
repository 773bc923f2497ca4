import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// The client end to end against a scripted provider: request, callback, exchange, refresh, userinfo.
@Suite("OIDC client")
struct OIDCClientTests {
    static func query(_ url: URL) -> [String: String] {
        let pairs = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return Dictionary(pairs.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    static func callback(
        _ session: AuthorizationSession, code: String = "SplxlOBeZQQYbYS6WxSbIA", state: String? = nil, iss: String = StubProvider.issuer
    ) -> URL {
        let escapedIss = iss.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return URL(string: "\(StubProvider.redirectURI)?code=\(code)&state=\(state ?? session.state)&iss=\(escapedIss)")!
    }

    /// Signs in once, returning the provider, client and credential.
    static func signIn(_ provider: StubProvider, client: OIDCClient) async throws -> (AuthorizationSession, Credential) {
        let session = try await client.prepareAuthorization()
        try await provider.setTokens(claims: provider.validClaims(nonce: session.nonce))
        let credential = try await client.completeAuthorization(.redirect(callback(session)), session: session)
        return (session, credential)
    }

    @Test("the authorization request carries code, PKCE S256, state and nonce, all fresh")
    func authorizationRequest() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let session = try await client.prepareAuthorization()
        let query = Self.query(session.authorizationURL)
        #expect(session.authorizationURL.absoluteString.hasPrefix("\(StubProvider.issuer)/authorize?"))
        #expect(query["response_type"] == "code")
        #expect(query["client_id"] == StubProvider.clientID)
        #expect(query["redirect_uri"] == StubProvider.redirectURI.absoluteString)
        #expect(query["scope"] == "openid profile")
        #expect(query["state"] == session.state)
        #expect(query["nonce"] == session.nonce)
        #expect(query["code_challenge_method"] == "S256")
        #expect(query["code_challenge"] == session.pkce.challenge)
        #expect(session.pkce.challenge == (try PKCE(verifier: session.pkce.verifier)).challenge)
        #expect(session.state.count == 43 && session.nonce.count == 43)
        let second = try await client.prepareAuthorization()
        #expect(second.state != session.state && second.nonce != session.nonce && second.pkce.verifier != session.pkce.verifier)
    }

    @Test("options: acr_values, max_age, claims, prompt and provider extras are sent; reserved names are refused")
    func authorizationOptions() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let session = try await client.prepareAuthorization(
            AuthorizationOptions(
                responseMode: .formPost, acrValues: ["urn:eid:high"], uiLocales: ["ar", "en"], loginHint: "784-1990-1234567-1",
                prompt: ["login"], maxAge: 300, claims: .object(["id_token": .object(["email": .null])]),
                extraParameters: [("app_callback_uri", "https://app.example.com/resume")]
            ))
        let query = Self.query(session.authorizationURL)
        #expect(query["response_mode"] == "form_post")
        #expect(query["acr_values"] == "urn:eid:high")
        #expect(query["ui_locales"] == "ar en")
        #expect(query["login_hint"] == "784-1990-1234567-1")
        #expect(query["prompt"] == "login")
        #expect(query["max_age"] == "300")
        #expect(query["claims"] == #"{"id_token":{"email":null}}"#)
        #expect(query["app_callback_uri"] == "https://app.example.com/resume")
        #expect(session.maxAge == 300 && session.responseMode == .formPost)
        for reserved in ["state", "redirect_uri", "code_challenge", "nonce"] {
            await expectCode(.invalidConfiguration) {
                try await client.prepareAuthorization(AuthorizationOptions(extraParameters: [(reserved, "attacker")]))
            }
        }
    }

    @Test("PAR is used when offered: the front channel carries only client_id and request_uri")
    func pushedWhenOffered() async throws {
        let provider = try await StubProvider()
        provider.metadata.pushedAuthorizationRequestEndpoint = URL(string: "\(StubProvider.issuer)/par")!
        let session = try await provider.client().prepareAuthorization()
        #expect(Self.query(session.authorizationURL) == ["client_id": StubProvider.clientID, "request_uri": "urn:ietf:params:oauth:request_uri:abc"])
        #expect(session.requestURI == "urn:ietf:params:oauth:request_uri:abc")
        let pushed = try #require(provider.transport.requests.first { $0.url.path == "/par" })
        let fields = Dictionary(
            FormEncoding.decode(String(decoding: pushed.body ?? Data(), as: UTF8.self), plusIsSpace: true) ?? [], uniquingKeysWith: { a, _ in a })
        #expect(fields["state"] == session.state)
        #expect(fields["code_challenge"] == session.pkce.challenge)
    }

    @Test("PAR policy: required by the provider but disabled, or demanded without an endpoint, is parRequired")
    func parPolicy() async throws {
        let provider = try await StubProvider()
        await expectCode(.parRequired) { try await provider.client(par: .always).prepareAuthorization() }
        provider.metadata.pushedAuthorizationRequestEndpoint = URL(string: "\(StubProvider.issuer)/par")!
        provider.metadata.requirePushedAuthorizationRequests = true
        await expectCode(.parRequired) { try await provider.client(par: .never).prepareAuthorization() }
        let session = try await provider.client(par: .whenOffered).prepareAuthorization()
        #expect(session.requestURI != nil)
    }

    @Test("response_type=code end to end: the code is redeemed with the session's verifier and the ID token validated")
    func codeFlowEndToEnd() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (session, credential) = try await Self.signIn(provider, client: client)
        #expect(credential.accessToken == "at-SlAV32hkKG")
        #expect(credential.refreshToken == "rt-8xLOxBtZp8")
        #expect(credential.subject == "user-1")
        #expect(credential.issuer == StubProvider.issuer)
        #expect(credential.expiresAt == provider.clock.now().addingTimeInterval(3600))
        #expect(credential.scopes == ["openid", "profile"])
        let tokenRequest = try #require(provider.tokenRequests.first)
        let body = String(decoding: tokenRequest.body ?? Data(), as: UTF8.self)
        #expect(body.contains("code_verifier=\(session.pkce.verifier)"))
        #expect(body.contains("code=SplxlOBeZQQYbYS6WxSbIA"))
    }

    @Test("a callback with the wrong state or iss is refused before any code is redeemed")
    func callbackChecksComeFirst() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let session = try await client.prepareAuthorization()
        try await provider.setTokens(claims: provider.validClaims(nonce: session.nonce))
        await expectCode(.stateMismatch) {
            try await client.completeAuthorization(.redirect(Self.callback(session, state: "forged")), session: session)
        }
        await expectCode(.issuerParameterMismatch) {
            try await client.completeAuthorization(.redirect(Self.callback(session, iss: "https://evil.example")), session: session)
        }
        let lookalike = URL(string: "com.example.app.evil:/oauth/callback?code=c&state=\(session.state)")!
        await expectCode(.redirectURIMismatch) { try await client.completeAuthorization(.redirect(lookalike), session: session) }
        #expect(provider.tokenRequests.isEmpty)
    }

    @Test("an ID token with a bad signature is rejected even though it came from the token endpoint")
    func badSignatureFromTokenEndpoint() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let session = try await client.prepareAuthorization()
        let forger = try await TestTokenSigner(.rs256, keyID: "key-1")
        let forged = try await forger.sign(provider.validClaims(nonce: session.nonce))
        provider.tokenResponse = StubTransport.json(200, #"{"access_token":"at","token_type":"Bearer","id_token":"\#(forged)"}"#)
        await expectCode(.signatureInvalid) { try await client.completeAuthorization(.redirect(Self.callback(session)), session: session) }
    }

    @Test("the ID token must carry the nonce of this session")
    func nonceOfThisSession() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let session = try await client.prepareAuthorization()
        try await provider.setTokens(claims: provider.validClaims(nonce: "nonce-of-another-session"))
        await expectCode(.nonceMismatch) { try await client.completeAuthorization(.redirect(Self.callback(session)), session: session) }
    }

    @Test("a token response without id_token is idTokenMissing")
    func idTokenMissing() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let session = try await client.prepareAuthorization()
        provider.tokenResponse = StubTransport.json(200, #"{"access_token":"at","token_type":"Bearer"}"#)
        await expectCode(.idTokenMissing) { try await client.completeAuthorization(.redirect(Self.callback(session)), session: session) }
    }

    @Test("required acr from configuration is enforced on sign-in")
    func requiredACROnSignIn() async throws {
        let provider = try await StubProvider()
        let client = provider.client(acr: ["urn:eid:high"])
        let session = try await client.prepareAuthorization()
        try await provider.setTokens(claims: provider.validClaims(nonce: session.nonce))
        await expectCode(.acrNotSatisfied) { try await client.completeAuthorization(.redirect(Self.callback(session)), session: session) }
    }

    @Test("refresh token → new access token → userinfo")
    func refreshThenUserInfo() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (_, credential) = try await Self.signIn(provider, client: client)
        provider.tokenResponse = StubTransport.json(200, #"{"access_token":"at-2","token_type":"Bearer","expires_in":60}"#)
        let refreshed = try await client.refresh(credential)
        #expect(refreshed.accessToken == "at-2")
        #expect(refreshed.refreshToken == credential.refreshToken)
        #expect(refreshed.idToken == credential.idToken)
        provider.userInfoResponse = StubTransport.json(200, #"{"sub":"user-1","name":"Alice"}"#)
        let claims = try await client.userInfo(for: refreshed)
        #expect(claims["name"] == .string("Alice"))
        let request = try #require(provider.transport.requests.last)
        #expect(request.url.path == "/userinfo")
        #expect(request.headers["Authorization"] == "Bearer at-2")
    }

    @Test("userinfo with the access token in a form body (RFC 6750 §2.2)")
    func userInfoFormBody() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (_, credential) = try await Self.signIn(provider, client: client)
        provider.userInfoResponse = StubTransport.json(200, #"{"sub":"user-1","email":"alice@example.com"}"#)
        let claims = try await client.userInfo(for: credential, placement: .formBody)
        #expect(claims["email"] == .string("alice@example.com"))
        let request = try #require(provider.transport.requests.last)
        #expect(request.method == .post)
        #expect(request.headers["Authorization"] == nil)
        #expect(String(decoding: request.body ?? Data(), as: UTF8.self) == "access_token=at-SlAV32hkKG")
    }

    @Test("a userinfo identity keeps its subject across a refresh: an ID token there for another subject is rejected")
    func refreshedUserInfoIdentity() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (_, signedIn) = try await Self.signIn(provider, client: client)
        var credential = signedIn
        credential.idToken = nil
        credential.idTokenClaims = nil
        credential.identitySource = .userInfo
        credential.userInfoClaims = ["sub": .string("user-1")]
        var claims = provider.validClaims()
        claims["nonce"] = nil
        claims["sub"] = .string("someone-else")
        try await provider.setTokens(claims: claims, accessToken: "at-2")
        await expectCode(.refreshedIDTokenMismatch) { try await client.refresh(credential) }
    }

    @Test("a refresh whose new ID token cannot be checked (keys rotated, JWKS unreachable) keeps the rotated refresh token and the old identity")
    func refreshWithUnreachableKeys() async throws {
        let provider = try await StubProvider()
        let offline = LockedValue(false)
        let transport = StubTransport { request in
            if request.url.path == "/jwks", offline.withLock({ $0 }) { throw URLError(.notConnectedToInternet) }
            return try await provider.transport.send(request)
        }
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: StubProvider.clientID, redirectURI: StubProvider.redirectURI, pushedAuthorization: .never),
            provider: .static(provider.metadata), transport: transport, clock: provider.clock)
        let (_, credential) = try await Self.signIn(provider, client: client)
        // The provider rotated its signing key; the new key's JWKS cannot be fetched now.
        let rotated = try await TestTokenSigner(.rs256, keyID: "key-2")
        var claims = provider.validClaims()
        claims["nonce"] = nil
        let idToken = try await rotated.sign(claims)
        provider.tokenResponse = StubTransport.json(
            200, #"{"access_token":"at-2","token_type":"Bearer","expires_in":60,"refresh_token":"rt-2","id_token":"\#(idToken)"}"#)
        offline.withLock { $0 = true }
        let refreshed = try await client.refresh(credential)
        #expect(refreshed.refreshToken == "rt-2", "the rotated refresh token is not lost")
        #expect(refreshed.accessToken == "at-2")
        #expect(refreshed.idToken == credential.idToken, "the unchecked ID token is set aside")
        #expect(refreshed.subject == credential.subject)
        // A new ID token that is checked and fails still fails.
        offline.withLock { $0 = false }
        let forged = try await TestTokenSigner(.rs256, keyID: "key-1")
        let badToken = try await forged.sign(claims)
        provider.tokenResponse = StubTransport.json(
            200, #"{"access_token":"at-3","token_type":"Bearer","expires_in":60,"refresh_token":"rt-3","id_token":"\#(badToken)"}"#)
        await #expect(throws: SwitchbackError.self) { try await client.refresh(refreshed) }
    }

    @Test("a refreshed ID token that changed sub is rejected; one that kept it replaces the old")
    func refreshedIDToken() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (_, credential) = try await Self.signIn(provider, client: client)
        var claims = provider.validClaims()
        claims["nonce"] = nil
        claims["sub"] = .string("someone-else")
        try await provider.setTokens(claims: claims, accessToken: "at-2")
        await expectCode(.refreshedIDTokenMismatch) { try await client.refresh(credential) }
        claims["sub"] = .string("user-1")
        try await provider.setTokens(claims: claims, accessToken: "at-3", refreshToken: "rt-2")
        let refreshed = try await client.refresh(credential)
        #expect(refreshed.refreshToken == "rt-2")
        #expect(refreshed.idToken != credential.idToken)
    }

    @Test("refreshing a credential without a refresh token is noRefreshToken")
    func noRefreshToken() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let session = try await client.prepareAuthorization()
        try await provider.setTokens(claims: provider.validClaims(nonce: session.nonce), refreshToken: nil)
        let credential = try await client.completeAuthorization(.redirect(Self.callback(session)), session: session)
        await expectCode(.noRefreshToken) { try await client.refresh(credential) }
    }

    @Test("userinfo whose sub differs from the ID token's is rejected")
    func userInfoSubjectMismatch() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (_, credential) = try await Self.signIn(provider, client: client)
        provider.userInfoResponse = StubTransport.json(200, #"{"sub":"user-2","name":"Mallory"}"#)
        await expectCode(.userInfoSubjectMismatch) { try await client.userInfo(for: credential) }
        provider.userInfoResponse = StubTransport.json(200, #"{"name":"no sub"}"#)
        await expectCode(.userInfoInvalid) { try await client.userInfo(for: credential) }
        provider.userInfoResponse = StubTransport.json(401, #"{"error":"invalid_token"}"#)
        await expectCode(.userInfoInvalid) { try await client.userInfo(for: credential) }
    }

    @Test("userinfo signed RS256 (application/jwt) is verified with the provider's keys")
    func signedUserInfo() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (_, credential) = try await Self.signIn(provider, client: client)
        let signed = try await provider.signer.sign([
            "sub": .string("user-1"), "iss": .string(StubProvider.issuer), "aud": .string(StubProvider.clientID), "email": .string("a@example.com"),
        ])
        provider.userInfoResponse = StubTransport.json(200, signed, contentType: "application/jwt; charset=utf-8")
        let claims = try await client.userInfo(for: credential)
        #expect(claims["email"] == .string("a@example.com"))

        let forger = try await TestTokenSigner(.rs256, keyID: "key-1")
        provider.userInfoResponse = StubTransport.json(200, try await forger.sign(["sub": .string("user-1")]), contentType: "application/jwt")
        await expectCode(.signatureInvalid) { try await client.userInfo(for: credential) }
        provider.userInfoResponse = StubTransport.json(
            200, try await provider.signer.sign(["sub": .string("user-1"), "aud": .string("another-client")]), contentType: "application/jwt"
        )
        await expectCode(.userInfoInvalid) { try await client.userInfo(for: credential) }
    }

    @Test("a session prepared for another client is refused")
    func sessionForAnotherClient() async throws {
        let provider = try await StubProvider()
        var session = try await provider.client().prepareAuthorization()
        session = AuthorizationSession(
            issuer: session.issuer, clientID: "other", redirectURI: session.redirectURI, state: session.state, nonce: session.nonce,
            pkce: session.pkce, responseMode: session.responseMode, maxAge: nil, requestURI: nil,
            authorizationURL: session.authorizationURL, createdAt: session.createdAt
        )
        await expectCode(.invalidConfiguration) {
            try await provider.client().completeAuthorization(.redirect(Self.callback(session)), session: session)
        }
    }

    @Test("no token, code, secret, state, nonce or verifier appears in any log line or error message")
    func secretsAreRedacted() async throws {
        let sink = CapturingLogHandler.Sink()
        let provider = try await StubProvider()
        let client = provider.client(authentication: .clientSecretBasic(secret: "client-secret-Zq9"), logger: CapturingLogHandler.logger(sink))
        let (session, credential) = try await Self.signIn(provider, client: client)
        provider.tokenResponse = StubTransport.json(200, #"{"access_token":"at-refreshed-Xy7","token_type":"Bearer","refresh_token":"rt-new-Qw3"}"#)
        _ = try await client.refresh(credential)
        provider.tokenResponse = StubTransport.json(400, #"{"error":"invalid_grant"}"#)
        var errors: [String] = []
        do { _ = try await client.refresh(credential) } catch { errors.append("\(error)") }
        do {
            _ = try await client.completeAuthorization(.redirect(Self.callback(session, state: "forged-state-Kk1")), session: session)
        } catch { errors.append("\(error)") }
        let secrets = [
            "at-SlAV32hkKG", "rt-8xLOxBtZp8", "at-refreshed-Xy7", "rt-new-Qw3", "SplxlOBeZQQYbYS6WxSbIA", "client-secret-Zq9",
            session.state, session.nonce, session.pkce.verifier, try #require(credential.idToken), "forged-state-Kk1",
        ]
        #expect(sink.all.count >= 4, "the flow should have logged")
        for secret in secrets {
            #expect(!sink.text.contains(secret), "a log line contains a secret")
            for message in errors { #expect(!message.contains(secret), "an error message contains a secret: \(message)") }
        }
        #expect(!"\(credential)".contains("at-SlAV32hkKG"))
        #expect(!"\(session)".contains(session.pkce.verifier))
    }
}
