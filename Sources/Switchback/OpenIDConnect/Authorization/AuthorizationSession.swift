public import Foundation

/// What must be remembered between sending the user to the provider and receiving the callback.
///
/// It holds the PKCE verifier and the sign-in's DPoP key: persist it only in protected storage (the flow
/// journal does), and never log it.
public struct AuthorizationSession: Sendable, Codable, Equatable {
    public let issuer: String
    public let clientID: String
    public let redirectURI: URL
    public let state: String
    public let nonce: String
    public let pkce: PKCE
    /// `code` for every session saved before the implicit shape existed.
    public let responseType: ResponseType
    public let responseMode: ResponseMode
    public let maxAge: Int?
    /// The PAR `request_uri`, when the request was pushed.
    public let requestURI: String?
    /// The URL to open in the user agent.
    public let authorizationURL: URL
    public let createdAt: Date
    /// The key this sign-in's code and tokens are bound to (``ClientConfiguration/DPoPPolicy/perSignIn``).
    public let dpopKey: DPoPKey?

    public init(
        issuer: String,
        clientID: String,
        redirectURI: URL,
        state: String,
        nonce: String,
        pkce: PKCE,
        responseType: ResponseType = .code,
        responseMode: ResponseMode,
        maxAge: Int?,
        requestURI: String?,
        authorizationURL: URL,
        createdAt: Date,
        dpopKey: DPoPKey? = nil
    ) {
        self.dpopKey = dpopKey
        self.issuer = issuer
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.pkce = pkce
        self.responseType = responseType
        self.responseMode = responseMode
        self.maxAge = maxAge
        self.requestURI = requestURI
        self.authorizationURL = authorizationURL
        self.createdAt = createdAt
    }
}

extension AuthorizationSession {
    private enum CodingKeys: String, CodingKey {
        case issuer, clientID, redirectURI, state, nonce, pkce, responseType, responseMode, maxAge, requestURI, authorizationURL, createdAt
        case dpopKey
    }

    /// Journals and companion records written before ``responseType`` existed read as `code`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            issuer: try container.decode(String.self, forKey: .issuer), clientID: try container.decode(String.self, forKey: .clientID),
            redirectURI: try container.decode(URL.self, forKey: .redirectURI), state: try container.decode(String.self, forKey: .state),
            nonce: try container.decode(String.self, forKey: .nonce), pkce: try container.decode(PKCE.self, forKey: .pkce),
            responseType: try container.decodeIfPresent(ResponseType.self, forKey: .responseType) ?? .code,
            responseMode: try container.decode(ResponseMode.self, forKey: .responseMode),
            maxAge: try container.decodeIfPresent(Int.self, forKey: .maxAge),
            requestURI: try container.decodeIfPresent(String.self, forKey: .requestURI),
            authorizationURL: try container.decode(URL.self, forKey: .authorizationURL),
            createdAt: try container.decode(Date.self, forKey: .createdAt),
            dpopKey: try container.decodeIfPresent(DPoPKey.self, forKey: .dpopKey)
        )
    }
}

extension AuthorizationSession: CustomStringConvertible {
    /// No state, nonce or verifier is shown.
    public var description: String {
        "AuthorizationSession(issuer: \(issuer), clientID: \(clientID), redirectURI: \(redirectURI), responseType: \(responseType.rawValue), responseMode: \(responseMode.rawValue), pushed: \(requestURI != nil), dpop: \(dpopKey != nil))"
    }
}
