import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting

/// A scripted provider on a StubTransport: metadata, a JWKS that tests can rotate, and a token
/// endpoint whose answer tests set.
final class StubProvider: @unchecked Sendable {  // @unchecked: mutable fields are guarded by `lock`.
    static let issuer = "https://id.example.test"
    static let clientID = "app-client"
    static let redirectURI = URL(string: "com.example.app:/oauth/callback")!

    let clock = ManualClock()
    let signer: TestTokenSigner
    private let lock = NSLock()
    private var _jwks: String
    private var _tokenResponse: HTTPResponse = StubTransport.json(500, "{}")
    private var _userInfoResponse: HTTPResponse = StubTransport.json(500, "{}")
    var metadata: ProviderMetadata
    private(set) var transport: StubTransport!

    init(signer: TestTokenSigner? = nil) async throws {
        let resolved: TestTokenSigner
        if let signer { resolved = signer } else { resolved = try await TestTokenSigner(.rs256, keyID: "key-1") }
        let signer = resolved
        self.signer = signer
        _jwks = TestTokenSigner.jwks([signer])
        metadata = ProviderMetadata(
            issuer: Self.issuer,
            authorizationEndpoint: URL(string: "\(Self.issuer)/authorize")!,
            tokenEndpoint: URL(string: "\(Self.issuer)/token")!,
            jwksURI: URL(string: "\(Self.issuer)/jwks")!,
            userinfoEndpoint: URL(string: "\(Self.issuer)/userinfo")!,
            idTokenSigningAlgValuesSupported: ["RS256", "ES256"],
            authorizationResponseIssParameterSupported: true
        )
        transport = StubTransport { [unowned self] request in
            switch request.url.path {
            case "/.well-known/openid-configuration": return try StubTransport.json(200, self.metadataJSON)
            case "/jwks": return StubTransport.json(200, self.jwks)
            case "/token": return self.tokenResponse
            case "/userinfo": return self.userInfoResponse
            case "/par": return StubTransport.json(201, #"{"request_uri":"urn:ietf:params:oauth:request_uri:abc","expires_in":60}"#)
            default: return StubTransport.json(404, #"{"error":"not_found"}"#)
            }
        }
    }

    var metadataJSON: JSONValue {
        get throws { try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(metadata)) }
    }

    var jwks: String {
        get { lock.withLock { _jwks } }
        set { lock.withLock { _jwks = newValue } }
    }

    var tokenResponse: HTTPResponse {
        get { lock.withLock { _tokenResponse } }
        set { lock.withLock { _tokenResponse = newValue } }
    }

    var userInfoResponse: HTTPResponse {
        get { lock.withLock { _userInfoResponse } }
        set { lock.withLock { _userInfoResponse = newValue } }
    }

    var jwksFetches: Int { transport.requests.filter { $0.url.path == "/jwks" }.count }
    var tokenRequests: [HTTPRequest] { transport.requests.filter { $0.url.path == "/token" } }

    /// Claims that pass every check at the provider's current time.
    func validClaims(nonce: String = "n-0S6_WzA2Mj") -> [String: JSONValue] {
        let now = clock.now().timeIntervalSince1970
        return [
            "iss": .string(Self.issuer), "sub": .string("user-1"), "aud": .string(Self.clientID),
            "exp": .number(now + 300), "iat": .number(now), "nonce": .string(nonce),
        ]
    }

    func validator(
        algorithms: Set<String> = ["RS256", "ES256"], acr: Set<String> = [], refetchInterval: TimeInterval = 60
    ) -> IDTokenValidator {
        IDTokenValidator(
            issuer: Self.issuer, clientID: Self.clientID, allowedAlgorithms: algorithms, clockSkew: 60,
            requiredACRValues: acr,
            keys: JWKSCache(
                jwksURI: metadata.jwksURI, transport: transport, clock: clock, refetchInterval: refetchInterval, logger: Logger(label: "test")),
            clock: clock
        )
    }

    func client(
        authentication: ClientAuthentication = .none, logger: Logger = Logger(label: "test"),
        par: ClientConfiguration.PARPolicy = .whenOffered, acr: Set<String> = []
    ) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: Self.clientID, redirectURI: Self.redirectURI, authentication: authentication,
                scopes: ["openid", "profile"], requiredACRValues: acr, pushedAuthorization: par
            ),
            provider: .discovery(issuer: Self.issuer),
            transport: transport, clock: clock, entropy: FixedEntropy(), logger: logger
        )
    }

    /// A token response carrying an ID token signed over `claims`.
    func setTokens(claims: [String: JSONValue], accessToken: String = "at-SlAV32hkKG", refreshToken: String? = "rt-8xLOxBtZp8") async throws {
        let idToken = try await signer.sign(claims)
        var body: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string("Bearer"), "expires_in": .number(3600),
            "id_token": .string(idToken),
        ]
        if let refreshToken { body["refresh_token"] = .string(refreshToken) }
        tokenResponse = StubTransport.json(200, JSONValue.object(body).description)
    }
}

/// Expects `body` to throw a SwitchbackError with `code`.
func expectCode<T>(_ code: SwitchbackError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) {
    do {
        let value = try body()
        Issue.record("expected \(code), got a result: \(value)", sourceLocation: sourceLocation)
    } catch let error as SwitchbackError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects the async `body` to throw a SwitchbackError with `code`.
func expectCode<T>(_ code: SwitchbackError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async {
    do {
        let value = try await body()
        Issue.record("expected \(code), got a result: \(value)", sourceLocation: sourceLocation)
    } catch let error as SwitchbackError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects the async `body` to fail with a SwitchbackError and returns it for closer checks; records
/// `reason` when it succeeds, and the error when it is of another type.
func expectFailure<T>(_ reason: Comment, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async -> SwitchbackError? {
    do {
        _ = try await body()
        Issue.record(reason, sourceLocation: sourceLocation)
    } catch let error as SwitchbackError {
        return error
    } catch {
        Issue.record("expected a SwitchbackError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
