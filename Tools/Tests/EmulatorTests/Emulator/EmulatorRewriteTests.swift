import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The core's WebView rewrite against the emulator's uaepass pages: every parameter-shape variant, both
/// environments (with the staging bug), approve and decline — the pattern A trick made to work.
@Suite("HandOffRewrite against the emulator")
struct EmulatorRewriteTests {
    static let returnTo = URL(string: "com.example.app:/handoff")!

    static func rule(_ emulator: Emulator) throws -> AuthenticatorRule {
        let host = try #require(URL(string: emulator.issuer)?.host)
        return AuthenticatorRule(
            schemes: [.production: "uaepass", .staging: "uaepassstg"], successParameters: ["successurl"], failureParameters: ["failureurl"],
            providerHosts: [host]
        )
    }

    @Test(
        "approve: rewritten link → authenticator returns to the app → the saved successurl in the same WebView → signed in",
        arguments: [
            ([UAEPassOptions.Variant](), AuthenticatorRule.Environment.production),
            ([.staging], .staging), ([.stagingBug], .staging),
            ([.camelCase, .doubleEncoded, .trailingParameters, .noCloseOnDone], .production),
        ])
    func approve(variants: [UAEPassOptions.Variant], environment: AuthenticatorRule.Environment) async throws {
        try await EmulatorUAEPassTests.withEmulator(variants) { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(EmulatorUAEPassTests.onDevice())
            let webView = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let (link, _) = try await webView.handOff(session.authorizationURL)
            let rewrite = try HandOffRewrite(
                link, rule: try Self.rule(emulator), environment: environment, returnTo: Self.returnTo, flowID: session.state)
            #expect(rewrite.link.scheme == (environment == .staging ? "uaepassstg" : "uaepass"))
            let back = try #require(try await EmulatorUAEPassTests.app(emulator).respond(to: rewrite.link, with: .approve()))
            #expect(HandOffRewrite.match(back, returnTo: Self.returnTo, flowID: session.state) == .success)
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await webView.open(rewrite.successURL)), session: session)
            #expect(credential.idTokenClaims?.acr == UAEPassOptions.onDeviceACR)
        }
    }

    @Test("decline: the authenticator returns to the app's failure URL; the saved failureurl gives access_denied, not a spinning page")
    func decline() async throws {
        try await EmulatorUAEPassTests.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(EmulatorUAEPassTests.onDevice())
            let webView = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let (link, _) = try await webView.handOff(session.authorizationURL)
            let rewrite = try HandOffRewrite(
                link, rule: try Self.rule(emulator), environment: .production, returnTo: Self.returnTo, flowID: session.state)
            let back = try #require(try await EmulatorUAEPassTests.app(emulator).respond(to: rewrite.link, with: .decline))
            #expect(HandOffRewrite.match(back, returnTo: Self.returnTo, flowID: session.state) == .failure)
            let landing = try await webView.open(try #require(rewrite.failureURL))
            let error = await expectFailure("a declined sign-in must not complete") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session)
            }
            #expect(error?.oauthError?.error == "access_denied")
        }
    }
}
