import Foundation
import Logging
import Switchback
import SwitchbackEmulator
import SwitchbackScenarios
import SwitchbackTesting
import Testing
@testable import WebKitGTKHost

/// The stand-ins for iOS's browsers on the real engine: whose cookies each one sees (Apple's documented
/// store rules, measured on the engine rather than assumed), and sign-ins through the authentication
/// session and the Safari view, with the links they do not load handed to the device's system.
@Suite(
    "WebKitGTK host: the authentication session, the Safari view and Safari on a real engine", .serialized,
    .enabled(if: Engine.runs, "WebKitGTK or a display is missing (run scripts/test.sh, which installs it and uses Xvfb)"))
struct BrowserSeatTests {
    /// Sets a session cookie and a persistent one (an hour) named after `prefix` on the page `url` shown,
    /// and waits (up to 5 s) until the view's store holds them: a page's cookie write reaches the store
    /// asynchronously.
    static func setCookies(_ host: WebKitGTKHost, _ prefix: String, for url: URL) async throws {
        await host.runScript("document.cookie='\(prefix)session=1; path=/'; document.cookie='\(prefix)kept=1; path=/; max-age=3600'; 'ok'")
        for _ in 0..<500 {
            let names = await Self.names(host, url)
            if names.contains("\(prefix)session") && names.contains("\(prefix)kept") { return }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        Issue.record("the page's cookies \(prefix)session and \(prefix)kept never reached the store")
    }

    /// The cookie names `seat` holds for `url` when it shows `url`, sorted.
    static func names(_ host: WebKitGTKHost, _ url: URL, as seat: WebKitGTKHost.Seat) async throws -> [String] {
        try await host.browse(url, as: seat)
        return await Self.names(host, url)
    }

    static func names(_ host: WebKitGTKHost, _ url: URL) async -> [String] {
        await host.cookies(for: url).split(separator: ";").compactMap {
            $0.split(separator: "=").first.map { $0.trimmingCharacters(in: .whitespaces) }
        }.sorted()
    }

    @Test(
        "cookie stores: the authentication session starts with Safari's persistent cookies only and gives its own back; the ephemeral session, the Safari view and the WebView share nothing with Safari"
    )
    func cookieStores() async throws {
        let host = try WebKitGTKHostTests.host()
        try await withStopping(try await Emulator.start(profile: .generic), stop: { await $0.stop() }) { emulator in
            let page = try #require(URL(string: emulator.issuer + "/.well-known/openid-configuration"))

            #expect(try await Self.names(host, page, as: .safari) == [])
            try await Self.setCookies(host, "safari", for: page)
            #expect(await Self.names(host, page) == ["safarikept", "safarisession"])

            #expect(try await Self.names(host, page, as: .authenticationSession) == ["safarikept"], "Safari's persistent cookie only")
            try await Self.setCookies(host, "session", for: page)
            await host.dismiss()
            #expect(
                try await Self.names(host, page, as: .safari) == ["safarikept", "safarisession", "sessionkept"],
                "the session's persistent cookie went back to Safari, its session cookie did not")

            #expect(try await Self.names(host, page, as: .ephemeralSession) == [], "an ephemeral session shares nothing")
            try await Self.setCookies(host, "ephemeral", for: page)
            await host.dismiss()
            #expect(!(try await Self.names(host, page, as: .safari).contains { $0.hasPrefix("ephemeral") }))

            #expect(try await Self.names(host, page, as: .safariView) == [], "the Safari view has its own store (iOS 11)")
            try await Self.setCookies(host, "view", for: page)
            #expect(try await Self.names(host, page, as: .safariView) == ["viewkept", "viewsession"], "kept for the app's next Safari view")
            #expect(try await Self.names(host, page, as: .webView) == [], "the WebView's store is the app's own")
            await host.dismiss()
        }
    }

    @Test(
        "a sign-in in the authentication session (shared and ephemeral) and in the Safari view: the user signs in on the provider's page; the session catches the redirect URI, the Safari view hands it to the system, which opens the app",
        arguments: [UserAgentStrategy.systemBrowser, .ephemeralBrowser, .safariView])
    func genericSignIn(_ strategy: UserAgentStrategy) async throws {
        let host = try WebKitGTKHostTests.host()
        let result = try await WebKitGTKHostTests.run(Scenario(provider: "generic", strategy: strategy), host: host) { _ in
            try await WebKitGTKHostTests.userSignsIn(host)
        }
        #expect(try WebKitGTKHostTests.credential(result, host).subject == "9b1f7c2e-alice")
        let observations = host.observations
        let seat: WebKitGTKHost.Seat =
            switch strategy {
            case .systemBrowser: .authenticationSession
            case .ephemeralBrowser: .ephemeralSession
            default: .safariView
            }
        #expect(observations.contains { if case .presented(_, seat) = $0 { true } else { false } })
        #expect(!observations.contains { if case .decided = $0 { true } else { false } }, "a browser's navigations are not the app's to decide")
        let callback = "com.example.app"
        if strategy == .safariView {
            #expect(
                observations.contains { if case .routed(let url, true) = $0 { url.scheme == callback } else { false } }, "the system opened the app")
        } else {
            #expect(
                observations.contains { if case .caught(let url) = $0 { url.scheme == callback } else { false } }, "the session caught its callback")
        }
        #expect(observations.contains(.closed))
    }

    @Test(
        "Swedish BankID in the authentication session and the Safari view: the autostart link goes to the system, which opens the BankID app; the page, still running in the browser, polls until the app answered and continues by its own script",
        arguments: [UserAgentStrategy.systemBrowser, .safariView])
    func bankIDSweden(_ strategy: UserAgentStrategy) async throws {
        let host = try WebKitGTKHostTests.host()
        let result = try await WebKitGTKHostTests.run(Scenario(provider: "bankid-se", strategy: strategy), host: host)
        #expect(try WebKitGTKHostTests.credential(result, host).subject == "9b1f7c2e-alice")
        #expect(
            host.observations.contains {
                if case .routed(let url, true) = $0 { url.host == "app.bankid.com" || url.scheme == "bankid" } else { false }
            },
            "the autostart link opened the BankID app")
        #expect(result.transcript.contains { $0.text.hasPrefix("opens BankID") })
    }
}

/// A person's tap against a script's: how the engine flags the navigation each starts.
@Suite(
    "WebKitGTK host: taps as input events", .serialized,
    .enabled(if: Engine.runs, "WebKitGTK or a display is missing (run scripts/test.sh, which installs it and uses Xvfb)"))
struct InputEventTests {
    @Test(
        "a link tapped with input events is a user gesture of the link kind; a navigation the page's own timer starts is not, while one a script of the app's starts is"
    )
    func tapIsGesture() async throws {
        let host = try WebKitGTKHostTests.host()
        // A page with a link to a custom scheme (handed to no system: nothing opens) and a timer of its own.
        let html = """
            <a id="tap" href="tapped-by-hand:/x" style="display:block;font-size:40px">Tap</a>
            <script>setTimeout(function(){location.href='by-page-timer:/y';}, 1500);</script>
            """
        let page = try #require(URL(string: "data:text/html," + (html.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")))
        try await host.browse(page, as: .safari)
        #expect(await host.userClicks(elementWithID: "tap"))
        // A timer the app's own script starts (the evaluate API, as the tests' scripted "user" uses).
        await host.runScript("setTimeout(function(){location.href='by-app-timer:/z';}, 100); 'ok'")
        for _ in 0..<500
        where !["by-page-timer", "by-app-timer"].allSatisfy({ scheme in
            host.observations.contains { if case .navigated(let url?, _, _, _) = $0 { url.scheme == scheme } else { false } }
        }) {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let navigations = host.observations.compactMap { observation -> (String, String, Bool)? in
            if case .navigated(let url?, let kind, let gesture, _) = observation { return (url.scheme ?? "", kind, gesture) }
            return nil
        }
        #expect(navigations.contains { $0 == ("tapped-by-hand", "link", true) }, "\(navigations)")
        #expect(navigations.contains { $0.0 == "by-page-timer" && !$0.2 }, "\(navigations)")
        // WebKit carries the gesture of a script the app evaluates over to a timer it starts.
        #expect(navigations.contains { $0.0 == "by-app-timer" && $0.2 }, "\(navigations)")
        await host.dismiss()
    }
}
