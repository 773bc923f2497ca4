import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport
import SwitchbackTesting

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The everyday calls: an API request in one call, with one refresh and one retry when the API refuses the token.
@Suite("CredentialManager: API requests")
struct CredentialManagerRequestTests {
    /// The provider of ``CrashWorld`` and an API at `/api` that takes only the newest access token, or
    /// refuses every token when `refuseAll`.
    final class World: @unchecked Sendable {  // @unchecked: `apiCalls` and `refuseAll` are guarded by `lock`.
        let provider = CrashWorld.Provider()
        let disk = CrashWorld.Disk()
        private let lock = NSLock()
        private var calls: [HTTPRequest] = []
        private var refusing = false
        var apiCalls: [HTTPRequest] { lock.withLock { calls } }
        var refuseAll: Bool {
            get { lock.withLock { refusing } }
            set { lock.withLock { refusing = newValue } }
        }

        func manager() -> CredentialManager {
            let transport = StubTransport { [self] request in
                guard request.url.path == "/api" else { return await provider.handle(request) }
                lock.withLock { calls.append(request) }
                let newest = await provider.family("alice").map { "at-\($0.current.split(separator: "-").last ?? "")" }
                let accepted = !refuseAll && request.headers["Authorization"] == "Bearer \(newest ?? "")"
                return accepted
                    ? StubTransport.json(200, "{}")
                    : HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token", error_description="revoked""#])
            }
            let client = OIDCClient(
                configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!, scopes: ["openid"]),
                provider: .static(CrashWorld.metadata), transport: transport)
            return CredentialManager(client: client, store: CrashWorld.Store(disk, CrashWorld.Plan()), key: "alice")
        }

        /// Signs alice in with an access token that is valid by its expiry but that the API no longer takes.
        func signedIn() async throws -> CredentialManager {
            let manager = manager()
            var credential = CrashWorld.credential("alice", refreshToken: await provider.signIn("alice"))
            credential.expiresAt = Date().addingTimeInterval(3600)
            try await manager.save(credential)
            return manager
        }
    }

    static let api = URL(string: "https://api.example.test/api")!

    @Test("a 401 invalid_token is answered with one refresh and one retry; a second refusal is returned, not retried again")
    func refusedOnce() async throws {
        let world = World()
        let manager = try await world.signedIn()
        #expect(try await manager.send(HTTPRequest(method: .get, url: Self.api)).status == 200)
        #expect(await world.provider.refreshes == 1)
        #expect(world.apiCalls.count == 2)
        #expect(try await manager.send(HTTPRequest(method: .get, url: Self.api)).status == 200, "the refreshed token is kept for the next call")
        #expect(await world.provider.refreshes == 1)

        world.refuseAll = true
        #expect(try await manager.send(HTTPRequest(method: .get, url: Self.api)).status == 401)
        #expect(await world.provider.refreshes == 2)
        #expect(world.apiCalls.count == 5)
    }

    @Test("only a 401 naming invalid_token refreshes: a plain 401, a 403 or a 500 is returned as it came")
    func otherRefusals() {
        #expect(CredentialManager.refusesToken(HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="invalid_token""#])))
        #expect(CredentialManager.refusesToken(HTTPResponse(status: 401, headers: ["WWW-Authenticate": "Bearer error=invalid_token"])))
        #expect(!CredentialManager.refusesToken(HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce""#])))
        #expect(!CredentialManager.refusesToken(HTTPResponse(status: 401)))
        #expect(!CredentialManager.refusesToken(HTTPResponse(status: 403, headers: ["WWW-Authenticate": #"Bearer error="insufficient_scope""#])))
    }

    @Test("authorize(&URLRequest): a fresh Bearer token, or a DPoP token with a proof for the request's method and URL")
    func authorizeURLRequest() async throws {
        let world = World()
        let manager = try await world.signedIn()
        var request = URLRequest(url: Self.api)
        try await manager.authorize(&request)
        #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer at-0-alice")

        let key = DPoPKey()
        var bound = CrashWorld.credential("alice", refreshToken: "rt")
        bound.tokenType = "DPoP"
        bound.dpopKey = key
        bound.expiresAt = Date().addingTimeInterval(3600)
        try await manager.save(bound)
        var post = URLRequest(url: Self.api)
        post.httpMethod = "POST"
        try await manager.authorize(&post)
        #expect(post.value(forHTTPHeaderField: "Authorization") == "DPoP at-0-alice")
        let proof = try #require(post.value(forHTTPHeaderField: "DPoP"))
        guard case .object(let claims) = try JSONDecoder().decode(JSONValue.self, from: #require(Base64URL.decode(proof.split(separator: ".")[1])))
        else {
            Issue.record("the proof's payload is not an object")
            return
        }
        #expect(claims["htm"] == .string("POST"))
        #expect(claims["htu"] == .string(Self.api.absoluteString))
        #expect(claims["ath"] == .string(DPoPKey.accessTokenHash("at-0-alice")))

        // The API's answer gives a nonce: the next proof carries it.
        let answer = try #require(HTTPURLResponse(url: Self.api, statusCode: 200, httpVersion: nil, headerFields: ["DPoP-Nonce": "api-n1"]))
        manager.record(answer, for: Self.api)
        var next = URLRequest(url: Self.api)
        try await manager.authorize(&next)
        let nextProof = try #require(next.value(forHTTPHeaderField: "DPoP")).split(separator: ".")[1]
        guard case .object(let nextClaims) = try JSONDecoder().decode(JSONValue.self, from: #require(Base64URL.decode(nextProof))) else { return }
        #expect(nextClaims["nonce"] == .string("api-n1"))

        var cleartext = URLRequest(url: try #require(URL(string: "http://api.example.test/api")))
        await expectCode(.insecureEndpoint) { try await manager.authorize(&cleartext) }
        #expect(cleartext.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test("sign-out without naming the user agent: the credential's record decides whether an end-session page is shown")
    func signOutByRecord() async throws {
        var metadata = CrashWorld.metadata
        metadata.endSessionEndpoint = URL(string: "https://id.example.test/logout")
        for (recorded, shown) in [(UserAgentStrategy.ephemeralBrowser, false), (.systemBrowser, true), (.webView, true)] {
            let provider = CrashWorld.Provider()
            let client = OIDCClient(
                configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!, scopes: ["openid"]),
                provider: .static(metadata), transport: CrashWorld.Network(provider: provider, plan: CrashWorld.Plan()))
            let manager = CredentialManager(client: client, store: InMemoryCredentialStore(), key: "alice")
            var credential = CrashWorld.credential("alice", refreshToken: await provider.signIn("alice"))
            credential.userAgent = recorded
            try await manager.save(credential)
            let signOut = try await manager.signOut()
            #expect((signOut.endSession != nil) == shown, "\(recorded)")
        }
    }
}
