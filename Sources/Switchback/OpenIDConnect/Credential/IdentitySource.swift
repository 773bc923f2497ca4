/// Where a sign-in's identity (the subject and its claims) comes from.
///
/// OpenID providers issue an ID token: signed by the provider, addressed to this client, bound to this
/// request by its nonce. Some national eIDs issue none: UAE Pass's documented token response holds only
/// `access_token`, `scope`, `token_type` and `expires_in`, and the identity (`uuid`, `userType`, the
/// names) comes from its userinfo endpoint. ``userInfo`` supports such a provider explicitly; it is never
/// a fallback for a provider that should have sent an ID token.
public struct IdentitySource: Hashable, Sendable, Codable, CustomStringConvertible {
    public let name: String

    private init(_ name: String) { self.name = name }

    /// A validated ID token is required; a token response without one fails with
    /// ``SwitchbackError/Code/idTokenMissing``. The default.
    public static let idToken = IdentitySource("id_token")

    /// The userinfo endpoint, called once with the access token the code was just redeemed for. It
    /// proves less than an ID token: the answer came over TLS from the provider's userinfo endpoint for the
    /// token this client's own code exchange produced, so it names the user who approved this request;
    /// but it is not signed, carries no nonce or audience, and cannot be shown to anyone else as proof.
    /// When the token response does carry an ID token, it is validated as usual and wins.
    public static let userInfo = IdentitySource("userinfo")

    public var description: String { name }

    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        self = name == Self.userInfo.name ? .userInfo : .idToken
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
