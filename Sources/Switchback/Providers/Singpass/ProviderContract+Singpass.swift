extension ProviderContract {
    /// Singpass under FAPI 2.0 (Login and Myinfo v5 apps).
    public static let singpass = ProviderContract(
        provider: "singpass",
        terms: [
            Term(
                .pushedRequestLifetime, .seconds(60),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/1.-authorization-request",
                says: #""We set this value to be 60 seconds" (the request_uri's expires_in)"#),
            Term(
                .codeLifetime, .seconds(60),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/3.-token-exchange",
                says: "codes live 60 seconds under FAPI 2.0 (2 minutes in the pre-FAPI API)"),
            Term(
                .refreshTokens, .flag(false),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/singpass-authentication-api/2.-token-endpoint",
                says: #""only the following grant(s) is supported: authorization_code""#),
            Term(
                .redirectsInvalidRequestURI, .flag(true),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/2.-handling-the-redirect",
                says:
                    "its example error redirect: redirect?error=invalid_request_uri&error_description=The%20request_uri%20provided%20is%20invalid&state=…; GovTech's MockPass answers a 400 instead"
            ),
        ])
}
