import Foundation

extension ProviderPreset {
    /// UAE Pass: the page opens `uaepass://digitalid` (`uaepassstg://` for the staging app, `uaepassqa://`
    /// for the QA app) with https `successurl`/`failureurl` on the provider, and no authorize parameter to
    /// change them. The vendor's guidance is an embedded WebView that rewrites the link and reloads the
    /// saved success URL, so the WebView comes first (an embedded WebView lets the app see what the user
    /// types on the provider's page, RFC 8252 §8.12: the reason most providers forbid it; UAE Pass asks
    /// for it); the system browser can work through pattern A only
    /// while the login cookie Safari holds is a persistent one (an authentication session shares only
    /// persistent cookies with Safari). Test environments' pages emit the production scheme, so only the
    /// WebView works there. The token endpoint takes a client secret (client_secret_basic), which cannot
    /// live in an app: redeem through the companion, with the identity from userinfo
    /// (``IdentitySource/userInfo``) and the documented endpoints (``ProviderMetadata/uaePass(_:)``).
    public static let uaePass = ProviderPreset(
        name: "uaepass",
        authenticator: AuthenticatorRule(
            schemes: [.production: "uaepass", .staging: "uaepassstg", .qa: "uaepassqa"], successParameters: ["successurl"],
            failureParameters: ["failureurl"],
            providerHosts: ["id.uaepass.ae", "stg-id.uaepass.ae"]
        ),
        strategies: [.webView, .systemBrowser],
        unusable: [
            .init(
                .systemBrowser, in: .staging,
                because: "staging pages open the production authenticator (uaepass://); only a WebView can rewrite the link to the staging app"),
            .init(
                .systemBrowser, in: .qa,
                because: "QA pages open the production authenticator (uaepass://); only a WebView can rewrite the link to the QA app"),
            .init(
                .ephemeralBrowser,
                because: "the authenticator returns to an https page on the provider that Safari opens without this browser's cookies"),
            .init(
                .safariView, because: "the authenticator returns to an https page on the provider that Safari opens without the Safari view's cookies"
            ),
        ],
        authenticatorACR: "urn:digitalid:authentication:flow:mobileondevice",
        withoutAuthenticatorACR: "urn:safelayer:tws:policies:authentication:level:low",
        withoutReturn: .reload,
        // Every documented request (UAE Pass, "Obtaining the OAuth2 access code"); visitor flows add
        // `urn:uae:digitalid:profile:general:profileType` and `…:unifiedId` through the request's options.
        scopes: ["urn:uae:digitalid:profile:general"]
    )
}
