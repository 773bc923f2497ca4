import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackScenarios
import SwitchbackTesting
import ToolsTestSupport

/// Sign-ins the companion runs, on the simulated phone: Singpass's FAPI client on the companion (the
/// exchange route), and MitID answering the companion's https page (backend completion).
@Suite("End to end: sign-ins the companion runs")
struct CompanionRouteEndToEndTests {
    /// Lines where something reached the app: a routed link or a caught callback.
    static func reachedApp(_ result: ScenarioResult) -> [String] {
        result.transcript.filter { $0.to == .app && ($0.text.contains("routes") || $0.text.contains("catches its callback")) }.map(\.text)
    }

    @Test(
        "MitID backend completion: signed in with the companion's session in every browser MitID allows; no code reaches the app",
        arguments: [
            UserAgentStrategy.safariView, .systemBrowser, .ephemeralBrowser,
        ])
    func backendCompletion(strategy: UserAgentStrategy) async throws {
        let result = try await ScenarioRunner.run(
            Scenario(provider: "mitid", strategy: strategy, pattern: .universalLink, backendCompletion: true))
        let signedIn = try EndToEndTests.signedIn(result)
        #expect(signedIn.subject == "9b1f7c2e-alice")
        #expect(signedIn.acr == MitID.substantialACR)
        #expect(signedIn.companion?.session != nil)
        let links = Self.reachedApp(result)
        #expect(links.contains { $0.contains("https://app.example.com/appswitch") }, "MitID's app switch came back first")
        #expect(!links.isEmpty && links.allSatisfy { !$0.contains("code=") && !$0.contains("state=") }, "\(links)")
    }

    @Test("MitID backend completion: a decline in the MitID app ends the sign-in as access_denied, reported by the companion")
    func backendCompletionDecline() async throws {
        let result = try await ScenarioRunner.run(Scenario(provider: "mitid", strategy: .safariView, decision: .decline, backendCompletion: true))
        let error = EndToEndTests.error(result)
        #expect(error?.code == .authorizationError)
        #expect(error?.oauthError?.error == "access_denied")
    }

    @Test("MitID backend completion: the app killed while MitID is in front cannot continue (the Safari view held the page): flowInterrupted")
    func backendCompletionKilled() async throws {
        let result = try await ScenarioRunner.run(
            Scenario(provider: "mitid", strategy: .safariView, killDuringHandOff: true, backendCompletion: true))
        #expect(EndToEndTests.error(result)?.code == .flowInterrupted)
        #expect(EndToEndTests.said(result, "reads back 1 interrupted sign-in from its journal"))
    }

    @Test(
        "Singpass through the companion: the pushed request carries no PKCE from the app, app_launch_url brings the user back, the app gets a session"
    )
    func singpass() async throws {
        for strategy in [UserAgentStrategy.systemBrowser, .safariView] {
            let result = try await ScenarioRunner.run(Scenario(provider: "singpass", strategy: strategy))
            let signedIn = try EndToEndTests.signedIn(result)
            #expect(signedIn.acr == Singpass.acr)
            #expect(signedIn.companion?.session != nil && signedIn.companion?.tokens == nil, "DPoP-bound tokens stay with the companion")
            #expect(EndToEndTests.said(result, "request_uri=‹redacted›"))
            #expect(EndToEndTests.said(result, "opens https://app.example.com/appswitch"), "the forwarded app_launch_url")
        }
    }
}
