// The app-side code of the provider guides (Sources/SwitchbackApple/Documentation.docc), exactly as the
// guides show it. main.swift runs it on the simulated device against the emulator; the guides' Apple
// wiring (Examples/AppleSnippets) calls the same functions with the Apple adapters.
import Foundation
import Switchback

// MARK: UAE Pass

/// At launch: the coordinator is the app's sign-in engine and the router for its return links. UAE Pass
/// publishes no discovery document (its endpoints are documented), authenticates the client with a secret
/// (the app's backend companion redeems the code), and issues no ID token (the identity is its userinfo).
func makeUAEPassCoordinator(
    endpoints: ProviderMetadata, companion: CompanionClient, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore,
    clock: any FlowClock = SystemClock()
) -> SignInCoordinator {
    let client = OIDCClient(
        configuration: ClientConfiguration(
            clientID: "backend", redirectURI: URL(string: "com.example.app:/oauth/callback")!, pushedAuthorization: .never,
            identitySource: .userInfo, requiredClaims: ["userType": ["SOP2", "SOP3"]]
        ),
        provider: .static(endpoints)
    )
    return SignInCoordinator(.app(client, redeemingCodesAt: companion), host: host, opener: opener, journal: journal, clock: clock)
}

/// The sign-in button: the WebView strategy, the UAE Pass app's return rewritten to the app's scheme.
func signInWithUAEPass(_ coordinator: SignInCoordinator, environment: AuthenticatorRule.Environment, preset: ProviderPreset = .uaePass) async throws -> SignInResult {
    let request = try await preset.request(
        strategy: .webView, environment: environment,
        links: .init(scheme: URL(string: "com.example.app:/handoff"), universalLink: URL(string: "https://app.example.com/appswitch"))
    )
    return try await coordinator.signIn(request)
}

// MARK: MitID through a broker

/// The redirect URI is a web page on your backend's host (the companion's response page), not your app's
/// universal link: the broker's last step is a plain redirect, which a Safari view loads as a page.
func makeMitIDCoordinator(
    broker: String, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore, clock: any FlowClock = SystemClock()
) -> SignInCoordinator {
    let client = OIDCClient(
        configuration: ClientConfiguration(clientID: "native-rs", redirectURI: URL(string: "https://api.example.com/response")!),
        provider: .discovery(issuer: broker)
    )
    return SignInCoordinator(.app(client), host: host, opener: opener, journal: journal, clock: clock)
}

/// A Safari view (MitID refuses WebViews); the MitID app returns by the app's universal link, and the
/// button on the page at the redirect URI brings the response to the app by another (`responseLink`).
func signInWithMitID(_ coordinator: SignInCoordinator, preset: ProviderPreset = .mitID(.signaturgruppen)) async throws -> SignInResult {
    let links = ProviderPreset.AppLinks(
        universalLink: URL(string: "https://app.example.com/appswitch"), responseLink: URL(string: "https://app.example.com/oauth/callback")
    )
    let request = try await preset.request(strategy: .safariView, pattern: .universalLink, links: links)
    return try await coordinator.signIn(request)
}

// MARK: Norwegian BankID

/// BankID's client is confidential: the app has its client ID, the backend companion has the secret and
/// redeems the code. PAR needs the secret too, so the app sends its request in the front channel.
func makeBankIDNorwayCoordinator(
    issuer: String, companion: CompanionClient, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore,
    clock: any FlowClock = SystemClock()
) -> SignInCoordinator {
    let client = OIDCClient(
        configuration: ClientConfiguration(clientID: "backend", redirectURI: URL(string: "com.example.app:/oauth/callback")!, pushedAuthorization: .never),
        provider: .discovery(issuer: issuer)
    )
    return SignInCoordinator(.app(client, redeemingCodesAt: companion), host: host, opener: opener, journal: journal, clock: clock)
}

/// The system browser; the BankID app returns by the app's universal link (`app_callback_uri`), which
/// BankID accepts only with an upfront permission the companion asks for. `statement` is the one-time
/// `statement_id` your backend got for this order from the companion's `POST /permission/statement`.
func signInWithBankIDNorway(_ coordinator: SignInCoordinator, companion: CompanionClient, statement: String) async throws -> SignInResult {
    let bankID = ProviderPreset.bankIDNorway(permission: { try await companion.permissionParameters(for: $0, statement: statement) })
    let request = try await bankID.request(
        strategy: .systemBrowser, pattern: .universalLink, links: .init(universalLink: URL(string: "https://app.example.com/appswitch"))
    )
    return try await coordinator.signIn(request)
}

// MARK: Any OpenID provider

func makeOIDCCoordinator(
    issuer: String, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore, clock: any FlowClock = SystemClock()
) -> SignInCoordinator {
    let client = OIDCClient(
        configuration: ClientConfiguration(clientID: "native-rs", redirectURI: URL(string: "com.example.app:/oauth/callback")!, scopes: ["openid", "profile"]),
        provider: .discovery(issuer: issuer)
    )
    return SignInCoordinator(.app(client), host: host, opener: opener, journal: journal, clock: clock)
}

/// The system browser (ASWebAuthenticationSession), returning to the app's scheme.
func signInWithOIDC(_ coordinator: SignInCoordinator) async throws -> SignInResult {
    try await coordinator.signIn(try await ProviderPreset.generic.request(strategy: .systemBrowser))
}

// MARK: Singpass

/// Singpass's client (FAPI 2.0: PAR, private_key_jwt, DPoP) is the backend companion: the app has no
/// client at Singpass, only the companion's address.
func makeSingpassCoordinator(
    companion: CompanionClient, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore, clock: any FlowClock = SystemClock()
) -> SignInCoordinator {
    let callback = URL(string: "https://app.example.com/oauth/callback")!
    return SignInCoordinator(.companion(companion, route: .exchange(redirectURI: callback)), host: host, opener: opener, journal: journal, clock: clock)
}

/// The system browser; the Singpass app returns by the app's universal link (`app_launch_url`), the
/// Singpass page then ends on the redirect URI, which the app hands to the companion to redeem.
func signInWithSingpass(_ coordinator: SignInCoordinator, preset: ProviderPreset = .singpass) async throws -> SignInResult {
    let request = try await preset.request(
        strategy: .systemBrowser, pattern: .universalLink, links: .init(universalLink: URL(string: "https://app.example.com/appswitch"))
    )
    return try await coordinator.signIn(request)
}

// MARK: MitID with backend completion

/// The broker's client is the companion's, and the broker answers the companion: the app has only the
/// companion's address.
func makeMitIDCompletionCoordinator(
    companion: CompanionClient, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore, clock: any FlowClock = SystemClock()
) -> SignInCoordinator {
    SignInCoordinator(.companion(companion, route: .completion), host: host, opener: opener, journal: journal, clock: clock)
}

/// The broker answers the companion's https page, which finishes the sign-in and offers a button back to
/// the app; the link carries the one-time value the app collects the result with.
func signInWithMitIDCompletion(_ coordinator: SignInCoordinator, preset: ProviderPreset = .mitID(.signaturgruppen)) async throws -> SignInResult {
    let request = try await preset.request(
        strategy: .safariView, pattern: .universalLink, links: .init(universalLink: URL(string: "https://app.example.com/appswitch"))
    )
    return try await coordinator.signIn(request)
}
