import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport
import SwitchbackTesting

/// The client's half of DPoP nonces (RFC 9449 §8, §9): one retry with the server's nonce, never a loop,
/// and a nonce taken only from the answer that asks for it.
@Suite("DPoP nonce retry")
struct DPoPNonceRetryTests {
    static let metadata = ProviderMetadata(
        issuer: "https://id.example", authorizationEndpoint: URL(string: "https://id.example/authorize")!,
        tokenEndpoint: URL(string: "https://id.example/token")!, jwksURI: URL(string: "https://id.example/jwks")!)

    static func tokens(_ transport: StubTransport) -> TokenClient {
        TokenClient(
            configuration: ClientConfiguration(clientID: "c", redirectURI: URL(string: "com.example.app:/cb")!, dpop: .perSignIn),
            metadata: metadata, transport: transport, clock: SystemClock(), entropy: SystemEntropy(), logger: .init(label: "test"))
    }

    static func claims(of proof: String?) throws -> [String: JSONValue] {
        let part = try #require(proof?.split(separator: ".").dropFirst().first)
        guard case .object(let claims) = try JSONDecoder().decode(JSONValue.self, from: try #require(Base64URL.decode(part))) else { return [:] }
        return claims
    }

    static let askForNonce = HTTPResponse(
        status: 400, headers: ["content-type": "application/json", "DPoP-Nonce": "eyJ7S_zG.eyJH0-Z.HX4w-7v"],
        body: Data(#"{"error":"use_dpop_nonce","error_description":"Authorization server requires nonce in DPoP proof"}"#.utf8))
    static let granted = StubTransport.json(200, #"{"access_token":"a","token_type":"DPoP","refresh_token":"r2"}"#)

    @Test("the token endpoint's use_dpop_nonce is answered once, with a new proof carrying the nonce (RFC 9449 §8.1's example)")
    func tokenEndpoint() async throws {
        let answers = LockedValue([Self.askForNonce, Self.granted])
        let transport = StubTransport { _ in answers.withLock { $0.removeFirst() } }
        let response = try await Self.tokens(transport).refresh(refreshToken: "r", dpop: DPoPKey())
        #expect(response.accessToken == "a")
        let sent = transport.requests
        #expect(sent.count == 2)
        #expect(try Self.claims(of: sent[0].headers["DPoP"])["nonce"] == nil)
        #expect(try Self.claims(of: sent[1].headers["DPoP"])["nonce"] == .string("eyJ7S_zG.eyJH0-Z.HX4w-7v"))
        #expect(try Self.claims(of: sent[0].headers["DPoP"])["jti"] != Self.claims(of: sent[1].headers["DPoP"])["jti"])
    }

    @Test("the nonce is remembered (RFC 9449 §8.2): the next refresh's first proof carries it, one round trip instead of two")
    func remembered() async throws {
        let answers = LockedValue([Self.askForNonce, Self.granted, Self.granted])
        let transport = StubTransport { _ in answers.withLock { $0.removeFirst() } }
        let tokens = Self.tokens(transport)
        let key = DPoPKey()
        _ = try await tokens.refresh(refreshToken: "r", dpop: key)
        _ = try await tokens.refresh(refreshToken: "r2", dpop: key)
        let sent = transport.requests
        #expect(sent.count == 3)
        #expect(try Self.claims(of: sent[2].headers["DPoP"])["nonce"] == .string("eyJ7S_zG.eyJH0-Z.HX4w-7v"))
    }

    @Test("a resource server's nonce is kept for that origin only, and a newer one from any answer replaces it")
    func rememberedPerOrigin() async throws {
        let nonces = DPoPNonces()
        let api = try #require(URL(string: "https://api.example/orders"))
        nonces.remember(HTTPResponse(status: 200, headers: ["DPoP-Nonce": "n-1"]), from: api)
        #expect(nonces.nonce(for: try #require(URL(string: "https://api.example/other?x=1"))) == "n-1")
        #expect(nonces.nonce(for: try #require(URL(string: "https://api.example:8443/orders"))) == nil)
        #expect(nonces.nonce(for: try #require(URL(string: "https://id.example/token"))) == nil)
        nonces.remember(HTTPResponse(status: 401, headers: ["DPoP-Nonce": "n-2"]), from: api)
        #expect(nonces.nonce(for: api) == "n-2")
        nonces.remember(HTTPResponse(status: 200, headers: ["DPoP-Nonce": "not safe"]), from: api)
        #expect(nonces.nonce(for: api) == "n-2", "a nonce that cannot go in a proof is not kept")

        // Through the client: the second call to the API sends its first proof with the nonce.
        let transport = StubTransport { request in
            let proof = request.headers["DPoP"] ?? ""
            let hasNonce = (try? Self.claims(of: proof)["nonce"]) == .string("api-nonce")
            return hasNonce
                ? StubTransport.json(200, "[]")
                : HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce""#, "DPoP-Nonce": "api-nonce"])
        }
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "c", redirectURI: try #require(URL(string: "com.example.app:/cb"))),
            provider: .static(Self.metadata), transport: transport)
        let credential = Credential(
            issuer: "https://id.example", clientID: "c", accessToken: "at", tokenType: "DPoP", refreshToken: nil, idToken: nil,
            idTokenClaims: nil, expiresAt: nil, scopes: [], dpopKey: DPoPKey())
        #expect(try await client.send(HTTPRequest(method: .get, url: api), authorizedBy: credential).status == 200)
        #expect(try await client.send(HTTPRequest(method: .get, url: api), authorizedBy: credential).status == 200)
        #expect(transport.requests.count == 3)
    }

    @Test("a server that asks again is not asked a third time: the second refusal is the error")
    func onlyOnce() async throws {
        let transport = StubTransport { _ in Self.askForNonce }
        let error = await expectFailure("an endless nonce demand must end") {
            try await Self.tokens(transport).refresh(refreshToken: "r", dpop: DPoPKey())
        }
        #expect(error?.code == .tokenEndpointError)
        #expect(error?.oauthError?.error == "use_dpop_nonce")
        #expect(transport.requests.count == 2)
    }

    @Test("no retry without a DPoP key, without the use_dpop_nonce error, or with a nonce that is not a header-safe token")
    func notAsked() {
        #expect(DPoPKey.nonceRequested(by: Self.askForNonce, resourceServer: false) == "eyJ7S_zG.eyJH0-Z.HX4w-7v")
        let otherError = HTTPResponse(status: 400, headers: ["DPoP-Nonce": "n"], body: Data(#"{"error":"invalid_grant"}"#.utf8))
        #expect(DPoPKey.nonceRequested(by: otherError, resourceServer: false) == nil)
        let badNonce = HTTPResponse(status: 400, headers: ["DPoP-Nonce": "a b\u{7F}"], body: Self.askForNonce.body)
        #expect(DPoPKey.nonceRequested(by: badNonce, resourceServer: false) == nil)
        #expect(DPoPKey.nonceRequested(by: Self.askForNonce, resourceServer: true) == nil, "a resource server asks with 401")
    }

    @Test("an API call to plain http off loopback is refused before anything is sent: the token never travels in clear text")
    func refusesCleartext() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, "[]") }
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "c", redirectURI: try #require(URL(string: "com.example.app:/cb"))),
            provider: .static(Self.metadata), transport: transport)
        let credential = Credential(
            issuer: "https://id.example", clientID: "c", accessToken: "at", tokenType: "Bearer", refreshToken: nil, idToken: nil,
            idTokenClaims: nil, expiresAt: nil, scopes: [])
        await expectCode(.insecureEndpoint) {
            try await client.send(HTTPRequest(method: .get, url: try #require(URL(string: "http://api.example/orders"))), authorizedBy: credential)
        }
        #expect(transport.requests.isEmpty)
        let loopback = try await client.send(
            HTTPRequest(method: .get, url: try #require(URL(string: "http://127.0.0.1:8080/orders"))), authorizedBy: credential)
        #expect(loopback.status == 200)
        #expect(transport.requests.first?.headers["Authorization"] == "Bearer at")
    }

    @Test("an API call: DPoP scheme, a proof binding the token (ath) for this method and URL; a 401 use_dpop_nonce is retried once with the nonce")
    func resourceServer() async throws {
        let api = try #require(URL(string: "https://api.example/orders?page=2"))
        let askForNonce = HTTPResponse(
            status: 401,
            headers: [
                "WWW-Authenticate": #"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof""#,
                "DPoP-Nonce": "rs-nonce",
            ])
        let answers = LockedValue([askForNonce, StubTransport.json(200, "[]")])
        let transport = StubTransport { _ in answers.withLock { $0.removeFirst() } }
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "c", redirectURI: try #require(URL(string: "com.example.app:/cb")), dpop: .perSignIn),
            provider: .static(Self.metadata), transport: transport)
        let credential = Credential(
            issuer: "https://id.example", clientID: "c", accessToken: "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU", tokenType: "DPoP",
            refreshToken: nil, idToken: nil, idTokenClaims: nil, expiresAt: nil, scopes: [], dpopKey: DPoPKey())
        let response = try await client.send(HTTPRequest(method: .delete, url: api), authorizedBy: credential)
        #expect(response.status == 200)
        let sent = transport.requests
        #expect(sent.count == 2)
        for request in sent {
            #expect(request.headers["Authorization"] == "DPoP Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")
            let claims = try Self.claims(of: request.headers["DPoP"])
            #expect(claims["htm"] == .string("DELETE"))
            #expect(claims["htu"] == .string("https://api.example/orders"), "no query in htu (RFC 9449 §4.2)")
            // RFC 9449 §7.1's example: this access token's ath.
            #expect(claims["ath"] == .string("fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"))
        }
        #expect(try Self.claims(of: sent[1].headers["DPoP"])["nonce"] == .string("rs-nonce"))
    }
}
