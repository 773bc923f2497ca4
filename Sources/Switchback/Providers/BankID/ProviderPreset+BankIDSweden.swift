import Foundation

extension ProviderPreset {
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
}
