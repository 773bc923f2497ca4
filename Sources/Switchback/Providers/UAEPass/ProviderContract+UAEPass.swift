extension ProviderContract {
    /// UAE Pass (the web application guide, which native apps follow through a WebView).
    public static let uaePass = ProviderContract(
        provider: "uaepass",
        terms: [
            Term(
                .refreshTokens, .flag(false),
                source: "https://docs.uaepass.ae/guides/authentication/web-application/2.-obtaining-the-access-token",
                says: "the token response documented: access_token, scope, token_type, expires_in",
                status: .assumed("the documented token response names no refresh_token, and no refresh grant is documented")),
            Term(
                .subjectPrefix, .text("UAEPASS/"),
                source:
                    "https://docs.uaepass.ae/feature-guides/authentication/web-application/3.-obtaining-authenticated-user-information-from-the-access-token",
                says:
                    #"a citizen's or resident's userinfo: "sub": "UAEPASS/7a05992e-…" beside "uuid": "7a05992e-…"; a visitor's sub has no prefix and differs from its uuid: key users on uuid"#
            ),
            Term(
                .userInfoACR, .flag(false),
                source:
                    "https://docs.uaepass.ae/feature-guides/authentication/web-application/3.-obtaining-authenticated-user-information-from-the-access-token",
                says: "the web integration's userinfo samples carry no acr (only the Token Validation API's answer does)",
                status: .assumed("absent from every documented userinfo sample")),
        ])
}
