import Foundation

extension ProviderPreset {
    /// ID.me: a standard code flow with PKCE in any user agent.
    public static let idMe = ProviderPreset(name: "idme", strategies: [.systemBrowser, .ephemeralBrowser, .safariView, .webView])
}
