public import Foundation

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

    /// Norwegian BankID: the page opens the BankID app and waits; `app_callback_uri` (a universal link) brings
    /// the user back, and needs a permission the app's backend registers upfront — pass `permission`,
    /// which returns the authorization parameters that carry it.
    public static func bankIDNorway(permission: (@Sendable (_ appReturnURL: URL) async throws -> [(String, String)])? = nil) -> ProviderPreset {
        ProviderPreset(
            name: "bankid-no",
            strategies: [.systemBrowser, .safariView, .ephemeralBrowser],
            unusable: [.init(.webView, because: "BankID's app hand-off and WebAuthn do not work in embedded WebViews")],
            appReturn: permission == nil ? nil : AppReturn(.parameter("app_callback_uri"), patterns: [.universalLink]),
            permission: permission
        )
    }

    /// Swedish BankID through a broker: an autostart link with `redirect` (null unless the app gives one);
    /// the link leaves any user agent, including a WebView, and the page polls until the app answers.
    /// The app's return URL goes to the broker as `login_hint=appswitch:resumeUrl:<url>` (Idura's iOS
    /// SDK sends it without `appswitch:ios` for Swedish BankID); the broker passes it on (BankID's own RP
    /// API takes it as `returnUrl`, which overrides the link's `redirect`). From a WebView the app opens
    /// `https://app.bankid.com/…` first, as BankID recommends on iOS, and `bankid:///…` when no app claims it.
    public static let bankIDSweden = ProviderPreset(
        name: "bankid-se",
        strategies: [.systemBrowser, .safariView, .ephemeralBrowser, .webView],
        appReturn: AppReturn(.loginHint(words: [], prefix: "appswitch:resumeUrl:"), patterns: [.universalLink, .appScheme]),
        appLinks: ["bankid": URL(string: "https://app.bankid.com/")!]
    )

    /// Singpass (FAPI 2.0): PAR, private_key_jwt, a DPoP key per sign-in and an encryption key on the client
    /// configuration; the issuer is the FAPI server, ``ProviderSource/singpass(_:)``. A registered
    /// `app_launch_url` (a universal link; FAPI allows no custom schemes) brings the user back from the
    /// Singpass app; `redirect_uri_https_type=app_claimed_https` asks for the tap page without which a
    /// redirect to the app's universal link would stay in the browser. Every Login request says what it is
    /// for (``SingpassAuthenticationContext``; signing in to the app by default). WebViews are no longer
    /// supported (since 8 November 2024). Sources: `Documentation/Providers.md`.
    public static let singpass = singpass(context: .appAuthenticationDefault)

    /// Singpass for a Login request of another documented purpose (opening an account, a transfer, …).
    public static func singpass(context: SingpassAuthenticationContext) -> ProviderPreset {
        ProviderPreset(
            name: "singpass",
            strategies: [.systemBrowser, .safariView, .ephemeralBrowser],
            unusable: [.init(.webView, because: "Singpass discontinued WebView support")],
            appReturn: AppReturn(.parameter("app_launch_url"), patterns: [.universalLink]),
            authorizationParameters: [("redirect_uri_https_type", "app_claimed_https")] + context.parameters
        )
    }

    /// ID.me: a standard code flow with PKCE in any user agent.
    public static let idMe = ProviderPreset(name: "idme", strategies: [.systemBrowser, .ephemeralBrowser, .safariView, .webView])

    /// Any well-behaved OpenID provider.
    public static let generic = ProviderPreset(name: "generic", strategies: [.systemBrowser, .ephemeralBrowser, .safariView, .webView])

    /// Every preset, Norwegian BankID without a permission hook.
    public static let all: [ProviderPreset] = [
        .uaePass, .bankIDNorway(), .mitID(.signaturgruppen), .mitID(.idura), .bankIDSweden, .singpass, .idMe, .generic,
    ]
}
