import Foundation

extension ProviderPreset {
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
            authorizationParameters: [("redirect_uri_https_type", "app_claimed_https")] + context.parameters,
            // Signing in needs openid alone; the contract lists what else a Login app may ask for.
            scopes: ["openid"]
        )
    }
}
