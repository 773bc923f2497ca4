extension ProviderContract {
    /// ID.me (OpenID Connect, the default application settings).
    public static let idMe = ProviderContract(
        provider: "idme",
        terms: [
            Term(
                .codeLifetime, .seconds(300),
                source: "https://docs.id.me/integrations/configurations/applications/authorization-duration",
                says: "authorization codes are valid for 5 minutes by default, and for one use"),
            Term(
                .accessTokenLifetime, .seconds(300),
                source: "https://docs.id.me/integrations/configurations/applications/token-expiration",
                says: "access tokens expire after 5 minutes by default"),
            Term(
                .singleUseAccessTokens, .flag(true),
                source: "https://docs.id.me/integrations/configurations/applications/token-expiration",
                says: "an access token is for a single use: one used again is denied and revoked (the error is not documented)"),
            Term(
                .refreshTokens, .flag(true),
                source: "https://docs.id.me/integrations/configurations/applications/token-expiration",
                says: "refresh tokens are issued and last 7 days by default"),
        ])
}
