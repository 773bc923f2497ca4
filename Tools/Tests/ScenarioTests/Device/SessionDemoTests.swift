import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackScenarios
import SwitchbackTesting
import ToolsTestSupport

/// What `switchback demo --concurrent-refresh` and `--locked-keychain` show, checked on their results.
@Suite("Demo: after sign-in")
struct SessionDemoTests {
    @Test("100 concurrent callers after a sign-in: one refresh request under strict rotation; a locked Keychain waits for the unlock")
    func afterSignIn() async throws {
        let result = try await ScenarioRunner.run(Scenario(provider: "bankid-se", concurrentRefresh: 100, lockedKeychain: true))
        _ = try EndToEndTests.signedIn(result)
        #expect(result.afterSignIn.count == 2)
        #expect(result.afterSignInSucceeded)
        #expect(try result.afterSignIn[0].get().hasPrefix("100 concurrent callers: 1 refresh request"))
        #expect(EndToEndTests.said(result, "credentialUnavailable, not signed out"))
        #expect(EndToEndTests.said(result, "1 caller waiting"))
        #expect(EndToEndTests.said(result, "still signed in as 9b1f7c2e-alice"))
    }

    @Test("a sign-in the companion ran has no app credential to show them with: the demo reports it as failed, not as shown")
    func companionSignIn() async throws {
        let result = try await ScenarioRunner.run(Scenario(provider: "singpass", concurrentRefresh: 10))
        #expect(!result.afterSignInSucceeded)
    }
}
