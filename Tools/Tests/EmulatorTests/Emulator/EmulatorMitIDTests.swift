// The emulator needs macOS 14 (Hummingbird 2) while the package's floor is macOS 13, so these tests
// are compiled where CI runs them.
#if os(Linux)
    import Foundation
    import Testing
    @_spi(SwitchbackInternals) @testable import Switchback
    import SwitchbackEmulator
    import SwitchbackTesting

    /// The mitid profile: app switch back by a universal link without parameters, then the broker's code
    /// on a page the user taps (two hops), allow-listed return URLs, no embedded WebViews.
    @Suite("Emulator: mitid profile")
    struct EmulatorMitIDTests {
        static let resumeURL = "https://app.example.com/appswitch"

        static func withEmulator(_ body: (Emulator, OIDCClient) async throws -> Void) async throws {
            try await EmulatorHarness.withEmulator(profile: .mitID) { emulator in
                let client = OIDCClient(
                    configuration: ClientConfiguration(
                        clientID: "native-rs", redirectURI: try #require(URL(string: "https://app.example.com/oauth/callback"))),
                    provider: .discovery(issuer: emulator.issuer)
                )
                try await body(emulator, client)
            }
        }

        static func appSwitch(_ resumeURL: String) -> AuthorizationOptions {
            AuthorizationOptions(loginHint: "appswitch:ios appswitch:resumeUrl:\(resumeURL)")
        }

        /// The link on the tap-to-return page.
        static func returnLink(_ landing: EmulatorBrowser.Landing) throws -> URL {
            guard case .page(200, let html) = landing, let marker = html.range(of: "id=\"return\" href=\""),
                let end = html[marker.upperBound...].firstIndex(of: "\"")
            else {
                throw EmulatorBrowser.UnexpectedLanding(description: "no tap-to-return page: \(landing)")
            }
            return try #require(URL(string: EmulatorBrowser.unescape(String(html[marker.upperBound..<end]))))
        }

        @Test("two hops: the MitID app returns by the bare universal link, the broker's page then needs a tap to deliver code and state")
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
                // Hop 2: the browser (brought forward by the app) finishes; the code arrives only on a tap.
                let continued = try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer)
                let tapped = try Self.returnLink(try await browser.open(continued))
                #expect(tapped.absoluteString.hasPrefix("https://app.example.com/oauth/callback?code="))
                let credential = try await client.completeAuthorization(.redirect(tapped), session: session)
                #expect(credential.idTokenClaims?.acr == MitID.substantialACR)
            }
        }

        @Test("a resumeUrl that is not allow-listed for the client is an invalid_request, not a hand-off")
        func unlistedResumeURL() async throws {
            try await Self.withEmulator { _, client in
                let session = try await client.prepareAuthorization(Self.appSwitch("https://evil.example/appswitch"))
                let landing = try await EmulatorBrowser().open(session.authorizationURL)
                let error = await expectFailure("an unlisted resumeUrl must be refused") {
                    try await client.completeAuthorization(.redirect(try Self.returnLink(landing)), session: session)
                }
                #expect(error?.code == .authorizationError)
                #expect(error?.oauthError?.error == "invalid_request")
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
#endif
