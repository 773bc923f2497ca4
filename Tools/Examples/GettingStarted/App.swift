// The README's app code ("Hand-off sign-in in an app"), exactly as the README shows it: main.swift runs it
// on the simulated device against the emulator, and Examples/AppleSnippets/GettingStartedApp.swift wires it
// to the Apple adapters (compiled against the Apple API model by scripts/apple-typecheck.sh).
import Foundation
import Switchback

/// At launch. UAE Pass has documented endpoints (no discovery) and no ID token (the identity is its
/// userinfo), and its client secret is held by the app's backend companion, which redeems the code.
func makeCoordinator(
    endpoints: ProviderMetadata, companion: CompanionClient, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore,
    clock: any FlowClock = SystemClock()
) -> SignInCoordinator {
    let client = OIDCClient(
        configuration: ClientConfiguration(
            clientID: "backend", redirectURI: URL(string: "com.example.app:/oauth/callback")!, pushedAuthorization: .never, identitySource: .userInfo
        ),
        provider: .static(endpoints)
    )
    return SignInCoordinator(.app(client, redeemingCodesAt: companion), host: host, opener: opener, journal: journal, clock: clock)
}

/// The sign-in button: a WebView, whose link to the UAE Pass app returns to the app's scheme.
func signIn(_ coordinator: SignInCoordinator, preset: ProviderPreset = .uaePass) async throws -> SignInResult {
    let request = try await preset.request(
        strategy: .webView, environment: .staging,
        links: .init(scheme: URL(string: "com.example.app:/handoff"), universalLink: URL(string: "https://app.example.com/appswitch"))
    )
    return try await coordinator.signIn(request)   // .credential(…): tokens and the validated identity
}
