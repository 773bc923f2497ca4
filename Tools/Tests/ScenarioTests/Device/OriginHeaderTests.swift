import Foundation
import Testing
import SwitchbackTesting

/// The `Origin` the simulated browsers send with a form's POST follows the Fetch standard's "append a
/// request Origin header": the page's referrer policy can turn it into `null`. Before, the device always
/// named the page's origin, and so agreed with a companion whose own pages (under `no-referrer`) a real
/// WebKit could not submit.
@Suite("The Origin header of a form's POST")
struct OriginHeaderTests {
    static let page = URL(string: "https://shop.example.com/handoff/redeem?handoffotp=x")!
    static let sameOrigin = URL(string: "https://shop.example.com/handoff/redeem")!
    static let otherOrigin = URL(string: "https://web.example.com/orders")!
    static let downgrade = URL(string: "http://shop.example.com/handoff/redeem")!

    @Test(
        "each referrer policy, to the same origin, another origin and plain http",
        arguments: [
            (nil, "https://shop.example.com", "https://shop.example.com", "null"),
            ("no-referrer", "null", "null", "null"),
            ("same-origin", "https://shop.example.com", "null", "null"),
            ("strict-origin", "https://shop.example.com", "https://shop.example.com", "null"),
            ("no-referrer-when-downgrade", "https://shop.example.com", "https://shop.example.com", "null"),
            ("origin", "https://shop.example.com", "https://shop.example.com", "https://shop.example.com"),
            ("unsafe-url", "https://shop.example.com", "https://shop.example.com", "https://shop.example.com"),
            ("no-referrer, same-origin", "https://shop.example.com", "null", "null"),
            ("no-referrer, bogus", "null", "null", "null"),
            ("same-origin,", "https://shop.example.com", "null", "null"),
        ] as [(String?, String, String, String)])
    func policies(_ policy: String?, same: String, other: String, downgraded: String) {
        let page = WebPage(url: Self.page, html: "", referrerPolicy: policy)
        #expect(page.originHeader(to: Self.sameOrigin) == same)
        #expect(page.originHeader(to: Self.otherOrigin) == other)
        #expect(page.originHeader(to: Self.downgrade) == downgraded)
    }

    @Test("a default port is left out and another kept, as a browser serialises an origin")
    func ports() {
        #expect(WebPage(url: URL(string: "https://a.example:443/x")!, html: "").originHeader(to: Self.sameOrigin) == "https://a.example")
        #expect(WebPage(url: URL(string: "http://127.0.0.1:8080/x")!, html: "").originHeader(to: Self.downgrade) == "http://127.0.0.1:8080")
    }
}

/// The simulated browsers hold a form's action and its redirects to the page's CSP `form-action`, as
/// browsers do: the companion's fragment page once redirected to the app's scheme without allowing it,
/// which WebKit stopped and the device did not.
@Suite("CSP form-action on a form's redirects")
struct FormActionTests {
    static let page = URL(string: "https://shop.example.com/bridge/callback")!

    @Test("'self', a scheme, an origin, 'none', and no directive at all")
    func sources() {
        let policy = "default-src 'none'; form-action 'self' myapp: https://web.example.com; frame-ancestors 'none'"
        let page = WebPage(url: Self.page, html: "", contentSecurityPolicy: policy)
        #expect(page.formActionAllows(URL(string: "https://shop.example.com/bridge/fragment")!))
        #expect(page.formActionAllows(URL(string: "myapp://oauth/home?handoffotp=x")!))
        #expect(page.formActionAllows(URL(string: "https://web.example.com/any/path")!))
        #expect(!page.formActionAllows(URL(string: "otherapp://oauth/home")!))
        #expect(!page.formActionAllows(URL(string: "https://evil.example.com/")!))
        #expect(!page.formActionAllows(URL(string: "http://shop.example.com/bridge/fragment")!), "another scheme is another origin")
        #expect(!WebPage(url: Self.page, html: "", contentSecurityPolicy: "form-action 'none'").formActionAllows(Self.page))
        #expect(WebPage(url: Self.page, html: "", contentSecurityPolicy: "default-src 'none'").formActionAllows(URL(string: "myapp://x")!))
        #expect(WebPage(url: Self.page, html: "").formActionAllows(URL(string: "myapp://x")!))
    }
}
