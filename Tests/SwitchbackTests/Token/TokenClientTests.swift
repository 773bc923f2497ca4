import Crypto
import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

@Suite("Token client")
struct TokenClientTests {
    static let metadata = ProviderMetadata(
        issuer: "https://id.example.test",
        authorizationEndpoint: URL(string: "https://id.example.test/authorize")!,
        tokenEndpoint: URL(string: "https://id.example.test/token")!,
        jwksURI: URL(string: "https://id.example.test/jwks")!,
        pushedAuthorizationRequestEndpoint: URL(string: "https://id.example.test/par")!
    )
    static let tokens =
        #"{"access_token":"at-1","token_type":"Bearer","expires_in":"3600","refresh_token":"rt-1","id_token":"a.b.c","scope":"openid profile"}"#

    static func client(_ authentication: ClientAuthentication, transport: StubTransport, clock: ManualClock = ManualClock()) -> TokenClient {
        TokenClient(
            configuration: ClientConfiguration(
                clientID: "app client", redirectURI: URL(string: "com.example.app:/oauth/callback")!, authentication: authentication
            ),
            metadata: metadata, transport: transport, clock: clock, entropy: SystemEntropy(), logger: Logger(label: "test")
        )
    }

    static func fields(_ request: HTTPRequest) -> [String: String] {
        Dictionary(
            FormEncoding.decode(String(decoding: request.body ?? Data(), as: UTF8.self), plusIsSpace: true) ?? [],
            uniquingKeysWith: { first, _ in first })
    }

    @Test("authorization_code grant sends code, redirect_uri and code_verifier; public client sends client_id only")
    func codeGrantPublicClient() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, Self.tokens) }
        let response = try await Self.client(.none, transport: transport)
            .exchange(
                code: "c-1", verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", redirectURI: URL(string: "com.example.app:/oauth/callback")!)
        #expect(response.accessToken == "at-1")
        #expect(response.expiresIn == 3600)
        let request = try #require(transport.requests.first)
        #expect(request.method == .post)
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
        #expect(request.headers["Authorization"] == nil)
        #expect(
            Self.fields(request) == [
                "grant_type": "authorization_code", "code": "c-1", "redirect_uri": "com.example.app:/oauth/callback",
                "code_verifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "client_id": "app client",
            ])
    }

    @Test("client_secret_basic: form-encoded ID and secret in the Authorization header, nothing in the body")
    func clientSecretBasic() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, Self.tokens) }
        _ = try await Self.client(.clientSecretBasic(secret: "s3cr3t:/+"), transport: transport).refresh(refreshToken: "rt-1")
        let request = try #require(transport.requests.first)
        // RFC 6749 §2.3.1: each part is form-encoded before base64 (space as %20, which every form
        // decoder reads, unlike "+" which plain percent-decoders leave alone).
        #expect(request.headers["Authorization"] == "Basic " + Data("app%20client:s3cr3t%3A%2F%2B".utf8).base64EncodedString())
        #expect(Self.fields(request) == ["grant_type": "refresh_token", "refresh_token": "rt-1"])
    }

    @Test("client_secret_post: client_id and client_secret in the body")
    func clientSecretPost() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, Self.tokens) }
        _ = try await Self.client(.clientSecretPost(secret: "s3cr3t"), transport: transport).refresh(refreshToken: "rt-1", scopes: ["openid"])
        let fields = Self.fields(try #require(transport.requests.first))
        #expect(fields["client_id"] == "app client")
        #expect(fields["client_secret"] == "s3cr3t")
        #expect(fields["scope"] == "openid")
    }

    @Test(
        "private_key_jwt: a signed assertion for this client, addressed to the issuer alone (not the endpoint), short-lived, with a unique jti",
        arguments: [
            TestTokenSigner.Algorithm.rs256, .es256,
        ])
    func privateKeyJWT(algorithm: TestTokenSigner.Algorithm) async throws {
        let key = try await TestTokenSigner(algorithm, keyID: "client-key")
        let signer = try await ClientAssertionSigner(
            algorithm: algorithm == .rs256 ? .rs256 : .es256, privateKeyPEM: key.privateKeyPEM, keyID: "client-key"
        )
        let transport = StubTransport { _ in StubTransport.json(200, Self.tokens) }
        let clock = ManualClock()
        let client = Self.client(.privateKeyJWT(signer), transport: transport, clock: clock)
        _ = try await client.refresh(refreshToken: "rt-1")
        _ = try await client.refresh(refreshToken: "rt-1")
        let verifier = IDTokenValidator(
            issuer: "unused", clientID: "unused", allowedAlgorithms: [algorithm.rawValue],
            keys: try JWKSCache(jwksJSON: Data(TestTokenSigner.jwks([key]).utf8), logger: Logger(label: "test")), clock: clock
        )
        var jtis: Set<String> = []
        for request in transport.requests {
            let fields = Self.fields(request)
            #expect(fields["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            let payload = try await verifier.verifiedPayload(
                of: try #require(fields["client_assertion"]), allowed: [algorithm.rawValue], malformed: .idTokenMalformed)
            let claims = try JSONDecoder().decode([String: JSONValue].self, from: payload)
            #expect(claims["iss"] == .string("app client"))
            #expect(claims["sub"] == .string("app client"))
            #expect(claims["aud"] == .string("https://id.example.test"))
            guard case .number(let iat)? = claims["iat"], case .number(let exp)? = claims["exp"], case .string(let jti)? = claims["jti"] else {
                Issue.record("iat, exp or jti missing: \(claims)")
                continue
            }
            #expect(iat == clock.now().timeIntervalSince1970)
            #expect(exp - iat == 60)
            jtis.insert(jti)
        }
        #expect(jtis.count == 2)
    }

    @Test("ES384 and ES512 assertion keys sign with their own curve; a key of another curve is a configuration error")
    func ecdsaCurves() async throws {
        let p384 = P384.Signing.PrivateKey()
        let p521 = P521.Signing.PrivateKey()
        for (algorithm, pem, other) in [
            (ClientAssertionSigner.Algorithm.es384, p384.pemRepresentation, p521.pemRepresentation),
            (.es512, p521.pemRepresentation, p384.pemRepresentation),
        ] {
            let signer = try await ClientAssertionSigner(algorithm: algorithm, privateKeyPEM: pem)
            let assertion = try await signer.assertion(clientID: "c", audience: "https://id.example.test", now: Date(), entropy: SystemEntropy())
            let encodedHeader = try #require(assertion.split(separator: ".").first)
            let header = try JSONDecoder().decode([String: JSONValue].self, from: try #require(Base64URL.decode(encodedHeader)))
            #expect(header["alg"] == .string(algorithm.rawValue))
            await expectCode(.invalidConfiguration) { try await ClientAssertionSigner(algorithm: algorithm, privateKeyPEM: other) }
        }
    }

    @Test("a client assertion key that is not a private key of the algorithm is a configuration error")
    func badAssertionKey() async {
        await expectCode(.invalidConfiguration) { try await ClientAssertionSigner(algorithm: .es256, privateKeyPEM: "-----BEGIN NOTHING-----") }
    }

    @Test("a token error response becomes tokenEndpointError with the OAuth error kept")
    func tokenErrorResponse() async throws {
        let transport = StubTransport { _ in StubTransport.json(400, #"{"error":"invalid_grant","error_description":"code expired"}"#) }
        do {
            _ = try await Self.client(.none, transport: transport).exchange(code: "c", verifier: "v", redirectURI: URL(string: "x:/cb")!)
            Issue.record("expected an error")
        } catch let error as SwitchbackError {
            #expect(error.code == .tokenEndpointError)
            #expect(error.oauthError?.error == "invalid_grant")
            #expect(error.httpStatus == 400)
        }
    }

    @Test("a 5xx without an OAuth body, garbage with 200, and a wrong token_type are typed errors")
    func malformedResponses() async throws {
        let cases: [(HTTPResponse, SwitchbackError.Code)] = [
            (StubTransport.json(502, "<html>bad gateway</html>"), .httpStatus),
            (StubTransport.json(403, "Forbidden"), .invalidTokenResponse),
            (StubTransport.json(200, "not json"), .invalidTokenResponse),
            (StubTransport.json(200, #"{"token_type":"Bearer"}"#), .invalidTokenResponse),
            (StubTransport.json(200, #"{"access_token":"a","token_type":"MAC"}"#), .invalidTokenResponse),
        ]
        for (response, code) in cases {
            let transport = StubTransport { _ in response }
            await expectCode(code) { try await Self.client(.none, transport: transport).refresh(refreshToken: "rt") }
        }
        let unreachable = StubTransport { _ in throw URLError(.cannotConnectToHost) }
        await expectCode(.transportFailed) { try await Self.client(.none, transport: unreachable).refresh(refreshToken: "rt") }
    }

    @Test("cancellation passes through untouched")
    func cancellationPassesThrough() async throws {
        let transport = StubTransport { _ in throw CancellationError() }
        await #expect(throws: CancellationError.self) { try await Self.client(.none, transport: transport).refresh(refreshToken: "rt") }
    }

    @Test("PAR posts the parameters with client authentication and returns request_uri; errors are parFailed")
    func pushedAuthorizationRequest() async throws {
        let transport = StubTransport { _ in StubTransport.json(201, #"{"request_uri":"urn:ietf:params:oauth:request_uri:xyz","expires_in":90}"#) }
        let pushed = try await Self.client(.clientSecretBasic(secret: "s"), transport: transport)
            .pushAuthorizationRequest([("client_id", "app client"), ("response_type", "code"), ("state", "st")])
        #expect(pushed.requestURI == "urn:ietf:params:oauth:request_uri:xyz")
        #expect(pushed.expiresIn == 90)
        let request = try #require(transport.requests.first)
        #expect(request.url.path == "/par")
        #expect(Self.fields(request) == ["response_type": "code", "state": "st"])

        let refusing = StubTransport { _ in StubTransport.json(400, #"{"error":"invalid_request"}"#) }
        await expectCode(.parFailed) { try await Self.client(.none, transport: refusing).pushAuthorizationRequest([("a", "b")]) }
        let garbage = StubTransport { _ in StubTransport.json(201, "{}") }
        await expectCode(.parFailed) { try await Self.client(.none, transport: garbage).pushAuthorizationRequest([("a", "b")]) }
    }
}
