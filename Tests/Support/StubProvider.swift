public import Foundation
public import Logging
import Testing
@_spi(SwitchbackInternals) public import Switchback
public import SwitchbackTesting

/// A scripted provider on a StubTransport: metadata, a JWKS that tests can rotate, and a token
/// endpoint whose answer tests set.
public final class StubProvider: @unchecked Sendable {  // @unchecked: mutable fields are guarded by `lock`.
    public static let issuer = "https://id.example.test"
    public static let clientID = "app-client"
    public static let redirectURI = URL(string: "com.example.app:/oauth/callback")!

    public let clock = ManualClock()
    public let signer: TestTokenSigner
    private let lock = NSLock()
    private var _jwks: String
    private var _tokenResponse: HTTPResponse = StubTransport.json(500, "{}")
    private var _userInfoResponse: HTTPResponse = StubTransport.json(500, "{}")
    public var metadata: ProviderMetadata
    public private(set) var transport: StubTransport!

    public init(signer: TestTokenSigner? = nil) async throws {
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

    public var metadataJSON: JSONValue {
        get throws { try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(metadata)) }
    }

    public var jwks: String {
        get { lock.withLock { _jwks } }
        set { lock.withLock { _jwks = newValue } }
    }

    public var tokenResponse: HTTPResponse {
        get { lock.withLock { _tokenResponse } }
        set { lock.withLock { _tokenResponse = newValue } }
    }

    public var userInfoResponse: HTTPResponse {
        get { lock.withLock { _userInfoResponse } }
        set { lock.withLock { _userInfoResponse = newValue } }
    }

    public var jwksFetches: Int { transport.requests.filter { $0.url.path == "/jwks" }.count }
    public var tokenRequests: [HTTPRequest] { transport.requests.filter { $0.url.path == "/token" } }

    /// Claims that pass every check at the provider's current time.
    public func validClaims(nonce: String = "n-0S6_WzA2Mj") -> [String: JSONValue] {
        let now = clock.now().timeIntervalSince1970
        return [
            "iss": .string(Self.issuer), "sub": .string("user-1"), "aud": .string(Self.clientID),
            "exp": .number(now + 300), "iat": .number(now), "nonce": .string(nonce),
        ]
    }

    public func validator(
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

    public func client(
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
    public func setTokens(claims: [String: JSONValue], accessToken: String = "at-SlAV32hkKG", refreshToken: String? = "rt-8xLOxBtZp8") async throws {
        let idToken = try await signer.sign(claims)
        var body: [String: JSONValue] = [
            "access_token": .string(accessToken), "token_type": .string("Bearer"), "expires_in": .number(3600),
            "id_token": .string(idToken),
        ]
        if let refreshToken { body["refresh_token"] = .string(refreshToken) }
        tokenResponse = StubTransport.json(200, JSONValue.object(body).description)
    }
}
