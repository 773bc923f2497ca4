extension ProviderContract {
    /// UAE Pass (the web application guide, which native apps follow through a WebView).
    public static let uaePass = ProviderContract(
        provider: "uaepass",
        terms: [
            Term(
                .refreshTokens, .flag(false),
                source: "https://docs.uaepass.ae/guides/authentication/web-application/2.-obtaining-the-access-token",
                says: "the token response documented: access_token, scope, token_type, expires_in",
                status: .assumed("the documented token response names no refresh_token, and no refresh grant is documented"))
        ])
}
