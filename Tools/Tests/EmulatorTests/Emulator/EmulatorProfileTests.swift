import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The response-shape profiles (apple-form-post, legacy-implicit), strict redirect matching and the
/// refusal of embedded WebViews, driven by the core client over loopback.
@Suite("Emulator: response and redirect profiles")
struct EmulatorProfileTests {
    static func withEmulator(
        _ profile: Profile, configuration: EmulatorConfiguration = .defaults, _ body: (Emulator) async throws -> Void
    ) async throws {
        try await EmulatorHarness.withEmulator(profile: profile, configuration: configuration, body)
    }

    /// A client without PAR by default, so that refusals reach the front channel.
    static func client(
        _ emulator: Emulator, redirectURI: String = "com.example.app:/oauth/callback", par: ClientConfiguration.PARPolicy = .never
    ) throws -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "native-rs", redirectURI: try #require(URL(string: redirectURI)), pushedAuthorization: par),
            provider: .discovery(issuer: emulator.issuer)
        )
    }

    @Test("apple-form-post: form_post signs in; a query request gets its error by form_post, which the client reports as such")
    func appleFormPost() async throws {
        try await Self.withEmulator(.appleFormPost) { emulator in
            let client = try Self.client(emulator)
            #expect(try await client.metadata().responseModesSupported == ["form_post"])
            let credential = try await EmulatorFaultTests.signIn(client, mode: .formPost)
            #expect(credential.subject == "9b1f7c2e-alice")

            let session = try await client.prepareAuthorization(AuthorizationOptions(responseMode: .query))
            guard case .page(200, let html) = try await EmulatorBrowser().open(session.authorizationURL),
                let post = EmulatorBrowser.formPost(html)
            else {
                Issue.record("the refusal must come back as a form_post form")
                return
            }
            #expect(String(decoding: post.body, as: UTF8.self).contains("error=invalid_request"))
            await expectCode(.malformedResponse) {
                try await client.completeAuthorization(.formPost(post.action, body: post.body), session: session)
            }
            // Pushed, the same request is refused at the PAR endpoint, before any browser opens.
            await expectCode(.parFailed) {
                try await Self.client(emulator, par: .always).prepareAuthorization(AuthorizationOptions(responseMode: .query))
            }
        }
    }

    @Test("legacy-implicit: responses in the fragment by default; a client asking for fragment signs in, one expecting query is told why not")
    func legacyImplicit() async throws {
        try await Self.withEmulator(.legacyImplicit) { emulator in
            let client = try Self.client(emulator)
            let credential = try await EmulatorFaultTests.signIn(client, mode: .fragment)
            #expect(credential.subject == "9b1f7c2e-alice")

            // A session built without a response_mode: the provider picks its default, the fragment.
            let session = try await client.prepareAuthorization()
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                Issue.record("expected a redirect to the app")
                return
            }
            #expect(location.hasPrefix("com.example.app:/oauth/callback#code="))
            let error = await expectFailure("a fragment response to a query session must not sign in") {
                try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
            }
            #expect(error?.code == .malformedResponse)
            #expect(error?.message.contains("arrived in the fragment") == true)
        }
    }

    @Test("strict-redirects: https only, no query, exact match (a trailing slash is another URI)")
    func strictRedirects() async throws {
        var configuration = EmulatorConfiguration.defaults
        configuration.clients[0].redirectURIs += ["https://app.example.com/cb?tenant=1"]
        try await Self.withEmulator(.strictRedirect, configuration: configuration) { emulator in
            let https = try Self.client(emulator, redirectURI: "https://app.example.com/oauth/callback")
            #expect(try await EmulatorFaultTests.signIn(https).subject == "9b1f7c2e-alice")
            for refused in [
                "com.example.app:/oauth/callback", "http://127.0.0.1:8080/cb", "https://app.example.com/oauth/callback/",
                "https://app.example.com/cb?tenant=1",
            ] {
                let session = try await Self.client(emulator, redirectURI: refused).prepareAuthorization()
                guard case .page(400, let html) = try await EmulatorBrowser().open(session.authorizationURL) else {
                    Issue.record("\(refused) must be refused with an error page, never redirected to")
                    continue
                }
                #expect(html.contains("Invalid redirect URI"))
                await expectCode(.parFailed) { try await Self.client(emulator, redirectURI: refused, par: .always).prepareAuthorization() }
            }
        }
    }

    @Test("a profile that refuses embedded WebViews tells a WKWebView user agent so, and serves Safari")
    func refusesEmbeddedWebViews() async throws {
        var profile = Profile.generic
        profile.refusesEmbeddedWebViews = true
        try await Self.withEmulator(profile) { emulator in
            let client = try Self.client(emulator)
            let session = try await client.prepareAuthorization()
            let androidWebView =
                "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0 Mobile Safari/537.36"
            for userAgent in [EmulatorBrowser.webView, androidWebView] {
                guard case .page(403, let html) = try await EmulatorBrowser(userAgent: userAgent).open(session.authorizationURL) else {
                    Issue.record("an embedded WebView must be refused: \(userAgent)")
                    continue
                }
                #expect(html.contains("Browser not supported"))
            }
            let landing = try await EmulatorBrowser(userAgent: EmulatorBrowser.safari).signIn(session.authorizationURL)
            #expect(try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session).subject == "9b1f7c2e-alice")
        }
    }

    @Test("profile and variant names: every profile by name; unknown names fail naming what exists")
    func names() throws {
        for profile in Profile.all {
            #expect(try Profile.named(profile.name).get().name == profile.name)
        }
        guard case .failure(let unknown) = Profile.named("nowhere") else {
            Issue.record("an unknown profile must fail")
            return
        }
        #expect(unknown.description.contains("uaepass"))
        guard case .failure(let variant) = Profile.named("uaepass", variants: ["staging", "sideways"]) else {
            Issue.record("an unknown variant must fail")
            return
        }
        #expect(variant.description.contains("sideways") && variant.description.contains("decline-never"))
        guard case .failure = Profile.named("generic", variants: ["staging"]) else {
            Issue.record("generic has no variants")
            return
        }
        let staging = try Profile.named("uaepass", variants: ["staging-bug", "handoff-302"]).get()
        #expect(staging.handOffDelivery == .redirect)
        guard case .uaePass(let options) = staging.handOff else {
            Issue.record("uaepass hands off")
            return
        }
        #expect(options.environment == .staging && options.scheme == "uaepass")
    }
}
