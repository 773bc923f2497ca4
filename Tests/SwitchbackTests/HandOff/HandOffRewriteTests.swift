import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport

/// The WebView rewrite of authenticator deep links, on link shapes real pages emit.
@Suite("HandOffRewrite")
struct HandOffRewriteTests {
    static let rule = AuthenticatorRule(
        schemes: [.production: "uaepass", .staging: "uaepassstg"], successParameters: ["successurl"], failureParameters: ["failureurl"],
        providerHosts: ["stg-id.uaepass.ae"]
    )
    static let returnTo = URL(string: "com.example.app:/handoff")!
    static let resume = "https://stg-id.uaepass.ae/idshub/resume?txn=T1&lang=en"
    static let cancel = "https://stg-id.uaepass.ae/idshub/cancel?txn=T1"

    static func link(_ text: String) throws -> URL { try #require(URL(string: text)) }

    static func escape(_ text: String) -> String { FormEncoding.escape(text) }

    /// The value of parameter `name` (any case) in `url`, decoded once.
    static func parameter(_ name: String, in url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name.lowercased() == name }?.value
    }

    @Test("the return URLs are replaced by the app's, with flow and outcome; the provider's are kept; other parameters untouched")
    func basic() throws {
        let original = try Self.link(
            "uaepass://digitalid?successurl=\(Self.escape(Self.resume))&failureurl=\(Self.escape(Self.cancel))&closeondone=true")
        let rewrite = try HandOffRewrite(original, rule: Self.rule, environment: .production, returnTo: Self.returnTo, flowID: "F1")
        #expect(rewrite.successURL.absoluteString == Self.resume)
        #expect(rewrite.failureURL?.absoluteString == Self.cancel)
        #expect(rewrite.link.absoluteString.hasPrefix("uaepass://digitalid?successurl="))
        #expect(rewrite.link.absoluteString.hasSuffix("&closeondone=true"))
        let back = try #require(Self.parameter("successurl", in: rewrite.link).flatMap(URL.init(string:)))
        #expect(HandOffRewrite.match(back, returnTo: Self.returnTo, flowID: "F1") == .success)
        let declined = try #require(Self.parameter("failureurl", in: rewrite.link).flatMap(URL.init(string:)))
        #expect(HandOffRewrite.match(declined, returnTo: Self.returnTo, flowID: "F1") == .failure)
        #expect(!rewrite.link.absoluteString.contains("stg-id.uaepass.ae"), "the provider's URLs stay in the app")
    }

    @Test("UAE Pass's staging bug: a staging page emitting uaepass:// is sent to the staging authenticator")
    func stagingSchemeRemap() throws {
        let original = try Self.link("uaepass://digitalid?successurl=\(Self.escape(Self.resume))")
        let rewrite = try HandOffRewrite(original, rule: Self.rule, environment: .staging, returnTo: Self.returnTo, flowID: "F1")
        #expect(rewrite.link.scheme == "uaepassstg")
    }

    @Test("parameter shapes: successURL spelling, double encoding, parameters after the return URL, no closeondone")
    func shapes() throws {
        let twice = Self.escape(Self.escape(Self.resume))
        let original = try Self.link(
            "uaepass://digitalid?txn=T1&successURL=\(twice)&failureURL=\(Self.escape(Self.escape(Self.cancel)))&lang=en&browserpackage=x")
        let rewrite = try HandOffRewrite(original, rule: Self.rule, environment: .production, returnTo: Self.returnTo, flowID: "F2")
        #expect(rewrite.successURL.absoluteString == Self.resume)
        #expect(rewrite.failureURL?.absoluteString == Self.cancel)
        let text = rewrite.link.absoluteString
        #expect(text.hasPrefix("uaepass://digitalid?txn=T1&successURL="))
        #expect(text.hasSuffix("&lang=en&browserpackage=x"))
    }

    @Test("a return URL that is not an https page of the provider is refused: foreign host, http, credentials, a look-alike host")
    func foreignResumeURL() throws {
        for foreign in [
            "https://evil.example/steal", "http://stg-id.uaepass.ae/resume", "https://user:pw@stg-id.uaepass.ae/resume",
            "https://stg-id.uaepass.ae.evil.example/resume", "javascript:alert(1)",
        ] {
            let original = try Self.link("uaepass://digitalid?successurl=\(Self.escape(foreign))")
            expectCode(.foreignResumeURL) {
                try HandOffRewrite(original, rule: Self.rule, environment: .production, returnTo: Self.returnTo, flowID: "F")
            }
        }
    }

    @Test("links it cannot rewrite are typed errors: another scheme, no return URL, an environment without an authenticator")
    func invalidLinks() throws {
        let cases = [
            (try Self.link("bankid:///?autostarttoken=x"), AuthenticatorRule.Environment.production),
            (try Self.link("uaepass://digitalid?closeondone=true"), .production),
            (try Self.link("uaepass://digitalid"), .production),
            (try Self.link("uaepass://digitalid?successurl=\(Self.escape(Self.resume))"), AuthenticatorRule.Environment("qa")),
        ]
        for (link, environment) in cases {
            expectCode(.handOffLinkInvalid) {
                try HandOffRewrite(link, rule: Self.rule, environment: environment, returnTo: Self.returnTo, flowID: "F")
            }
        }
    }

    @Test("returns are matched exactly: another flow, another path, a universal link of the app, no flow at all")
    func matching() throws {
        let returnTo = try Self.link("https://app.example.com/handoff")
        #expect(
            HandOffRewrite.match(
                try Self.link("https://app.example.com/handoff?switchback_flow=F9&switchback_outcome=success"), returnTo: returnTo, flowID: "F1")
                == .otherFlow)
        #expect(
            HandOffRewrite.match(
                try Self.link("https://app.example.com/handoff/x?switchback_flow=F1&switchback_outcome=success"), returnTo: returnTo, flowID: "F1")
                == .unrelated)
        #expect(HandOffRewrite.match(try Self.link("https://app.example.com/orders/42"), returnTo: returnTo, flowID: "F1") == .unrelated)
        #expect(HandOffRewrite.match(try Self.link("https://app.example.com/handoff"), returnTo: returnTo, flowID: "F1") == .unrelated)
        #expect(
            HandOffRewrite.match(
                try Self.link("HTTPS://APP.EXAMPLE.COM/handoff?switchback_flow=F1&switchback_outcome=failure"), returnTo: returnTo, flowID: "F1")
                == .failure)
    }
}

/// The WebView navigation policy: one decision per navigation, no I/O.
@Suite("NavigationPolicy")
struct NavigationPolicyTests {
    static let policy = NavigationPolicy(
        redirectURI: URL(string: "com.example.app:/oauth/callback")!, authenticator: HandOffRewriteTests.rule, environment: .staging,
        returnTo: HandOffRewriteTests.returnTo, flowID: "F1"
    )

    @Test("provider pages load; the redirect URI finishes, exactly; other apps' links go to the system")
    func decisions() throws {
        let policy = Self.policy
        #expect(policy.decide(try HandOffRewriteTests.link("https://stg-id.uaepass.ae/idshub/authorize?x=1")) == .allow)
        #expect(policy.decide(nil) == .allow)
        let callback = try HandOffRewriteTests.link("com.example.app:/oauth/callback?code=c&state=s")
        #expect(policy.decide(callback) == .finish(callback))
        #expect(
            policy.decide(try HandOffRewriteTests.link("com.example.app:/oauth/callback/extra?code=c"))
                == .openExternally(try HandOffRewriteTests.link("com.example.app:/oauth/callback/extra?code=c")))
        let phone = try HandOffRewriteTests.link("tel:+97180082466")
        #expect(policy.decide(phone) == .openExternally(phone))
    }

    @Test("an authenticator link (even in the production scheme on staging) is rewritten; one with a foreign successurl blocks the flow")
    func authenticator() throws {
        let link = try HandOffRewriteTests.link("uaepass://digitalid?successurl=\(HandOffRewriteTests.escape(HandOffRewriteTests.resume))")
        guard case .launchAuthenticator(let rewrite) = Self.policy.decide(link) else {
            Issue.record("the authenticator link must be rewritten")
            return
        }
        #expect(rewrite.link.scheme == "uaepassstg")
        let injected = try HandOffRewriteTests.link("uaepass://digitalid?successurl=\(HandOffRewriteTests.escape("https://evil.example/x"))")
        #expect(Self.policy.decide(injected) == .block(.foreignResumeURL))
    }

    @Test("failed provisional loads: a custom-scheme load the WebView could not route is acted on; the policy's own cancellations are ignored")
    func failedLoads() throws {
        let link = try HandOffRewriteTests.link("uaepass://digitalid?successurl=\(HandOffRewriteTests.escape(HandOffRewriteTests.resume))")
        guard case .act(.launchAuthenticator) = Self.policy.decideFailedLoad(of: link, cancelledByPolicy: false) else {
            Issue.record("an unrouted authenticator link must still launch the authenticator")
            return
        }
        #expect(Self.policy.decideFailedLoad(of: link, cancelledByPolicy: true) == .ignore)
        let callback = try HandOffRewriteTests.link("com.example.app:/oauth/callback?code=c&state=s")
        #expect(Self.policy.decideFailedLoad(of: callback, cancelledByPolicy: false) == .act(.finish(callback)))
        #expect(Self.policy.decideFailedLoad(of: try HandOffRewriteTests.link("https://stg-id.uaepass.ae/down"), cancelledByPolicy: false) == .fail)
        #expect(Self.policy.decideFailedLoad(of: nil, cancelledByPolicy: true) == .ignore)
    }
}
