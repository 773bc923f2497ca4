import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackScenarios
import SwitchbackTesting

/// A wallet sign-in on the simulated phone: the app opens the wallet app (no user agent), the wallet answers
/// the companion, and its return link (a universal link) brings the one-time response_code the companion
/// hands the verified claims over for.
@Suite("End to end: a wallet as the authenticator")
struct WalletEndToEndTests {
    static func run(_ change: (inout Scenario) -> Void = { _ in }) async throws -> ScenarioResult {
        var scenario = Scenario(provider: Scenario.wallet)
        change(&scenario)
        return try await ScenarioRunner.run(scenario)
    }

    @Test("shared: the asked claims reach the app as one SignInResult; the return link is the app's universal link, its code only in the fragment")
    func shares() async throws {
        let result = try await Self.run()
        let presentation = try #require(try EndToEndTests.signedIn(result).presentation)
        let pid = try #require(presentation.claims("pid"))
        #expect(pid["given_name"] == "Erika" && pid["family_name"] == "Mustermann" && pid["birthdate"] == "1984-01-26")
        #expect(pid["nationality"] == nil, "held by the wallet, not asked for")
        #expect(EndToEndTests.said(result, "opens the wallet app"))
        #expect(EndToEndTests.said(result, "routes the universal link https://app.example.com/wallet-return#response_code=‹redacted› to the app"))
        #expect(!result.transcript.contains { $0.to == .userAgent }, "no user agent is shown for a wallet")
    }

    @Test("declined in the wallet: authorizationError, access_denied")
    func declines() async throws {
        let result = try await Self.run { $0.decision = .decline }
        let error = EndToEndTests.error(result)
        #expect(error?.code == .authorizationError && error?.oauthError?.error == "access_denied")
    }

    @Test(
        "a faulty wallet is refused by the companion: the app gets presentationInvalid",
        arguments: ["wrong-nonce", "wrong-audience", "tampered-disclosure", "expired", "unknown-issuer", "withheld-claim"])
    func faulty(_ fault: String) async throws {
        let result = try await Self.run { $0.walletFault = fault }
        #expect(EndToEndTests.error(result)?.code == .presentationInvalid)
    }

    @Test("a replayed answer is refused at the companion; the genuine answer signs in")
    func replayed() async throws {
        let result = try await Self.run { $0.walletFault = "replayed-response" }
        #expect(try EndToEndTests.signedIn(result).presentation != nil)
        #expect(EndToEndTests.said(result, "posts the same answer again: HTTP 400"))
    }

    @Test("the app is terminated while the wallet is in front: the return link relaunches it and the journal finishes the sign-in")
    func killed() async throws {
        let result = try await Self.run { $0.killDuringHandOff = true }
        #expect(try EndToEndTests.signedIn(result).presentation?.claims("pid")?["given_name"] == "Erika")
        #expect(EndToEndTests.said(result, "the system terminates the app"))
        #expect(EndToEndTests.said(result, "reads back 1 interrupted sign-in from its journal"))
    }

    @Test("another app opens the return link with a code of its own while the wallet is in front: the sign-in goes on; the wallet's link signs in")
    func forgedReturn() async throws {
        let result = try await Self.run { $0.forgedReturn = true }
        #expect(EndToEndTests.said(result, "taps a link in another app: https://app.example.com/wallet-return#response_code=‹redacted›"))
        #expect(try EndToEndTests.signedIn(result).presentation?.claims("pid")?["given_name"] == "Erika")
    }

    @Test("no wallet installed: authenticatorUnavailable, naming the wallet link's scheme")
    func noWallet() async throws {
        let result = try await Self.run { $0.authenticatorInstalled = false }
        let error = EndToEndTests.error(result)
        #expect(error?.code == .authenticatorUnavailable && error?.message.contains("openid4vp:") == true)
    }
}
