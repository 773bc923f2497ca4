import Foundation

extension ProviderPreset {
    /// Any well-behaved OpenID provider.
    public static let generic = ProviderPreset(name: "generic", strategies: [.systemBrowser, .ephemeralBrowser, .safariView, .webView])

    /// Every preset, Norwegian BankID without a permission hook.
    public static let all: [ProviderPreset] = [
        .uaePass, .bankIDNorway(), .mitID(.signaturgruppen), .mitID(.idura), .bankIDSweden, .singpass, .idMe, .generic,
    ]
}
