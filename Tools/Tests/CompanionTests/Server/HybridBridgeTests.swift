import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// The hybrid bridge against a real companion and emulator over HTTP: the web app's trigger, the browser's
/// sign-in, the deep link back, and the web app's one redemption.
@Suite("Hybrid bridge")
struct HybridBridgeTests {
    /// A browser double: records what it was asked to show and whether it was closed.
    final class Browser: HybridBridge.Browser {
        let shown = LockedValue<[URL]>([])
        let closed = LockedValue(0)
        let fails: Bool
        init(fails: Bool = false) { self.fails = fails }
        func show(_ url: URL, returnScheme: String) async throws {
            if fails { throw CancellationError() }
            shown.withLock { $0.append(url) }
        }
        func close() async { closed.withLock { $0 += 1 } }
    }

    struct Harness {
        let rig: CompanionRig
        let bridge: HybridBridge
        let browser: Browser
        let loaded: LockedValue<[URL]>
        /// Every URL any party saw, for the no-token check.
        let seen: LockedValue<[String]>
    }

    static let binding = "web-session-7f3a9c1e2b4d6f80"

    /// Runs `body` with a started harness and stops its rig afterwards.
    static func withHarness<Result>(
        returnScheme: String = "myapp", browser: Browser = Browser(), _ body: (Harness) async throws -> Result
    ) async throws -> Result {
        try await withStopping(try await harness(returnScheme: returnScheme, browser: browser), stop: { await $0.rig.stop() }, body)
    }

    static func harness(returnScheme: String = "myapp", browser: Browser = Browser()) async throws -> Harness {
        let rig = try await CompanionRig.start()
        let loaded = LockedValue<[URL]>([])
        let seen = LockedValue<[String]>([])
        let bridge = HybridBridge(
            .init(webOrigin: URL(string: "https://web.example.com")!, returnScheme: returnScheme),
            companion: CompanionClient(rig.companion.baseURL, transport: rig.transport), browser: browser,
            loadInWebView: { url in
                loaded.withLock { $0.append(url) }
                seen.withLock { $0.append(url.absoluteString) }
            }
        )
        return Harness(rig: rig, bridge: bridge, browser: browser, loaded: loaded, seen: seen)
    }

    /// The browser's part: sign alice in at the provider and follow the companion to the deep link.
    static func browse(_ harness: Harness, mode: String) async throws -> URL {
        let authorizationURL = try #require(harness.browser.shown.withLock { $0 }.last)
        harness.seen.withLock { $0.append(authorizationURL.absoluteString) }
        let landing = try await harness.rig.signIn(authorizationURL.absoluteString)
        let answer: HTTPResponse
        switch landing {
        case .redirect(let location):
            harness.seen.withLock { $0.append(location) }
            answer = try await harness.rig.get(try #require(URL(string: location)))
        case .page(_, let html):
            let post = try #require(EmulatorBrowser.formPost(html), "a form_post page")
            answer = try await harness.rig.transport.send(
                HTTPRequest(method: .post, url: post.action, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: post.body))
        default:
            throw RigFailure("the provider neither redirected nor posted: \(landing)")
        }
        let link = try #require(answer.headers["location"].flatMap(URL.init(string:)), "the companion's deep link")
        harness.seen.withLock { $0.append(link.absoluteString) }
        return link
    }

    @Test(
        "query and form_post: the trigger opens the browser, the deep link loads the web app with a code it redeems once with its binding",
        arguments: ["query", "form_post"])
    func signIn(mode: String) async throws {
        try await Self.withHarness { harness in
            let trigger = try #require(URL(string: "switchback://sign-in?return=/home&binding=\(Self.binding)&response_mode=\(mode)"))
            #expect(await harness.bridge.decide(URL(string: "https://web.example.com/home")) == .allow)
            #expect(await harness.bridge.decide(trigger) == .cancel)
            #expect(harness.browser.shown.withLock { $0.count } == 1)
            #expect(await harness.bridge.isSigningIn)

            let link = try await Self.browse(harness, mode: mode)
            #expect(link.scheme == "myapp" && link.host == "oauth" && link.path == "/home")
            let linkCode = try #require(URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems?.first?.value)
            let expected = try #require(URL(string: "https://web.example.com/home?handoffotp=\(linkCode)"))
            #expect(await harness.bridge.handleReturn(link) == .loaded(expected))
            #expect(harness.browser.closed.withLock { $0 } == 1)
            let landed = try #require(harness.loaded.withLock { $0 }.last)
            let code = try #require(URLComponents(url: landed, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "handoffotp" }?.value)

            // The web app's redemption, once, with its binding.
            let redeemed = try await harness.rig.post("/bridge/redeem", ["handoffotp": code, "binding": Self.binding])
            #expect(redeemed.response.status == 200)
            #expect(redeemed.json["sub"] as? String == "9b1f7c2e-alice")
            #expect(try await harness.rig.post("/bridge/redeem", ["handoffotp": code, "binding": Self.binding]).response.status == 400)

            // The same link again is a replay.
            #expect(await harness.bridge.handleReturn(link) == .rejected(.callbackReplayed))
            #expect(harness.loaded.withLock { $0.count } == 1)
            for url in harness.seen.withLock({ $0 }) {
                for name in ["access_token", "id_token", "refresh_token", "code_verifier", Self.binding] {
                    #expect(!url.contains(name), "\(name) in \(url)")
                }
            }
        }
    }

    @Test("a return link for no sign-in, for another path, with a token or extra parameters is refused; other links are not the bridge's")
    func foreignLinks() async throws {
        try await Self.withHarness { harness in
            #expect(
                await harness.bridge.handleReturn(URL(string: "myapp://oauth/home?handoffotp=attacker-code")!) == .rejected(.callbackReplayed),
                "no sign-in pending")
            #expect(await harness.bridge.handleReturn(URL(string: "otherapp://oauth/home?handoffotp=x")!) == .notBridge)
            #expect(await harness.bridge.handleReturn(URL(string: "myapp://settings/home")!) == .notBridge)

            _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=/home&binding=\(Self.binding)")!)
            let refused = [
                "myapp://oauth/elsewhere?handoffotp=x", "myapp://oauth/home?access_token=abc", "myapp://oauth/home?handoffotp=x&access_token=abc",
                "myapp://oauth/home#handoffotp=x", "myapp://oauth/home", "myapp://oauth/home?handoffotp=",
                // Not a code the companion makes (base64url, 16 to 512 characters): text for the web app's page.
                "myapp://oauth/home?handoffotp=%3Cscript%3Ealert(1)%3C%2Fscript%3E-padding",
            ]
            for link in refused {
                #expect(await harness.bridge.handleReturn(URL(string: link)!) == .rejected(.handOffLinkInvalid), "\(link)")
            }
            #expect(harness.loaded.withLock { $0 }.isEmpty)
            #expect(await harness.bridge.isSigningIn, "refused links leave the real sign-in waiting")

            // The browser session itself ends on a bad link: no other return can come, so the web app is told.
            #expect(
                await harness.bridge.browserCompleted(with: URL(string: "myapp://oauth/home?access_token=abc")!) == .rejected(.handOffLinkInvalid))
            #expect(harness.loaded.withLock { $0 } == [URL(string: "https://web.example.com/home?error=invalid_response")!])
            #expect(harness.browser.closed.withLock { $0 } == 1)
            #expect(await !harness.bridge.isSigningIn)
        }
    }

    @Test("refusals reach the web app as ?error=: a scheme the companion does not allow, a bad trigger, a dismissed or failing browser")
    func refusals() async throws {
        try await Self.withHarness(returnScheme: "evil") { offList in
            #expect(await offList.bridge.decide(URL(string: "switchback://sign-in?return=/home&binding=\(Self.binding)")!) == .cancel)
            #expect(offList.loaded.withLock { $0 } == [URL(string: "https://web.example.com/home?error=not_allowed")!])
            #expect(offList.browser.shown.withLock { $0 }.isEmpty)

            try await Self.withHarness { harness in
                _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=/home")!)
                _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=//evil.example/x&binding=\(Self.binding)")!)
                _ = await harness.bridge.decide(URL(string: "switchback://elsewhere?return=/home&binding=\(Self.binding)")!)
                #expect(
                    harness.loaded.withLock { $0 }.map(\.absoluteString) == [
                        "https://web.example.com/home?error=invalid_request", "https://web.example.com/?error=invalid_request",
                        "https://web.example.com/?error=invalid_request",
                    ])

                _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=/account&binding=\(Self.binding)")!)
                await harness.bridge.browserDismissed()
                #expect(harness.loaded.withLock { $0 }.last == URL(string: "https://web.example.com/account?error=cancelled"))
                #expect(await !harness.bridge.isSigningIn)

                // The authentication session's own completions: the user's Cancel, and a session that could not be shown.
                let domain = PlatformOutcome.authenticationSessionErrorDomain
                _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=/account&binding=\(Self.binding)")!)
                await harness.bridge.browserSessionCompleted(callbackURL: nil, errorDomain: domain, errorCode: 1)
                #expect(harness.loaded.withLock { $0 }.last == URL(string: "https://web.example.com/account?error=cancelled"))
                _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=/account&binding=\(Self.binding)")!)
                await harness.bridge.browserSessionCompleted(callbackURL: nil, errorDomain: domain, errorCode: 2)
                #expect(harness.loaded.withLock { $0 }.last == URL(string: "https://web.example.com/account?error=server_error"))
                // A completion after the sign-in ended (the session cancelled by close()) changes nothing.
                let count = harness.loaded.withLock { $0.count }
                await harness.bridge.browserSessionCompleted(callbackURL: nil, errorDomain: domain, errorCode: 1)
                #expect(harness.loaded.withLock { $0.count } == count)

                try await Self.withHarness(browser: Browser(fails: true)) { failing in
                    _ = await failing.bridge.decide(URL(string: "switchback://sign-in?return=/home&binding=\(Self.binding)")!)
                    #expect(failing.loaded.withLock { $0 }.last == URL(string: "https://web.example.com/home?error=server_error"))
                    #expect(await !failing.bridge.isSigningIn)
                }
            }
        }
    }

    @Test(
        "an error code that is not lowercase letters and _ reaches the web app as server_error: neither the companion's refusal nor a return link puts its own text in the page"
    )
    func errorCodesAreCodes() async throws {
        let loaded = LockedValue<[URL]>([])
        let refusing = HybridBridge(
            .init(webOrigin: URL(string: "https://web.example.com")!, returnScheme: "myapp"),
            companion: CompanionClient(
                URL(string: "https://companion.example.test")!,
                transport: StubTransport { _ in StubTransport.json(403, #"{"error":"Call +1 555 0100 to unlock your account"}"#) }),
            browser: Browser(), loadInWebView: { url in loaded.withLock { $0.append(url) } })
        #expect(await refusing.decide(URL(string: "switchback://sign-in?return=/home&binding=\(Self.binding)")!) == .cancel)
        #expect(loaded.withLock { $0 } == [URL(string: "https://web.example.com/home?error=server_error")!])

        try await Self.withHarness { harness in
            for (link, shown) in [
                ("myapp://oauth/home?error=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "server_error"),
                ("myapp://oauth/home?error=Your%20session%20expired", "server_error"),
                ("myapp://oauth/home?error=" + String(repeating: "a", count: 41), "server_error"),
                ("myapp://oauth/home?error=temporarily_unavailable", "temporarily_unavailable"),
            ] {
                _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=/home&binding=\(Self.binding)")!)
                #expect(
                    await harness.bridge.handleReturn(URL(string: link)!) == .loaded(URL(string: "https://web.example.com/home?error=\(shown)")!),
                    "\(link)")
            }
        }
    }

    @Test("a declined sign-in comes back as ?error=access_denied for the web app")
    func declined() async throws {
        try await Self.withHarness { harness in
            _ = await harness.bridge.decide(URL(string: "switchback://sign-in?return=/home&binding=\(Self.binding)")!)
            #expect(
                await harness.bridge.handleReturn(URL(string: "myapp://oauth/home?error=access_denied")!)
                    == .loaded(URL(string: "https://web.example.com/home?error=access_denied")!))
        }
    }
}
