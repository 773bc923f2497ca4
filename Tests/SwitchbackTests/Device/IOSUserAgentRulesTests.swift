import Foundation
import Switchback
import Testing
@testable import SwitchbackTesting

/// iOS's user-agent rules (`IOSUserAgentRules`), which the simulated device and the WebKitGTK host both
/// follow. Each row names its source.
///
/// - Callback: Apple, `ASWebAuthenticationSession.Callback`: `customScheme(_:)` "matches against URLs with
///   the given custom scheme"; `https(host:path:)` (iOS 17.4) for https; no callback exists for http. The
///   older initializer's `callbackURLScheme` is "the custom URL scheme that the app requires".
/// - Universal links: Apple, "Allowing apps and websites to link to your content": apps open "when they
///   click links … within their browser app and WKWebView" and from `open(_:options:)`; Apple's "Support
///   Universal Links" (App Search Programming Guide): a tap to a URL on the same domain as the current page
///   stays in Safari, one to another domain opens the app. WebKit (`APINavigationAction.h`,
///   `WebPageProxy::decidePolicyForNavigationAction`) tries app links only for a main-frame navigation to
///   another host that a user's gesture started (`ShouldOpenExternalURLsPolicy::ShouldAllow`), never for
///   back and forward; we read "links" as link taps, not form submissions.
/// - User-Agent: Safari on iOS 17.4 sends `Version/17.4 … Safari/604.1`; `WKWebView` leaves both tokens out.
@Suite("iOS's user-agent rules")
struct IOSUserAgentRulesTests {
    static let custom = URL(string: "com.example.app:/oauth/callback")!
    static let https = URL(string: "https://app.example.com/oauth/callback")!
    static let http = URL(string: "http://127.0.0.1:8080/callback")!

    @Test(
        "an authentication session catches a custom scheme by its scheme, an https redirect URI by host and path, an http one never",
        arguments: [
            (custom, "com.example.app:/anything?code=1", true),
            (custom, "COM.EXAMPLE.APP:/oauth/callback", true),
            (custom, "com.other.app:/oauth/callback", false),
            (custom, "https://app.example.com/oauth/callback", false),
            (https, "https://APP.example.com/oauth/callback?code=1", true),
            (https, "https://app.example.com/oauth/other?code=1", false),
            (https, "https://evil.example/oauth/callback?code=1", false),
            (https, "http://app.example.com/oauth/callback?code=1", false),
            (http, "http://127.0.0.1:8080/callback?code=1", false),
            (http, "http://127.0.0.1:8080/anything", false),
        ])
    func callback(redirectURI: URL, url: String, caught: Bool) throws {
        #expect(IOSUserAgentRules.authenticationSessionCatches(try #require(URL(string: url)), redirectURI: redirectURI) == caught)
    }

    @Test("the callback a redirect URI makes: what the Apple adapter hands the session")
    func callbackValue() throws {
        #expect(AuthenticationSessionCallback(redirectURI: Self.custom) == .customScheme("com.example.app"))
        #expect(AuthenticationSessionCallback(redirectURI: Self.https) == .https(host: "app.example.com", path: "/oauth/callback"))
        #expect(AuthenticationSessionCallback(redirectURI: Self.http) == nil)
        #expect(AuthenticationSessionCallback(redirectURI: try #require(URL(string: "https:/no-host"))) == nil)
    }

    static let mitID = URL(string: "https://appswitch.mitid.nets.eu/authenticate?txn=abc")!
    static let broker = URL(string: "https://broker.example/authorize")!
    static let sameHost = URL(string: "https://appswitch.mitid.nets.eu/start")!

    @Test(
        "a universal link opens its app when an app opens it or the user taps it on a page of another host; a script, a redirect, a form or a tap within the host stays in the browser",
        arguments: [
            (IOSUserAgentRules.Opener.app, true),
            (.page(broker, .tappedLink), true),
            (.page(broker, .submittedForm), false),
            (.page(broker, .other), false),
            (.page(sameHost, .tappedLink), false),
            (.page(URL(string: "https://APPSWITCH.mitid.nets.eu/start")!, .tappedLink), false),
        ])
    func universalLink(opener: IOSUserAgentRules.Opener, opens: Bool) {
        #expect(IOSUserAgentRules.universalLinkOpensApp(Self.mitID, from: opener) == opens)
    }

    @Test("only http and https links are universal links")
    func universalLinkSchemes() throws {
        #expect(!IOSUserAgentRules.universalLinkOpensApp(try #require(URL(string: "mitid://authenticate")), from: .app))
    }

    @Test("a browser loads the web's schemes and hands every other one to the system")
    func schemes() throws {
        for url in ["https://a.example/", "http://127.0.0.1/", "about:blank", "data:text/plain,x", "blob:https://a.example/1"] {
            #expect(IOSUserAgentRules.browserLoads(try #require(URL(string: url))), "\(url)")
        }
        for url in ["bankid:///?autostarttoken=x", "uaepass://digitalid", "tel:123", "com.example.app:/cb"] {
            #expect(!IOSUserAgentRules.browserLoads(try #require(URL(string: url))), "\(url)")
        }
    }

    @Test("Safari's User-Agent names Safari and its version; a WebView's leaves both out")
    func userAgents() {
        #expect(IOSUserAgentRules.safariUserAgent.contains("Version/17.4"))
        #expect(IOSUserAgentRules.safariUserAgent.hasSuffix("Safari/604.1"))
        #expect(!IOSUserAgentRules.webViewUserAgent.contains("Safari/"))
        #expect(!IOSUserAgentRules.webViewUserAgent.contains("Version/"))
        #expect(IOSUserAgentRules.webViewUserAgent.contains("iPhone OS 17_4"))
    }

    @Test("a name on loopback resolves whatever its spelling, keeps path and query; another name does not resolve")
    func names() throws {
        let hosts = IOSUserAgentRules.names([
            "App.Example.com": URL(string: "http://127.0.0.1:8081")!, "app.example.com": URL(string: "http://127.0.0.1:9")!,
        ])
        #expect(hosts.count == 1)
        let resolved = IOSUserAgentRules.loopbackAddress(of: try #require(URL(string: "https://APP.example.com/a/b?c=d")), in: hosts)
        #expect(resolved?.host == "127.0.0.1")
        #expect(resolved?.scheme == "http")
        #expect(resolved?.path == "/a/b")
        #expect(resolved?.query == "c=d")
        #expect(IOSUserAgentRules.loopbackAddress(of: try #require(URL(string: "https://other.example/")), in: hosts) == nil)
    }

    // MARK: The simulated device follows them

    static func device() async -> SimulatedDevice {
        let device = SimulatedDevice()
        await device.installAuthenticator(
            scheme: "mitid", name: "MitID", backend: URL(string: "http://127.0.0.1:9")!, universalLinkHost: "appswitch.mitid.nets.eu")
        return device
    }

    @Test("on the simulated device, a tap on a page of another domain opens the authenticator app")
    func deviceTapAcrossDomains() async {
        let device = await Self.device()
        #expect(await device.open(Self.mitID, from: .page(Self.broker, .tappedLink)))
        #expect(await device.transcript.contains { $0.text == "opens MitID by its universal link" })
    }

    @Test(
        "on the simulated device, a script or redirect navigation, a form, or a tap on the same domain stays in the browser",
        arguments: [(broker, IOSUserAgentRules.Navigation.other), (broker, .submittedForm), (sameHost, .tappedLink)])
    func deviceStaysInBrowser(page: URL, navigation: IOSUserAgentRules.Navigation) async {
        let device = await Self.device()
        #expect(await !device.open(Self.mitID, from: .page(page, navigation)))
        #expect(await !device.transcript.contains { $0.text.contains("by its universal link") })
    }
}
