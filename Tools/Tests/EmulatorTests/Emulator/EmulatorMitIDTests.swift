import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The mitid profile: app switch back by a universal link without parameters, then the broker's code by
/// a plain redirect to the https redirect URI (both brokers), allow-listed return URLs, no
/// embedded WebViews; each broker's syntax for the app switch.
@Suite("Emulator: mitid profile")
struct EmulatorMitIDTests {
    static let resumeURL = "https://app.example.com/appswitch"

    static func withEmulator(broker: MitIDBroker = .signaturgruppen, _ body: (Emulator, OIDCClient) async throws -> Void) async throws {
        let profile = try Profile.named("mitid", variants: broker == .idura ? ["idura"] : []).get()
        try await EmulatorHarness.withEmulator(profile: profile) { emulator in
            let client = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "native-rs", redirectURI: try #require(URL(string: "https://app.example.com/oauth/callback"))),
                provider: .discovery(issuer: emulator.issuer)
            )
            try await body(emulator, client)
        }
    }

    /// The app switch in `broker`'s syntax: Idura's `login_hint`, Signaturgruppen's `idp_params` (written
    /// out here as its documentation shows it, not by the preset).
    static func appSwitch(_ resumeURL: String, broker: MitIDBroker = .signaturgruppen) -> AuthorizationOptions {
        switch broker {
        case .idura:
            AuthorizationOptions(loginHint: "appswitch:ios appswitch:resumeUrl:\(resumeURL)")
        case .signaturgruppen:
            AuthorizationOptions(extraParameters: [
                ("idp_values", "mitid"),
                ("idp_params", #"{"mitid":{"enable_app_switch":true,"app_switch_os":"ios","app_switch_url":"\#(resumeURL)"}}"#),
            ])
        }
    }

    /// The link on a tap-to-return page (Singpass's `app_claimed_https`).
    static func returnLink(_ landing: EmulatorBrowser.Landing) throws -> URL {
        guard case .page(200, let html) = landing, let marker = html.range(of: "id=\"return\" href=\""),
            let end = html[marker.upperBound...].firstIndex(of: "\"")
        else {
            throw EmulatorBrowser.UnexpectedLanding(description: "no tap-to-return page: \(landing)")
        }
        return try #require(URL(string: EmulatorBrowser.unescape(String(html[marker.upperBound..<end]))))
    }

    /// Where a broker's plain redirect goes (MitID's last step).
    static func redirected(_ landing: EmulatorBrowser.Landing) throws -> URL {
        guard case .redirect(let location) = landing, let url = URL(string: location) else {
            throw EmulatorBrowser.UnexpectedLanding(description: "no redirect: \(landing)")
        }
        return url
    }

    @Test(
        "two hops: the MitID app returns by the bare universal link, then the broker redirects plainly to the https redirect URI with code and state (Signaturgruppen, \"MitID on iOS\": the button is the integrator's)"
    )
    func twoHops() async throws {
        try await Self.withEmulator { emulator, client in
            let session = try await client.prepareAuthorization(Self.appSwitch(Self.resumeURL))
            let browser = EmulatorBrowser()
            // The page does not navigate by itself: the user taps "Open MitID app", a universal link.
            guard case .page(200, let page) = try await browser.open(session.authorizationURL) else {
                Issue.record("the MitID page must wait for the user's tap")
                return
            }
            let shown = WebPage(url: try #require(URL(string: emulator.issuer)), html: page)
            let link = try #require(shown.tapHandOff)
            #expect(link.label == "Open MitID app")
            #expect(link.url.absoluteString.hasPrefix("https://\(MitID.appSwitchHost)/authenticate?txn="))
            #expect(shown.handOffLink() == nil, "no script navigation")
            let back = try #require(try await EmulatorUAEPassTests.app(emulator).respond(to: link.url, with: .approve()))
            // Hop 1: the universal link, without a single parameter.
            #expect(back.absoluteString == Self.resumeURL)
            #expect(back.query == nil && back.fragment == nil)
            // Hop 2: the browser (brought forward by the app) finishes with a redirect, no page of the broker's own.
            let continued = try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer)
            guard case .redirect(let location) = try await browser.open(continued), let callback = URL(string: location) else {
                Issue.record("Signaturgruppen redirects to the redirect URI; a page of its own would hide that the app's page must have the button")
                return
            }
            #expect(callback.absoluteString.hasPrefix("https://app.example.com/oauth/callback?code="))
            let credential = try await client.completeAuthorization(.redirect(callback), session: session)
            #expect(credential.idTokenClaims?.acr == MitID.substantialACR)
        }
    }

    @Test(
        "Idura: login_hint's resumeUrl, then no page to tap: a plain redirect to the https redirect URI, which the authentication session catches"
    )
    func idura() async throws {
        try await Self.withEmulator(broker: .idura) { emulator, client in
            let session = try await client.prepareAuthorization(Self.appSwitch(Self.resumeURL, broker: .idura))
            let browser = EmulatorBrowser()
            guard case .page(200, let page) = try await browser.open(session.authorizationURL) else {
                Issue.record("the MitID page must wait for the user's tap")
                return
            }
            let issuer = try #require(URL(string: emulator.issuer))
            let link = try #require(WebPage(url: issuer, html: page).tapHandOff)
            let back = try await EmulatorUAEPassTests.app(emulator).respond(to: link.url, with: .approve())
            #expect(back?.absoluteString == Self.resumeURL)
            guard case .redirect(let location) = try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer)),
                let callback = URL(string: location)
            else {
                Issue.record("Idura redirects to the redirect URI")
                return
            }
            #expect(try await client.completeAuthorization(.redirect(callback), session: session).idTokenClaims?.acr == MitID.substantialACR)
        }
    }

    @Test(
        "each broker ignores the other's syntax: the MitID app is told no way back and does not return to the app",
        arguments: MitIDBroker.allCases)
    func otherBrokersSyntax(broker: MitIDBroker) async throws {
        try await Self.withEmulator(broker: broker) { emulator, client in
            let other: MitIDBroker = broker == .idura ? .signaturgruppen : .idura
            let session = try await client.prepareAuthorization(Self.appSwitch(Self.resumeURL, broker: other))
            guard case .page(200, let page) = try await EmulatorBrowser().open(session.authorizationURL) else {
                Issue.record("the MitID page must wait for the user's tap")
                return
            }
            let issuer = try #require(URL(string: emulator.issuer))
            let link = try #require(WebPage(url: issuer, html: page).tapHandOff)
            #expect(!link.url.absoluteString.contains("app_switch_url"))
            #expect(try await EmulatorUAEPassTests.app(emulator).respond(to: link.url, with: .approve()) == nil)
        }
    }

    @Test(
        "an app switch URL that is not allow-listed, or Signaturgruppen's enable_app_switch without app_switch_os and app_switch_url, is an invalid_request",
        arguments: MitIDBroker.allCases)
    func unlistedResumeURL(broker: MitIDBroker) async throws {
        try await Self.withEmulator(broker: broker) { _, client in
            var refused = [Self.appSwitch("https://evil.example/appswitch", broker: broker)]
            if broker == .signaturgruppen {
                refused.append(AuthorizationOptions(extraParameters: [("idp_params", #"{"mitid":{"enable_app_switch":true}}"#)]))
                refused.append(AuthorizationOptions(extraParameters: [("idp_params", "not json")]))
            }
            for options in refused {
                // A malformed request is refused where it arrives: at PAR, or at the authorization endpoint.
                let session: AuthorizationSession
                do {
                    session = try await client.prepareAuthorization(options)
                } catch let error as SwitchbackError {
                    #expect(error.code == .parFailed && error.oauthError?.error == "invalid_request", "\(error)")
                    continue
                }
                let landing = try await EmulatorBrowser().open(session.authorizationURL)
                let error = await expectFailure("the request must be refused") {
                    // Both brokers answer by a redirect to the redirect URI.
                    try await client.completeAuthorization(.redirect(try Self.redirected(landing)), session: session)
                }
                #expect(error?.code == .authorizationError)
                #expect(error?.oauthError?.error == "invalid_request")
            }
        }
    }

    @Test("an embedded WebView is refused; a custom-scheme redirect URI too (https only)")
    func refusals() async throws {
        try await Self.withEmulator { emulator, client in
            let session = try await client.prepareAuthorization(Self.appSwitch(Self.resumeURL))
            guard case .page(403, _) = try await EmulatorBrowser(userAgent: EmulatorBrowser.webView).open(session.authorizationURL) else {
                Issue.record("MitID must refuse an embedded WebView")
                return
            }
            let customScheme = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "native-rs", redirectURI: try #require(URL(string: "com.example.app:/oauth/callback")), pushedAuthorization: .never
                ),
                provider: .discovery(issuer: emulator.issuer)
            )
            let refused = try await customScheme.prepareAuthorization()
            guard case .page(400, _) = try await EmulatorBrowser().open(refused.authorizationURL) else {
                Issue.record("a custom-scheme redirect URI must be refused")
                return
            }
        }
    }
}
