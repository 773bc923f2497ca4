import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackScenarios
import SwitchbackTesting
import ToolsTestSupport

/// Complete sign-ins over real HTTP: the emulator playing each provider, the app's companion serving
/// its association file, and the simulated device with the app, its user agents and the authenticator.
@Suite("End to end: presets × user agents × return patterns")
struct EndToEndTests {
    /// One combination a preset allows.
    struct Combination: CustomTestStringConvertible, Sendable {
        let provider: String
        let environment: AuthenticatorRule.Environment
        let strategy: UserAgentStrategy
        let pattern: ReturnPattern
        var testDescription: String { "\(provider) \(environment) \(strategy) \(pattern)" }
    }

    /// Every strategy each preset can use in each environment, with every return pattern the app has a link for.
    static let allowed: [Combination] = ProviderPreset.all.flatMap { preset in
        let environments: [AuthenticatorRule.Environment] = preset.name == "uaepass" ? [.production, .staging] : [.production]
        return environments.flatMap { environment in
            preset.usableStrategies(in: environment).flatMap { strategy in
                preset.returnPatterns(for: strategy).map {
                    Combination(provider: preset.name, environment: environment, strategy: strategy, pattern: $0)
                }
            }
        }
    }

    /// The acr each provider's emulator reports for a sign-in through its authenticator.
    static let expectedACR: [String: String?] = [
        // UAE Pass's userinfo carries no acr (its contract): which flow ran shows in the narration instead.
        "uaepass": nil, "bankid-no": BankIDNorway.bidACR, "mitid": MitID.substantialACR,
        "mitid-idura": MitID.substantialACR, "bankid-se": BankIDSweden.loa3ACR,
        "singpass": Singpass.acr, "idme": nil, "generic": nil,
    ]

    static func run(_ scenario: Scenario, during: (@Sendable (ScenarioRunner.Rig) async throws -> Void)? = nil) async throws -> ScenarioResult {
        try await ScenarioRunner.run(scenario, during: during)
    }

    /// The credential of an app-run sign-in; a companion-run one is recorded as an issue.
    static func credential(_ result: ScenarioResult) throws -> Credential {
        let signedIn = try signedIn(result)
        guard let credential = signedIn.credential else {
            Issue.record("the companion ran this sign-in; there is no app credential")
            throw SwitchbackError(.invalidTokenResponse, "no credential")
        }
        return credential
    }

    static func signedIn(_ result: ScenarioResult) throws -> SignInResult {
        switch result.outcome {
        case .success(let signedIn): return signedIn
        case .failure(let error):
            let steps = result.transcript.map { "\($0.from.rawValue) → \($0.to.rawValue): \($0.text)" }.joined(separator: "\n")
            Issue.record("the sign-in failed: \(error)\n\(steps)")
            throw error
        }
    }

    static func error(_ result: ScenarioResult) -> SwitchbackError? {
        if case .failure(let error) = result.outcome { return error }
        Issue.record("the sign-in succeeded where it should have failed")
        return nil
    }

    static func said(_ result: ScenarioResult, _ text: String) -> Bool {
        result.transcript.contains { $0.text.contains(text) }
    }

    @Test("every allowed combination signs in, at the provider's assurance level", arguments: allowed)
    func allowedCombination(_ combination: Combination) async throws {
        let result = try await Self.run(
            Scenario(
                provider: combination.provider, strategy: combination.strategy, pattern: combination.pattern, environment: combination.environment
            ))
        let signedIn = try Self.signedIn(result)
        // UAE Pass's sub is UAEPASS/<uuid> (its contract).
        #expect(signedIn.subject == (combination.provider == "uaepass" ? "UAEPASS/9b1f7c2e-alice" : "9b1f7c2e-alice"))
        #expect(signedIn.acr == Self.expectedACR[combination.provider] ?? nil)
        // Singpass's FAPI client is the companion: the app gets its session, never the DPoP-bound tokens.
        #expect((signedIn.companion?.session != nil) == (combination.provider == "singpass"))
        #expect(!result.transcript.contains { $0.text.contains("code=") && !$0.text.contains("code=‹redacted›") }, "no code in the narration")
    }

    /// The strategies each preset refuses, and why, checked against the refusal.
    static let refused: [Combination] = ProviderPreset.all.flatMap { preset in
        let environments: [AuthenticatorRule.Environment] = preset.name == "uaepass" ? [.production, .staging] : [.production]
        return environments.flatMap { environment in
            UserAgentStrategy.allCases.filter { !preset.usableStrategies(in: environment).contains($0) }.map {
                Combination(provider: preset.name, environment: environment, strategy: $0, pattern: .providerPage)
            }
        }
    }

    @Test("every forbidden combination is refused with a typed error before anything is shown", arguments: refused)
    func refusedCombination(_ combination: Combination) async throws {
        let result = try await Self.run(
            Scenario(provider: combination.provider, strategy: combination.strategy, environment: combination.environment))
        #expect(Self.error(result)?.code == .strategyNotSupported)
        #expect(!Self.said(result, "shows a"), "no user agent was shown")
    }

    @Test("return patterns a user agent cannot use are refused: the WebView rewrite cannot return through the provider's page")
    func refusedPattern() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, pattern: .providerPage))
        #expect(Self.error(result)?.code == .strategyNotSupported)
        let bankID = try await Self.run(Scenario(provider: "bankid-no", strategy: .systemBrowser, pattern: .appScheme))
        #expect(Self.error(bankID)?.code == .strategyNotSupported, "app_callback_uri must be a universal link")
    }

    @Test(
        "BankID SE from a WebView: the app opens https://app.bankid.com/ first, and bankid:/// only when no app claims it",
        arguments: [true, false])
    func universalLinkFirst(claimed: Bool) async throws {
        let result = try await Self.run(
            Scenario(provider: "bankid-se", strategy: .webView, pattern: .universalLink, authenticatorUniversalLinks: claimed))
        #expect(try Self.credential(result).acr == BankIDSweden.loa3ACR)
        #expect(Self.said(result, "opens https://app.bankid.com/?autostarttoken="), "the universal link is tried first")
        #expect(Self.said(result, "opens BankID by its universal link") == claimed)
        #expect(Self.said(result, "finds no app claiming app.bankid.com") == !claimed)
        #expect(Self.said(result, "opens bankid:///?autostarttoken=") == !claimed, "the custom scheme only as the fallback")
    }

    @Test("a provider that refuses embedded WebViews, met through a preset that allows one: userAgentRefused, not a hang")
    func refusedWebView() async throws {
        let result = try await Self.run(Scenario(provider: "generic", strategy: .webView, variants: ["no-webview"]))
        #expect(Self.error(result)?.code == .userAgentRefused)
        #expect(Self.said(result, "closes the user agent"))
    }

    @Test(
        "a provider that answers by form_post although the app asked for none: the WebView's auto-submitted form is intercepted and the sign-in fails typed"
    )
    func unexpectedFormPost() async throws {
        let result = try await Self.run(Scenario(provider: "generic", strategy: .webView, emulatorProfile: "apple-form-post"))
        #expect(Self.error(result)?.code == .stateMissing, "the form's body never reaches the app, so the callback has no state")
        #expect(Self.said(result, "asks whether to load com.example.app:/oauth/callback"))
    }

    @Test("staging scheme bug: the staging page opens uaepass://, the WebView sends it to the staging app, and the sign-in completes")
    func stagingSchemeBug() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, environment: .staging, stagingSchemeBug: true))
        _ = try Self.credential(result)
        #expect(Self.said(result, "asks whether to load uaepass://digitalid"))
        #expect(Self.said(result, "opens uaepassstg://digitalid"))
        #expect(Self.said(result, "opens UAE Pass (staging app)"))
        #expect(!Self.said(result, "production app"))
    }

    @Test(
        "every uaepass parameter shape and hand-off delivery signs in through the WebView",
        arguments: [
            "successURL", "double-encoded", "trailing-parameters", "no-closeondone", "handoff-meta-refresh", "handoff-302",
        ])
    func uaePassVariant(_ variant: String) async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, variants: [variant]))
        _ = try Self.credential(result)
        #expect(Self.said(result, "the user approves with biometrics"), "the on-device sign-in, in the UAE Pass app")
    }

    @Test(
        "decline in the authenticator: the provider's failure page answers access_denied (or its cancelled variant)",
        arguments: [
            ("uaepass", [String](), "access_denied"), ("uaepass", ["decline-cancelled"], "cancelled"), ("bankid-no", [], "access_denied"),
            ("mitid", [], "access_denied"),
        ])
    func decline(provider: String, variants: [String], error: String) async throws {
        let result = try await Self.run(Scenario(provider: provider, variants: variants, decision: .decline))
        let failure = Self.error(result)
        #expect(failure?.code == .authorizationError)
        #expect(failure?.oauthError?.error == error)
    }

    @Test("foreign successurl host: a tampered page's link is refused in the WebView; the authenticator never opens, nothing is saved to load")
    func foreignSuccessURL() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, variants: ["foreign-successurl"]))
        #expect(Self.error(result)?.code == .foreignResumeURL)
        #expect(!Self.said(result, "opens UAE Pass"))
        #expect(!Self.said(result, "attacker.example"), "the foreign URL is neither opened nor loaded")
        #expect(Self.said(result, "closes the user agent"))
    }

    @Test("decline where the provider never answers (decline-never): the sign-in times out, it does not hang")
    func declineNever() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, variants: ["decline-never"], decision: .decline)) {
            rig in
            let spinning = try await rig.waitFor("Please wait")
            #expect(spinning, "the provider's cancel page spins")
            await rig.device.advance(by: 600)
        }
        #expect(Self.error(result)?.code == .timedOut)
    }

    @Test(
        "UAE Pass pattern A through the system browser needs a persistent login cookie: with a session cookie Safari opens the success URL without it (an authentication session shares only persistent cookies) and the user is stuck until closing the sheet; the WebView works"
    )
    func sessionCookieStrandsSystemBrowser() async throws {
        let stranded = try await Self.run(
            Scenario(provider: "uaepass", strategy: .systemBrowser, environment: .production, variants: ["session-cookie"])
        ) { rig in
            let expired = try await rig.waitFor("shows \"Session expired\"")
            #expect(expired, "Safari shows the provider's expired-session page")
            await rig.device.userClosesUserAgent()
        }
        #expect(Self.error(stranded)?.code == .userCancelled)
        let webView = try await Self.run(
            Scenario(provider: "uaepass", strategy: .webView, environment: .production, variants: ["session-cookie"]))
        _ = try Self.credential(webView)
        #expect(Self.said(webView, "the user approves with biometrics"))
    }

    @Test("authenticator not installed: the preset asks for the web sign-in instead")
    func authenticatorNotInstalled() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, authenticatorInstalled: false))
        _ = try Self.credential(result)
        #expect(Self.said(result, "signs in with username and password"))
    }

    @Test(
        "the authenticator on another phone: the page's QR code is scanned there (BankID, Singpass, MitID after the user ID) or its number picked there (UAE Pass); the waiting page then continues",
        arguments: [
            "uaepass", "mitid", "bankid-se", "singpass",
        ])
    func otherPhone(provider: String) async throws {
        let result = try await Self.run(Scenario(provider: provider, strategy: provider == "uaepass" ? .webView : nil, otherPhone: true))
        let signedIn = try Self.signedIn(result)
        #expect(signedIn.acr == Self.expectedACR[provider] ?? nil)
        #expect(
            Self.said(result, provider == "uaepass" ? "picks the number the page shows" : "scans the QR code with the app on the other phone"))
        #expect(result.transcript.contains { $0.from == .otherPhone && $0.text == "the user approves with biometrics" })
        #expect(!result.transcript.contains { $0.from == .authenticator || $0.to == .authenticator }, "no authenticator on this phone")
        #expect(Self.said(result, "the waiting page sees the app has answered and continues"))
    }

    @Test("MitID with a code display: no app anywhere; the user types the code display's code and the password, and the page returns to the app")
    func codeDisplay() async throws {
        let result = try await Self.run(Scenario(provider: "mitid", codeDisplay: true))
        #expect(try Self.signedIn(result).acr == MitID.substantialACR)
        #expect(Self.said(result, "types their user ID, the code the code display shows, and their password"))
        #expect(!result.transcript.contains { $0.from == .authenticator || $0.to == .authenticator || $0.from == .otherPhone })
    }

    @Test(
        "MitID through Signaturgruppen in a Safari view: the broker's plain redirect loads the app's page at the redirect URI (the companion's, on api.example.com), whose button opens the app's universal link with the response; a session catches the redirect itself"
    )
    func mitIDResponsePage() async throws {
        let safari = try await Self.run(Scenario(provider: "mitid", strategy: .safariView))
        #expect(try Self.signedIn(safari).acr == MitID.substantialACR)
        #expect(Self.said(safari, "shows \"Almost done\" (HTTP 200)"))
        #expect(Self.said(safari, "taps \"Return to the app\""))
        #expect(Self.said(safari, "redirects to https://api.example.com/response"))
        let session = try await Self.run(Scenario(provider: "mitid", strategy: .systemBrowser))
        #expect(try Self.signedIn(session).acr == MitID.substantialACR)
        #expect(Self.said(session, "the authentication session catches its callback https://app.example.com/oauth/callback"))
        #expect(!Self.said(session, "Almost done"))
        // An app built for a broker page with a button (its redirect URI its own universal link): refused before
        // anything is shown, naming what it needs, instead of a Safari view left on the app's domain.
        var bare = Scenario(provider: "mitid", strategy: .safariView)
        bare.withoutResponsePage = true
        let refused = try await Self.run(bare)
        #expect(Self.error(refused)?.code == .strategyNotSupported)
        #expect(Self.error(refused)?.message.contains("AppLinks.responseLink") == true)
        #expect(!refused.transcript.contains { $0.text.hasPrefix("shows a") }, "no user agent shown")
    }

    @Test(
        "declined on the other phone: the waiting page continues to the provider's refusal, access_denied", arguments: ["uaepass", "bankid-se"])
    func otherPhoneDeclines(provider: String) async throws {
        let result = try await Self.run(
            Scenario(provider: provider, strategy: provider == "uaepass" ? .webView : nil, decision: .decline, otherPhone: true))
        let error = Self.error(result)
        #expect(error?.oauthError?.error == "access_denied")
        if provider == "bankid-se" { #expect(error.flatMap(BankIDHintCode.init(failure:)) == .userCancel) }
    }

    @Test("kill and relaunch while in the authenticator: the WebView flow and pattern A continue from the journal")
    func killSurvives() async throws {
        for scenario in [
            Scenario(provider: "uaepass", strategy: .webView, environment: .staging, killDuringHandOff: true),
            Scenario(provider: "uaepass", strategy: .webView, pattern: .universalLink, environment: .production, killDuringHandOff: true),
            Scenario(provider: "uaepass", strategy: .systemBrowser, environment: .production, killDuringHandOff: true),
        ] {
            let result = try await Self.run(scenario)
            _ = try Self.credential(result)
            #expect(Self.said(result, "the system terminates the app"))
            #expect(Self.said(result, "reads back 1 interrupted sign-in from its journal"))
        }
    }

    @Test("kill and relaunch where the provider's page lived only in the closed user agent: a typed error, not a hang")
    func killInterrupts() async throws {
        for scenario in [
            Scenario(provider: "bankid-no", strategy: .systemBrowser, pattern: .universalLink, killDuringHandOff: true),
            Scenario(provider: "mitid", strategy: .safariView, pattern: .universalLink, killDuringHandOff: true),
            Scenario(provider: "singpass", strategy: .systemBrowser, pattern: .providerPage, killDuringHandOff: true),
        ] {
            let result = try await Self.run(scenario)
            #expect(Self.error(result)?.code == .flowInterrupted, "\(scenario.provider)")
        }
    }

    @Test("duplicate app-open URL: the authenticator's return delivered twice is refused the second time and redeemed once")
    func duplicateReturn() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, returnDeliveries: 2))
        _ = try Self.credential(result)
        #expect(Self.said(result, "refuses the link: callbackReplayed"))
    }

    @Test("became active without a callback: the saved page is reloaded after the grace period, never a cancellation; then the time limit")
    func becameActiveWithoutCallback() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, decision: .ignore)) { rig in
            let back = try await rig.waitFor("switches back by hand")
            #expect(back)
            let armed = try await rig.waitForTimers(2)
            #expect(armed, "the time limit and the grace period")
            await rig.device.advance(by: 1.9)
            let early = await rig.device.transcript.contains { $0.text.contains("loads the saved provider page") }
            #expect(!early, "not before the grace period")
            await rig.device.advance(by: 0.2)
            let reloaded = try await rig.waitFor("loads the saved provider page")
            #expect(reloaded)
            let states = await rig.app.coordinator.states
            #expect(states.values.allSatisfy { if case .resuming = $0 { true } else { false } }, "\(states)")
            await rig.device.advance(by: 600)
        }
        #expect(Self.error(result)?.code == .timedOut)
    }

    @Test("an unrelated universal link while waiting is left to the app; the sign-in goes on and can be cancelled once")
    func unrelatedUniversalLink() async throws {
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, decision: .ignore)) { rig in
            let coordinator = rig.app.coordinator
            var waited = 0
            while await !coordinator.states.values.contains(.awaitingAuthenticator), waited < 2000 {
                try await Task.sleep(nanoseconds: 5_000_000)
                waited += 1
            }
            let before = await coordinator.states
            let news = try #require(URL(string: "https://app.example.com/news/42"))
            #expect(await rig.device.openFromAnotherApp(news) == false, "routed to the app, which handles it itself")
            #expect(await coordinator.states == before)
            let flowID = try #require(before.keys.first)
            await coordinator.cancel(flowID)
            await coordinator.cancel(flowID)
        }
        #expect(Self.error(result)?.code == .userCancelled)
        #expect(Self.said(result, "handles the link itself: it belongs to no sign-in"))
    }

    @Test(
        "a signed-in app hands its session off through the companion: the page lands signed in, the access token in no URL",
        arguments: HandOffDestination.allCases)
    func sessionHandOff(_ destination: HandOffDestination) async throws {
        let device = LockedValue<SimulatedDevice?>(nil)
        let result = try await Self.run(Scenario(provider: "generic", strategy: .systemBrowser, handOff: destination)) { rig in
            device.withLock { $0 = rig.device }
        }
        let credential = try Self.credential(result)
        guard case .success(let landing)? = result.handOff else {
            Issue.record("the hand-off did not land: \(String(describing: result.handOff))")
            return
        }
        #expect(landing.url.path == "/session")
        #expect(landing.text.contains("9b1f7c2e-alice"))
        #expect(Self.said(result, destination == .systemBrowser ? "in Safari" : "opens a WebView of its own"))
        #expect(Self.said(result, "taps \"Continue as"), "the user confirmed on the redeem page")
        let visited = await (try #require(device.withLock { $0 })).navigationLog
        #expect(visited.contains { $0.path == "/handoff/redeem" })
        #expect(!visited.contains { $0.absoluteString.contains(credential.accessToken) }, "the access token in a URL")
    }
}
