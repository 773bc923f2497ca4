public import Foundation

extension ProviderPreset {
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
}
