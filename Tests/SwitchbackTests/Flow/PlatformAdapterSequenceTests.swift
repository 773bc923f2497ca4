import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// The platform event sequences the Apple adapters pass along, mapped through the core: what a
/// `WKNavigationDelegate`, an `ASWebAuthenticationSession` completion and an `SFSafariViewController`
/// delegate would report for the seed's edge cases, and the actions the adapter then performs.
@Suite("Platform event sequences through the core")
struct PlatformAdapterSequenceTests {
    @Test("WKWebView: allow the provider, cancel and open the rewritten authenticator, ignore WebKit's 'frame load interrupted' for it")
    func webViewHandOff() throws {
        var flow = SignInFlow(SignInFlowTests.webViewPlan())
        _ = flow.handle(.start)
        #expect(flow.handle(.navigation(SignInFlowTests.authorizationURL)) == [.allowNavigation])
        let launch = flow.handle(.navigation(SignInFlowTests.link))
        #expect(launch.first == .cancelNavigation)
        #expect(launch.contains(.openAuthenticator(try #require(flow.handOff).link)))
        // WebKit reports the navigation the delegate cancelled as a failure with code 102.
        let interrupted = PlatformOutcome.loadFailureWasCancellation(errorDomain: "WebKitErrorDomain", errorCode: 102)
        #expect(flow.handle(.navigationFailed(SignInFlowTests.link, cancelledByPolicy: interrupted)) == [])
    }

    @Test("WKWebView: a custom-scheme load failing in didFailProvisionalNavigation without being asked is acted on (iOS)")
    func webViewProvisionalFailure() throws {
        var flow = SignInFlow(SignInFlowTests.webViewPlan())
        _ = flow.handle(.start)
        // NSURLErrorUnsupportedURL for uaepass:// that decidePolicyFor never saw.
        let cancelled = PlatformOutcome.loadFailureWasCancellation(errorDomain: NSURLErrorDomain, errorCode: NSURLErrorUnsupportedURL)
        #expect(!cancelled)
        let actions = flow.handle(.navigationFailed(SignInFlowTests.link, cancelledByPolicy: cancelled))
        #expect(actions == [.persist, .openAuthenticator(try #require(flow.handOff).link)])
        // A request the WebView cancelled itself (-999, a newer navigation replaced it) is not a failure.
        #expect(PlatformOutcome.loadFailureWasCancellation(errorDomain: NSURLErrorDomain, errorCode: NSURLErrorCancelled))
        // The core knows Apple's domains only; WebKitGTK's are WebKitHost's (WebKitGTKHost.loadFailureWasCancellation).
        #expect(!PlatformOutcome.loadFailureWasCancellation(errorDomain: "WebKitPolicyError", errorCode: 102))
    }

    @Test("WKWebView: the provider's page failing to load (no network) fails the sign-in")
    func webViewPageFailure() {
        var flow = SignInFlow(SignInFlowTests.webViewPlan())
        _ = flow.handle(.start)
        let cancelled = PlatformOutcome.loadFailureWasCancellation(errorDomain: NSURLErrorDomain, errorCode: NSURLErrorNotConnectedToInternet)
        #expect(
            flow.handle(.navigationFailed(SignInFlowTests.authorizationURL, cancelledByPolicy: cancelled)).last
                == .complete(.failed(.userAgentFailed)))
    }

    @Test("ASWebAuthenticationSession completion: callback URL, Cancel tapped (code 1), presentation failures (codes 2, 3)")
    func authenticationSessionCompletion() throws {
        let domain = PlatformOutcome.authenticationSessionErrorDomain
        #expect(
            PlatformOutcome.sessionCompletion(callbackURL: SignInFlowTests.callback, errorDomain: nil, errorCode: nil)
                == .callback(SignInFlowTests.callback))
        #expect(PlatformOutcome.sessionCompletion(callbackURL: nil, errorDomain: domain, errorCode: 1) == .cancelledByUser)
        #expect(PlatformOutcome.sessionCompletion(callbackURL: nil, errorDomain: domain, errorCode: 2) == .failed)
        #expect(PlatformOutcome.sessionCompletion(callbackURL: nil, errorDomain: domain, errorCode: 3) == .failed)
        #expect(PlatformOutcome.sessionCompletion(callbackURL: nil, errorDomain: "NSCocoaErrorDomain", errorCode: 1) == .failed)
        // Cancel is a user cancellation; a presentation failure is not.
        var cancelled = SignInFlow(SignInFlowTests.browserPlan())
        _ = cancelled.handle(.start)
        #expect(cancelled.handle(.userAgentDismissed) == [.complete(.cancelled)])
        var failed = SignInFlow(SignInFlowTests.browserPlan())
        _ = failed.handle(.start)
        #expect(failed.handle(.userAgentFailed) == [.dismissUserAgent, .complete(.failed(.userAgentFailed))])
    }

    @Test("Authentication session with app_callback_uri: the universal link arriving while the session is up leaves it up")
    func universalLinkKeepsSession() throws {
        var plan = SignInFlowTests.browserPlan(providerPage: false)
        plan.appReturnURL = URL(string: "https://app.example.com/appswitch")!
        var flow = SignInFlow(plan)
        _ = flow.handle(.start)
        _ = flow.handle(.enteredBackground)
        let actions = flow.handle(.openedURL(try #require(URL(string: "https://app.example.com/appswitch"))))
        #expect(!actions.contains(.dismissUserAgent), "the session's page continues the sign-in")
        #expect(flow.handle(.becameActive) == [])
    }

    @Test("SFSafariViewController: Done before the callback is a user cancel; the callback through the router dismisses it")
    func safariView() throws {
        var done = SignInFlow(SignInFlowTests.browserPlan(.safariView, providerPage: false))
        _ = done.handle(.start)
        #expect(done.handle(.userAgentDismissed) == [.complete(.cancelled)])
        var returned = SignInFlow(SignInFlowTests.browserPlan(.safariView, providerPage: false))
        _ = returned.handle(.start)
        #expect(returned.handle(.openedURL(SignInFlowTests.callback)) == [.dismissUserAgent, .exchange(.redirect(SignInFlowTests.callback))])
        // Dismissing it programmatically is not reported back, so nothing cancels the exchange.
        #expect(returned.handle(.userAgentDismissed) == [])
    }
}

/// The Info.plist check run at launch.
@Suite("SetupCheck")
struct SetupCheckTests {
    static let links = ProviderPreset.AppLinks(
        scheme: URL(string: "com.example.app:/handoff"), universalLink: URL(string: "https://app.example.com/appswitch"))

    @Test(
        "missing queried authenticator schemes (production, and the request's test environment), an unregistered return scheme, and the associated-domain reminder"
    )
    func problems() async throws {
        let production = try await ProviderPreset.uaePass.request(strategy: .webView, links: Self.links)
        #expect(
            SetupCheck(queriedSchemes: ["uaepass"], urlSchemes: ["com.example.app"]).problems(
                for: production, preset: .uaePass, redirectURI: try #require(URL(string: "com.example.app:/oauth/callback"))
            ).isEmpty, "a production request needs only the production app's scheme")
        let request = try await ProviderPreset.uaePass.request(strategy: .webView, environment: .staging, links: Self.links)
        let info: [String: Any] = [
            "LSApplicationQueriesSchemes": ["uaepass"],
            "CFBundleURLTypes": [["CFBundleURLSchemes": ["other"]]],
        ]
        let problems = SetupCheck(infoDictionary: info).problems(
            for: request, preset: .uaePass, redirectURI: try #require(URL(string: "com.example.app:/oauth/callback"))
        )
        #expect(problems == [.authenticatorSchemeNotQueried("uaepassstg"), .schemeNotRegistered("com.example.app")])
        let complete = SetupCheck(queriedSchemes: ["uaepass", "uaepassstg"], urlSchemes: ["com.example.app"])
        #expect(complete.problems(for: request, preset: .uaePass, redirectURI: try #require(URL(string: "com.example.app:/oauth/callback"))).isEmpty)
        let universal = try await ProviderPreset.mitID(.signaturgruppen).request(links: Self.links)
        #expect(
            complete.problems(
                for: universal, preset: .mitID(.signaturgruppen), redirectURI: try #require(URL(string: "https://app.example.com/oauth/callback")))
                == [
                    .associatedDomainNeeded("app.example.com")
                ])
    }

    @Test("an http redirect URI with an authentication session is named before launch, as the coordinator would refuse it")
    func httpRedirectWithSession() async throws {
        let check = SetupCheck(queriedSchemes: [], urlSchemes: [])
        let loopback = try #require(URL(string: "http://127.0.0.1:8080/cb"))
        let request = SignInRequest(provider: "generic", strategy: .systemBrowser)
        #expect(check.problems(for: request, preset: .generic, redirectURI: loopback) == [.callbackNeverCaught(loopback)])
        #expect(check.problems(for: SignInRequest(provider: "generic", strategy: .safariView), preset: .generic, redirectURI: loopback).isEmpty)
    }

    @Test("a Keychain probe's missing entitlement is a setup problem naming the group; a locked device or another failure is not")
    func keychainEntitlement() {
        let group = "ABCDE12345.com.example.shared"
        #expect(
            SetupCheck.keychainProblem(
                KeychainStatus.error(KeychainStatus.missingEntitlement, operation: "write", accessGroup: group), accessGroup: group)
                == .keychainEntitlementMissing(group))
        #expect(
            SetupCheck.keychainProblem(
                KeychainStatus.error(KeychainStatus.interactionNotAllowed, operation: "write", accessGroup: group), accessGroup: group) == nil)
        #expect(SetupCheck.keychainProblem(CancellationError(), accessGroup: nil) == nil)
    }
}
