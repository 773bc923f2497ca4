public import Foundation

/// The backend companion's HTTP API, defined once: its paths and the JSON bodies its app-facing routes take
/// and give. ``CompanionClient`` sends these and the companion (`switchback-companion`) decodes the same
/// types, so the two cannot drift apart. Property names are Swift's; each type's coding keys are the wire's
/// snake_case names. Errors are ``OAuthErrorResponse`` bodies.
@_spi(SwitchbackInternals) public enum CompanionAPI {
    /// The routes' paths below the companion's base URL.
    public enum Path {
        public static let exchangeStart = "/exchange/start"
        public static let exchange = "/exchange"
        public static let permission = "/permission"
        public static let bridgeStart = "/bridge/start"
        public static let bridgeCallback = "/bridge/callback"
        public static let bridgeFragment = "/bridge/fragment"
        public static let bridgeRedeem = "/bridge/redeem"
        public static let handOff = "/handoff"
        public static let handOffRedeem = "/handoff/redeem"
        public static let completionStart = "/completion/start"
        public static let completion = "/complete"
        /// `GET /response`: the response page, whose button forwards the provider's answer to the app's universal link.
        public static let response = "/response"
        public static let completionStatus = "/completion/status"
        public static let session = "/session"
        public static let sessionLogout = "/session/logout"
        /// OpenID Connect Back-Channel Logout 1.0: the provider's `backchannel_logout_uri`.
        public static let backChannelLogout = "/logout/backchannel"
        public static let health = "/health"
        /// Readiness for a load balancer: the store answers and the provider's metadata is at hand; 503
        /// while the instance drains.
        public static let ready = "/ready"
        /// App Attest: a one-time challenge, then the key's attestation over it.
        public static let attestChallenge = "/attest/challenge"
        public static let attestRegister = "/attest/register"
        /// OpenID4VP: the app starts a presentation request, the wallet fetches the request object and posts
        /// its answer, the app redeems the one-time `response_code` the wallet returned with.
        public static let walletStart = "/wallet/start"
        public static let walletRequest = "/wallet/request/{id}"
        public static let walletResponse = "/wallet/response"
        public static let walletRedeem = "/wallet/redeem"
        public static let appleIdentityStart = "/wallet/apple/start"
        public static let appleIdentityVerify = "/wallet/apple/verify"
        /// RFC 7009 through the companion: a token the app holds, revoked with the client authentication
        /// only the companion has (a confidential client's, as UAE Pass and Norwegian BankID require).
        public static let revoke = "/revoke"
    }

    /// `path` below `base`, keeping a path prefix `base` has (`https://example.com/auth` → `…/auth/exchange`).
    public static func url(_ path: String, below base: URL) -> URL {
        base.appendingPathComponent(String(path.drop { $0 == "/" }))
    }
}
