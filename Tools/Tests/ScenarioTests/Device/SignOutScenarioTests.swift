import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackScenarios
import SwitchbackTesting
import ToolsTestSupport

/// Sign-out on the simulated device, through the user agent each sign-in used: the provider's end-session
/// page shown by the same host and caught on its way back as a sign-in's return is, checked by its `state`.
@Suite("Sign-out through the sign-in's user agent", .serialized)
struct SignOutScenarioTests {
    /// One combination per preset and user agent in which the app holds the credential itself.
    static let combinations: [EndToEndTests.Combination] = {
        var seen = Set<String>()
        return EndToEndTests.allowed.filter { combination in
            // Singpass's FAPI client is the companion: the app holds a session there, not the provider's tokens.
            combination.provider != "singpass" && seen.insert("\(combination.provider) \(combination.strategy)").inserted
        }
    }()

    /// Why a provider's tokens are not revoked, where they are not.
    static let notRevoked: [String: SwitchbackError.Code] = [
        // UAE Pass documents authorize, token, userinfo, logout and introspect, and no revocation endpoint:
        // the companion (its confidential client) answers that it has none to call.
        "uaepass": .tokenEndpointError
    ]

    /// The presets whose client is confidential, its secret at the companion: their tokens are revoked
    /// through the companion (`POST /revoke`), which the coordinator does since it redeems their codes.
    static let revokedThroughCompanion: Set<String> = ["uaepass", "bankid-no"]

    @Test("revoked, removed, and the provider's page shown in the same user agent and back with its state", arguments: combinations)
    func signOut(_ combination: EndToEndTests.Combination) async throws {
        let result = try await ScenarioRunner.run(
            Scenario(
                provider: combination.provider, strategy: combination.strategy, pattern: combination.pattern, environment: combination.environment,
                signOut: true))
        _ = try EndToEndTests.signedIn(result)
        let signOut = try #require(result.signOut).get()
        #expect((signOut.revokedThrough != .provider) == Self.revokedThroughCompanion.contains(combination.provider), "\(signOut.revokedThrough)")
        if let reason = Self.notRevoked[combination.provider] {
            #expect(signOut.revoked.isEmpty)
            #expect(signOut.revocationError?.code == reason)
        } else {
            #expect(signOut.revoked == ["refresh_token", "access_token"])
            #expect(signOut.revocationError == nil)
        }
        if combination.strategy == .ephemeralBrowser {
            // The ephemeral sign-in left no provider session: nothing is shown, so no sign-in prompt appears.
            #expect(signOut.endSession == nil)
            #expect(signOut.userAgent == nil)
            #expect(!EndToEndTests.said(result, "logout") && !EndToEndTests.said(result, "end_session"))
        } else {
            // UAE Pass's logout returns no state: the return is the right address, not a proof.
            #expect(signOut.userAgent == (combination.provider == "uaepass" ? .returnedWithoutState : .returned))
            #expect(EndToEndTests.said(result, "shows a \(combination.strategy)"), "the end-session page is shown in the sign-in's user agent")
            #expect(EndToEndTests.said(result, "signed out: ") && EndToEndTests.said(result, "provider page returned"))
            #expect((signOut.endSession?.state == nil) == (combination.provider == "uaepass"))
        }
    }
}
