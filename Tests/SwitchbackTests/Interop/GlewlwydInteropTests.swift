import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport

/// The client against glewlwyd 2.7.5, a real OpenID provider nobody on this project wrote.
@Suite("Interop with glewlwyd", .serialized, .enabled(if: Glewlwyd.enabled, Glewlwyd.skipReason))
struct GlewlwydInteropTests {
    /// Prepares a request and lets alice sign in; returns the session and where glewlwyd sends the browser.
    private func authorize(_ client: OIDCClient, peer: Glewlwyd.Peer) async throws -> (AuthorizationSession, String) {
        let session = try await client.prepareAuthorization()
        return (session, try await Glewlwyd.login(session.authorizationURL, peer: peer))
    }

    private func signIn(_ client: OIDCClient, peer: Glewlwyd.Peer) async throws -> (AuthorizationSession, String, Credential) {
        let (session, landing) = try await authorize(client, peer: peer)
        let credential = try await client.completeAuthorization(try Glewlwyd.callback(landing), session: session)
        return (session, landing, credential)
    }

    @Test("discovery: glewlwyd's metadata parses, its issuer matches, and it does not promise iss (quirk)")
    func discovery() async throws {
        let peer = try Glewlwyd.require()
        let metadata = try await Glewlwyd.client(peer, clientID: "native-rs").metadata()
        #expect(metadata.issuer == peer.issuer)
        #expect(metadata.pushedAuthorizationRequestEndpoint != nil)
        #expect(metadata.authorizationResponseIssParameterSupported == false)
        #expect(metadata.idTokenSigningAlgValuesSupported?.contains("ES256") == true)
    }

    @Test(
        "code + PKCE S256 + nonce for the RS256 and the ES256 client, ID token verified against glewlwyd's live JWKS, then userinfo",
        arguments: [
            ("native-rs", "RS256", "rs256-"), ("native-es", "ES256", "es256-"),
        ])
    func codeFlow(clientID: String, algorithm: String, kidPrefix: String) async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: clientID)
        let (session, landing, credential) = try await signIn(client, peer: peer)
        #expect(Self.query(session.authorizationURL)["code_challenge_method"] == "S256")
        #expect(Self.query(session.authorizationURL)["nonce"] == session.nonce)
        let idToken = try #require(credential.idToken)
        let header = try CompactJWS(idToken, malformed: .idTokenMalformed).header
        #expect(header.alg == algorithm)
        #expect(header.kid?.hasPrefix(kidPrefix) == true)
        #expect(credential.idTokenClaims?.nonce == session.nonce)
        #expect(credential.idTokenClaims?.aud == [clientID])
        // glewlwyd sends the RFC 9207 iss parameter in every response, and it was checked.
        #expect(Self.query(try #require(URL(string: landing)))["iss"] == peer.issuer)
        let userInfo = try await client.userInfo(for: credential)
        #expect(userInfo["name"] == .string("Alice Example"))
        #expect(userInfo["sub"] == credential.idTokenClaims?.sub.map(JSONValue.string))
    }

    @Test("PAR: the request is pushed, the browser gets only client_id and request_uri, and the sign-in completes")
    func pushedAuthorizationRequest() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "native-rs", par: .always)
        let (session, _, credential) = try await signIn(client, peer: peer)
        let requestURI = try #require(session.requestURI)
        #expect(requestURI.hasPrefix("urn:ietf:params:oauth:request_uri:"))
        #expect(Set(Self.query(session.authorizationURL).keys) == ["client_id", "request_uri"])
        #expect(credential.subject != nil)
    }

    @Test("refresh: a new access token that works at userinfo; glewlwyd sends no new ID token, the old one is kept")
    func refresh() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "native-es")
        let (_, _, credential) = try await signIn(client, peer: peer)
        let refreshed = try await client.refresh(credential)
        #expect(refreshed.accessToken != credential.accessToken)
        #expect(refreshed.idToken == credential.idToken)
        #expect(refreshed.refreshToken == credential.refreshToken)
        let userInfo = try await client.userInfo(for: refreshed)
        #expect(userInfo["email"] == .string("alice@example.com"))
        // Quirk: glewlwyd 2.7.5 accepts only the Authorization header; a form-body token gets 401,
        // surfaced as a typed error carrying the status.
        do {
            _ = try await client.userInfo(for: refreshed, placement: .formBody)
            Issue.record("glewlwyd was expected to refuse a form-body access token")
        } catch let error as SwitchbackError {
            #expect(error.code == .userInfoInvalid)
            #expect(error.httpStatus == 401)
        }
    }

    @Test(
        "after sign-in: 20 callers of an expired credential share one refresh (glewlwyd does not rotate its refresh tokens); sign-out removes it, reports that glewlwyd publishes no revocation endpoint, and builds its end_session request"
    )
    func afterSignIn() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "native-es")
        let (_, _, credential) = try await signIn(client, peer: peer)
        var expired = credential
        expired.expiresAt = Date().addingTimeInterval(-1)
        let store = InMemoryCredentialStore()
        let manager = CredentialManager(client: client, store: store, key: "main")
        try await manager.save(expired)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await manager.validCredential().accessToken } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1)
        #expect(tokens.first != credential.accessToken)
        #expect(try await client.userInfo(for: try #require(await store.load(key: "main")))["email"] == .string("alice@example.com"))

        let signedOut = try await manager.signOut(signedInWith: .systemBrowser)
        #expect(await store.load(key: "main") == nil)
        #expect(signedOut.revocationError?.code == .invalidConfiguration, "glewlwyd 2.7.5 advertises no revocation_endpoint")
        let endSession = try #require(signedOut.endSession)
        #expect(endSession.url.absoluteString.hasPrefix(peer.issuer + "/end_session?id_token_hint="))
        let answer = try await URLSessionTransport().send(HTTPRequest(method: .get, url: endSession.url))
        #expect(answer.status < 400, "glewlwyd accepts the request it is sent: HTTP \(answer.status)")
    }

    @Test("a wrong PKCE verifier surfaces glewlwyd's refusal as a typed error (403 invalid_code, quirk)")
    func wrongVerifier() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "native-rs")
        let (session, landing) = try await authorize(client, peer: peer)
        let tampered = AuthorizationSession(
            issuer: session.issuer, clientID: session.clientID, redirectURI: session.redirectURI, state: session.state,
            nonce: session.nonce, pkce: try PKCE(verifier: String(repeating: "w", count: 43)), responseMode: session.responseMode,
            maxAge: nil, requestURI: nil, authorizationURL: session.authorizationURL, createdAt: session.createdAt
        )
        do {
            _ = try await client.completeAuthorization(try Glewlwyd.callback(landing), session: tampered)
            Issue.record("a wrong verifier must not yield tokens")
        } catch let error as SwitchbackError {
            #expect(error.code == .tokenEndpointError)
            #expect(error.httpStatus == 403)
            #expect(error.oauthError?.error == "invalid_code")
        }
        // glewlwyd does not use up the code on a wrong verifier: the right one still works.
        let credential = try await client.completeAuthorization(try Glewlwyd.callback(landing), session: session)
        #expect(credential.subject != nil)
    }

    @Test("glewlwyd's iss parameter is checked: a callback naming another issuer is refused and nothing is redeemed")
    func issParameterChecked() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "native-rs")
        let (session, landing) = try await authorize(client, peer: peer)
        #expect(Self.query(try #require(URL(string: landing)))["iss"] == peer.issuer)
        var components = try #require(URLComponents(string: landing))
        components.queryItems = components.queryItems?.map { $0.name == "iss" ? URLQueryItem(name: "iss", value: "http://127.0.0.1:1/api/oidc") : $0 }
        let forged = try #require(components.string)
        #expect(forged != landing)
        await expectCode(.issuerParameterMismatch) { try await client.completeAuthorization(try Glewlwyd.callback(forged), session: session) }
        // The code was not redeemed: the genuine callback still completes.
        let credential = try await client.completeAuthorization(try Glewlwyd.callback(landing), session: session)
        #expect(credential.subject != nil)
    }

    @Test("form_post: glewlwyd double-encodes iss (quirk); the client refuses the mismatch rather than loosening RFC 9207")
    func formPostDoubleEncodedIss() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "native-rs")
        let session = try await client.prepareAuthorization(AuthorizationOptions(responseMode: .formPost))
        let line = try await Glewlwyd.login(session.authorizationURL, peer: peer)
        let separator = try #require(line.firstIndex(of: "?"))
        let action = try #require(URL(string: String(line[..<separator])))
        let body = Data(line[line.index(after: separator)...].utf8)
        await expectCode(.issuerParameterMismatch) { try await client.completeAuthorization(.formPost(action, body: body), session: session) }
    }

    @Test("client_secret_basic at the token endpoint with the confidential client")
    func clientSecretBasic() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "backend", authentication: .clientSecretBasic(secret: peer.backendSecret))
        let (_, _, credential) = try await signIn(client, peer: peer)
        #expect(credential.idTokenClaims?.aud == ["backend"])
        let wrong = Glewlwyd.client(peer, clientID: "backend", authentication: .clientSecretBasic(secret: "not-the-secret"))
        let (session, landing) = try await authorize(wrong, peer: peer)
        await expectCode(.tokenEndpointError) { try await wrong.completeAuthorization(try Glewlwyd.callback(landing), session: session) }
    }

    static func query(_ url: URL) -> [String: String] {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }
}
