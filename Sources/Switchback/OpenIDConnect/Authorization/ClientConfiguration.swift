public import Foundation

/// Everything the relying party declares about itself.
public struct ClientConfiguration: Sendable {
    /// When to use Pushed Authorization Requests (RFC 9126).
    public enum PARPolicy: Sendable, Equatable {
        /// Use PAR when the provider publishes an endpoint (the default).
        case whenOffered
        /// Refuse to sign in without PAR.
        case always
        /// Never use PAR unless the provider requires it (then fail with `parRequired`).
        case never
    }

    /// Whether codes and tokens are bound to a DPoP key (RFC 9449).
    public enum DPoPPolicy: Sendable, Equatable {
        /// Bearer tokens; a DPoP-bound answer is refused for want of a key.
        case off
        /// A new key for every sign-in: `dpop_jkt` and a proof at PAR, a proof at the token endpoint, and
        /// the key kept in the ``AuthorizationSession`` and then in the ``Credential`` for refresh and
        /// userinfo. A provider answering with a Bearer token is refused. Singpass asks for a new key pair
        /// per login session ("Demonstrating Proof of Possession (DPoP)", Singpass developer docs).
        case perSignIn
    }

    public var clientID: String
    public var redirectURI: URL
    public var authentication: ClientAuthentication
    /// The scopes of every request unless ``AuthorizationOptions/scopes`` names others; `openid` is added
    /// when the identity is an ID token, and only then (UAE Pass documents requests without it).
    public var scopes: [String]
    /// ID-token signature algorithms this client accepts. `none` and HMAC algorithms are never accepted.
    public var idTokenSigningAlgorithms: Set<String>
    /// Allowed clock difference for `exp`, `iat`, `nbf` and `auth_time`; capped at 5 minutes.
    public var clockSkew: TimeInterval
    /// Acceptable `acr` values; when non-empty every ID token must carry one of them.
    public var requiredACRValues: Set<String>
    public var pushedAuthorization: PARPolicy
    /// Minimum seconds between two JWKS refetches caused by an unknown `kid`.
    public var jwksRefetchInterval: TimeInterval
    /// Binds each sign-in's code and tokens to a key of its own (RFC 9449); see ``DPoPPolicy``.
    public var dpop: DPoPPolicy
    /// Where each sign-in's DPoP key is made: in software (the default), or in hardware where the device
    /// has it (`DPoPKeySource(hardware: SecureEnclaveDPoPKeys())` on Apple platforms).
    public var dpopKeys: DPoPKeySource
    /// The client's keys for encrypted ID tokens and userinfo (JWE), whose public halves are registered
    /// with the provider (Singpass encrypts every ID token). When any is set, a plain token is refused.
    public var decryptionKeys: [DecryptionKey]
    /// Where the identity comes from: a validated ID token (the default), or the userinfo endpoint for a
    /// provider documented to issue no ID token (UAE Pass). Never a fallback: see ``IdentitySource``.
    public var identitySource: IdentitySource
    /// Claims the identity must carry, each with one of the listed values, or the sign-in fails with
    /// ``SwitchbackError/Code/identityRequirementNotMet``: for example UAE Pass's verified accounts,
    /// `["userType": ["SOP2", "SOP3"]]`, which refuses unverified SOP1 accounts.
    public var requiredClaims: [String: Set<String>]

    public init(
        clientID: String,
        redirectURI: URL,
        authentication: ClientAuthentication = .none,
        scopes: [String] = ["openid"],
        idTokenSigningAlgorithms: Set<String> = SigningAlgorithms.idTokenDefaults,
        clockSkew: TimeInterval = 60,
        requiredACRValues: Set<String> = [],
        pushedAuthorization: PARPolicy = .whenOffered,
        jwksRefetchInterval: TimeInterval = 60,
        dpop: DPoPPolicy = .off,
        dpopKeys: DPoPKeySource = .software,
        decryptionKeys: [DecryptionKey] = [],
        identitySource: IdentitySource = .idToken,
        requiredClaims: [String: Set<String>] = [:]
    ) {
        self.identitySource = identitySource
        self.requiredClaims = requiredClaims
        self.decryptionKeys = decryptionKeys
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.authentication = authentication
        self.scopes = Self.scopes(scopes, for: identitySource)
        self.idTokenSigningAlgorithms = idTokenSigningAlgorithms.filter { SigningAlgorithms.asymmetric.contains($0) }
        self.clockSkew = min(max(clockSkew, 0), 300)
        self.requiredACRValues = requiredACRValues
        self.pushedAuthorization = pushedAuthorization
        self.jwksRefetchInterval = jwksRefetchInterval
        self.dpop = dpop
        self.dpopKeys = dpopKeys
    }
}

extension ClientConfiguration {
    /// `requested`, with `openid` first when the identity is an ID token (OpenID Connect Core §3.1.2.1).
    static func scopes(_ requested: [String], for identitySource: IdentitySource) -> [String] {
        identitySource == .idToken && !requested.contains("openid") ? ["openid"] + requested : requested
    }
}

/// The JWS algorithms the core can verify with a provider's public keys.
public enum SigningAlgorithms {
    /// Every asymmetric algorithm the core verifies. `none` and `HS*` are deliberately absent.
    public static let asymmetric: Set<String> = [
        "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA",
    ]

    /// What a client accepts for ID tokens unless configured otherwise.
    public static let idTokenDefaults: Set<String> = ["RS256", "ES256"]
}
