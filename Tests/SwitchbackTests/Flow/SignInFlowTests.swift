import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// The sign-in state machine on its own: every edge case of a hand-off sign-in as a sequence of events and the
/// actions the flow answers with.
@Suite("SignInFlow")
struct SignInFlowTests {
    static let redirectURI = URL(string: "com.example.app:/oauth/callback")!
    static let returnTo = URL(string: "com.example.app:/handoff")!
    static let authorizationURL = URL(string: "https://stg-id.uaepass.ae/authorize?client_id=app")!
    static let resume = "https://stg-id.uaepass.ae/resume?txn=T1"
    static let cancel = "https://stg-id.uaepass.ae/cancel?txn=T1"
    static let rule = AuthenticatorRule(
        schemes: [.production: "uaepass", .staging: "uaepassstg"], successParameters: ["successurl"], failureParameters: ["failureurl"],
        providerHosts: ["stg-id.uaepass.ae"]
    )
    static let link = URL(string: "uaepass://digitalid?txn=T1&successurl=\(FormEncoding.escape(resume))&failureurl=\(FormEncoding.escape(cancel))")!
    static let callback = URL(string: "com.example.app:/oauth/callback?code=C&state=S")!

    static func webViewPlan(withoutReturn: SignInFlow.Plan.WithoutReturn = .reload) -> SignInFlow.Plan {
        SignInFlow.Plan(
            flowID: "F1", strategy: .webView, authorizationURL: authorizationURL, redirectURI: redirectURI,
            rewrite: .init(rule: rule, environment: .staging, returnTo: returnTo), withoutReturn: withoutReturn, gracePeriod: 2
        )
    }

    static func browserPlan(_ strategy: UserAgentStrategy = .systemBrowser, providerPage: Bool = true) -> SignInFlow.Plan {
        SignInFlow.Plan(
            flowID: "F1", strategy: strategy, authorizationURL: authorizationURL, redirectURI: redirectURI, returnsThroughProviderPage: providerPage
        )
    }

    static func returnURL(_ outcome: String, flow: String = "F1") -> URL {
        URL(string: "com.example.app:/handoff?switchback_flow=\(flow)&switchback_outcome=\(outcome)")!
    }

    /// A WebView flow that has opened the (rewritten) authenticator.
    static func handedOff(withoutReturn: SignInFlow.Plan.WithoutReturn = .reload) -> SignInFlow {
        var flow = SignInFlow(webViewPlan(withoutReturn: withoutReturn))
        _ = flow.handle(.start)
        _ = flow.handle(.navigation(link))
        return flow
    }

    /// The states a flow can wait in, each reached by real events.
    static let waitingStates: [(String, SignInFlow)] = {
        var presenting = SignInFlow(webViewPlan())
        _ = presenting.handle(.start)
        let awaiting = handedOff()
        var resuming = handedOff()
        _ = resuming.handle(.openedURL(returnURL("success")))
        var awaitingCallback = SignInFlow(browserPlan())
        _ = awaitingCallback.handle(.start)
        _ = awaitingCallback.handle(.enteredBackground)
        _ = awaitingCallback.handle(.becameActive)
        _ = awaitingCallback.handle(.graceElapsed)
        var exchanging = handedOff()
        _ = exchanging.handle(.openedURL(returnURL("success")))
        _ = exchanging.handle(.navigation(callback))
        return [
            ("presenting", presenting), ("awaitingAuthenticator", awaiting), ("resuming", resuming), ("awaitingCallback", awaitingCallback),
            ("exchanging", exchanging),
        ]
    }()

    @Test("start shows the authorization URL and saves the journal first")
    func start() {
        var flow = SignInFlow(Self.webViewPlan())
        #expect(flow.handle(.start) == [.persist, .present(Self.authorizationURL)])
        #expect(flow.state == .presenting)
        #expect(flow.handle(.start) == [], "a second start does nothing")
    }

    @Test("the WebView trick: rewrite and launch, return, load the saved page in the same WebView, intercept the redirect URI")
    func webViewRewrite() throws {
        var flow = SignInFlow(Self.webViewPlan())
        _ = flow.handle(.start)
        #expect(flow.handle(.navigation(Self.authorizationURL)) == [.allowNavigation])
        let launch = flow.handle(.navigation(Self.link))
        let rewrite = try #require(flow.handOff)
        #expect(launch == [.cancelNavigation, .persist, .openAuthenticator(rewrite.link)])
        #expect(rewrite.link.scheme == "uaepassstg", "the staging scheme bug is corrected")
        #expect(flow.state == .awaitingAuthenticator)
        #expect(flow.handle(.authenticatorLaunched) == [])
        #expect(flow.handle(.enteredBackground) == [], "already saved when the authenticator was opened")
        let resume = try #require(URL(string: Self.resume))
        #expect(flow.handle(.openedURL(Self.returnURL("success"))) == [.persist, .load(resume)])
        #expect(flow.state == .resuming(resume))
        #expect(flow.handle(.navigation(resume)) == [.allowNavigation])
        #expect(flow.handle(.navigation(Self.callback)) == [.cancelNavigation, .dismissUserAgent, .exchange(.redirect(Self.callback))])
        #expect(flow.handle(.exchangeSucceeded) == [.complete(.signedIn)])
        #expect(flow.state == .completed)
    }

    @Test("a page that both scripts and meta-refreshes to the authenticator opens it once")
    func duplicateHandOffNavigation() {
        var flow = Self.handedOff()
        #expect(flow.handle(.navigation(Self.link)) == [.cancelNavigation])
    }

    @Test("foreign successurl: an injected return URL off the provider's hosts fails the flow and is never saved")
    func foreignSuccessURL() {
        var flow = SignInFlow(Self.webViewPlan())
        _ = flow.handle(.start)
        let injected = URL(string: "uaepass://digitalid?successurl=\(FormEncoding.escape("https://evil.example/steal"))")!
        #expect(flow.handle(.navigation(injected)) == [.cancelNavigation, .dismissUserAgent, .complete(.failed(.foreignResumeURL))])
        #expect(flow.handOff == nil)
    }

    @Test("decline in the authenticator: the provider's failure page is loaded so the provider answers access_denied")
    func declineLoadsFailurePage() throws {
        var flow = Self.handedOff()
        let cancel = try #require(URL(string: Self.cancel))
        #expect(flow.handle(.openedURL(Self.returnURL("failure"))) == [.persist, .load(cancel)])
    }

    @Test("duplicate app-open URL: the same return delivered twice is refused the second time")
    func duplicateReturn() {
        var flow = Self.handedOff()
        let url = Self.returnURL("success")
        _ = flow.handle(.openedURL(url))
        #expect(flow.handle(.openedURL(url)) == [.reject(url, .callbackReplayed)])
    }

    @Test("replayed callback: a second authorization response while exchanging is refused, not redeemed")
    func replayedCallback() {
        var flow = Self.handedOff()
        _ = flow.handle(.openedURL(Self.returnURL("success")))
        _ = flow.handle(.navigation(Self.callback))
        #expect(flow.handle(.openedURL(Self.callback)) == [.reject(Self.callback, .callbackReplayed)])
        #expect(flow.handle(.callback(.redirect(Self.callback))) == [.reject(Self.callback, .callbackReplayed)])
    }

    @Test("a return naming another flow is refused as unknown; an unrelated link or universal link is ignored")
    func otherFlowAndUnrelated() throws {
        var flow = Self.handedOff()
        let stale = Self.returnURL("success", flow: "F0")
        #expect(flow.handle(.openedURL(stale)) == [.reject(stale, .flowNotFound)])
        #expect(flow.handle(.openedURL(try #require(URL(string: "https://app.example.com/news/42")))) == [])
        #expect(flow.handle(.openedURL(try #require(URL(string: "com.example.app:/settings")))) == [])
        #expect(flow.state == .awaitingAuthenticator)
    }

    @Test("failed provisional load of a custom scheme: acted on as if asked; the policy's own cancellation is ignored")
    func failedProvisionalLoad() throws {
        var flow = SignInFlow(Self.webViewPlan())
        _ = flow.handle(.start)
        #expect(flow.handle(.navigationFailed(Self.link, cancelledByPolicy: true)) == [])
        let actions = flow.handle(.navigationFailed(Self.link, cancelledByPolicy: false))
        #expect(actions == [.persist, .openAuthenticator(try #require(flow.handOff).link)])
        // Android's ERR_UNKNOWN_URL_SCHEME for the app's own redirect URI is the callback.
        var other = Self.handedOff()
        _ = other.handle(.openedURL(Self.returnURL("success")))
        #expect(other.handle(.navigationFailed(Self.callback, cancelledByPolicy: false)) == [.dismissUserAgent, .exchange(.redirect(Self.callback))])
        // A provider page that fails to load fails the flow.
        var failing = SignInFlow(Self.webViewPlan())
        _ = failing.handle(.start)
        #expect(
            failing.handle(.navigationFailed(Self.authorizationURL, cancelledByPolicy: false)) == [
                .dismissUserAgent, .complete(.failed(.userAgentFailed)),
            ])
    }

    @Test("authenticator not installed (its link cannot be opened): a typed failure, not a wait")
    func authenticatorNotInstalled() {
        var flow = Self.handedOff()
        #expect(flow.handle(.authenticatorLaunchFailed) == [.dismissUserAgent, .complete(.failed(.authenticatorUnavailable))])
    }

    @Test("became active without a callback, configured outcome", arguments: SignInFlow.Plan.WithoutReturn.allCases)
    func becameActiveWithoutCallback(outcome: SignInFlow.Plan.WithoutReturn) throws {
        var flow = Self.handedOff(withoutReturn: outcome)
        #expect(flow.handle(.becameActive) == [.startGraceTimer(2)])
        let actions = flow.handle(.graceElapsed)
        switch outcome {
        case .wait:
            #expect(actions == [.persist])
            #expect(flow.state == .awaitingCallback)
        case .reload:
            #expect(actions == [.persist, .load(try #require(URL(string: Self.resume)))])
        case .fail:
            #expect(actions == [.dismissUserAgent, .complete(.failed(.authenticatorDidNotReturn))])
        }
        #expect(flow.state != .cancelled, "coming back from the authenticator is never a user cancellation")
    }

    @Test("a return within the grace period disarms the timer")
    func returnWithinGrace() {
        var flow = Self.handedOff()
        _ = flow.handle(.becameActive)
        _ = flow.handle(.openedURL(Self.returnURL("success")))
        #expect(flow.handle(.graceElapsed) == [])
    }

    @Test("going to the background while a system browser shows the provider is the hand-off")
    func systemBrowserHandOff() {
        var flow = SignInFlow(Self.browserPlan())
        _ = flow.handle(.start)
        #expect(flow.handle(.enteredBackground) == [.persist])
        #expect(flow.state == .awaitingAuthenticator)
        #expect(flow.handle(.callback(.redirect(Self.callback))) == [.dismissUserAgent, .exchange(.redirect(Self.callback))])
    }

    @Test("the provider's app return URL brings the app forward; the page goes on")
    func appReturn() throws {
        var plan = Self.browserPlan(.safariView, providerPage: false)
        plan.appReturnURL = URL(string: "https://app.example.com/appswitch")!
        var flow = SignInFlow(plan)
        _ = flow.handle(.start)
        _ = flow.handle(.enteredBackground)
        #expect(flow.handle(.openedURL(try #require(URL(string: "https://app.example.com/appswitch")))) == [.persist])
        #expect(flow.state == .awaitingCallback)
    }

    @Test(
        "a response forwarded to the response link is the redirect URI's: same query and fragment, exchanged once; another path or host is not"
    )
    func responseLink() throws {
        let page = try #require(URL(string: "https://api.example.com/response"))
        var plan = SignInFlow.Plan(flowID: "F1", strategy: .safariView, authorizationURL: Self.authorizationURL, redirectURI: page)
        plan.appReturnURL = URL(string: "https://app.example.com/appswitch")
        plan.responseLink = URL(string: "https://app.example.com/oauth/callback")
        var flow = SignInFlow(plan)
        _ = flow.handle(.start)
        for unrelated in ["https://app.example.com/oauth/other?code=C&state=S", "https://evil.example.com/oauth/callback?code=C&state=S"] {
            #expect(flow.recognise(try #require(URL(string: unrelated))) == .unrelated)
        }
        let forwarded = try #require(URL(string: "https://app.example.com/oauth/callback?code=C%2B1&state=S&iss=https%3A%2F%2Fbroker"))
        #expect(flow.recognise(forwarded) == .callback)
        let expected = try #require(URL(string: "https://api.example.com/response?code=C%2B1&state=S&iss=https%3A%2F%2Fbroker"))
        #expect(flow.handle(.openedURL(forwarded)) == [.dismissUserAgent, .exchange(.redirect(expected))])
        #expect(flow.handle(.openedURL(forwarded)) == [.reject(forwarded, .callbackReplayed)])
        // The redirect URI itself (an authentication session catching it) is unchanged.
        #expect(plan.atRedirectURI(expected) == expected)
        // The bare link, tapped on any page, is no response: it ends nothing.
        var waiting = SignInFlow(plan)
        _ = waiting.handle(.start)
        let bare = try #require(URL(string: "https://app.example.com/oauth/callback"))
        #expect(waiting.recognise(bare) == .unrelated)
        #expect(waiting.handle(.openedURL(bare)) == [])
        #expect(waiting.state == .presenting)
        // A redirect URI registered with a query of its own keeps it; the forwarded members follow.
        var registered = plan
        registered.redirectURI = try #require(URL(string: "https://api.example.com/response?app=ios"))
        let merged = registered.atRedirectURI(try #require(URL(string: "https://app.example.com/oauth/callback?code=C&state=S")))
        #expect(merged.absoluteString == "https://api.example.com/response?app=ios&code=C&state=S")
        #expect(RedirectURIMatcher.matches(merged, registered: registered.redirectURI))
    }

    @Test("cancel in every state: one completion, then nothing", arguments: waitingStates.map(\.0))
    func cancelOnce(state name: String) throws {
        var flow = try #require(Self.waitingStates.first { $0.0 == name }).1
        let actions = flow.handle(.cancel)
        #expect(actions.filter { if case .complete = $0 { true } else { false } } == [.complete(.cancelled)])
        #expect(flow.state == .cancelled)
        for event: SignInFlow.Event in [
            .cancel, .timedOut, .userAgentDismissed, .exchangeSucceeded, .exchangeFailed(.tokenEndpointError), .openedURL(Self.callback),
            .openedURL(Self.returnURL("success")), .navigation(Self.link), .becameActive, .graceElapsed, .relaunched, .start,
        ] {
            #expect(flow.handle(event) == [], "after completion \(event) does nothing")
        }
    }

    @Test("timeout in every state fails once with timedOut", arguments: waitingStates.map(\.0))
    func timeoutOnce(state name: String) throws {
        var flow = try #require(Self.waitingStates.first { $0.0 == name }).1
        #expect(flow.handle(.timedOut).last == .complete(.failed(.timedOut)))
        #expect(flow.handle(.timedOut) == [])
        #expect(flow.handle(.exchangeSucceeded) == [], "an exchange finishing after the timeout does not complete it again")
    }

    @Test("the user closing the user agent cancels, except once the code is being exchanged")
    func dismissed() throws {
        var presenting = try #require(Self.waitingStates.first { $0.0 == "presenting" }).1
        #expect(presenting.handle(.userAgentDismissed) == [.complete(.cancelled)])
        var exchanging = try #require(Self.waitingStates.first { $0.0 == "exchanging" }).1
        #expect(exchanging.handle(.userAgentDismissed) == [])
        #expect(exchanging.handle(.exchangeSucceeded) == [.complete(.signedIn)])
    }

    @Test("kill and relaunch in each waiting state, WebView and system browser")
    func relaunch() throws {
        // WebView, in the authenticator: the return brings the app back and the saved page opens in a new WebView.
        var awaiting = try Self.roundTrip(Self.handedOff())
        #expect(awaiting.handle(.relaunched) == [])
        #expect(awaiting.handle(.openedURL(Self.returnURL("success"))) == [.persist, .present(try #require(URL(string: Self.resume)))])
        // WebView, resuming: the saved page is shown again.
        var resuming = try Self.roundTrip(try #require(Self.waitingStates.first { $0.0 == "resuming" }).1)
        #expect(resuming.handle(.relaunched) == [.persist, .present(try #require(URL(string: Self.resume)))])
        // WebView, before the hand-off: the provider's page is gone with the WebView.
        var presenting = try Self.roundTrip(try #require(Self.waitingStates.first { $0.0 == "presenting" }).1)
        #expect(presenting.handle(.relaunched) == [.complete(.failed(.flowInterrupted))])
        // Exchanging: the code was never saved, so it cannot be redeemed after a relaunch.
        var exchanging = try Self.roundTrip(try #require(Self.waitingStates.first { $0.0 == "exchanging" }).1)
        #expect(exchanging.handle(.relaunched) == [.complete(.failed(.flowInterrupted))])
        // System browser, pattern A: Safari still finishes and sends the callback to the app.
        var browser = SignInFlow(Self.browserPlan())
        _ = browser.handle(.start)
        _ = browser.handle(.enteredBackground)
        browser = try Self.roundTrip(browser)
        #expect(browser.handle(.relaunched) == [.persist])
        #expect(browser.handle(.openedURL(Self.callback)) == [.exchange(.redirect(Self.callback))])
        // A polling page that lived in the closed browser cannot continue.
        var polling = SignInFlow(Self.browserPlan(providerPage: false))
        _ = polling.handle(.start)
        _ = polling.handle(.enteredBackground)
        polling = try Self.roundTrip(polling)
        #expect(polling.handle(.relaunched) == [.complete(.failed(.flowInterrupted))])
    }

    /// The flow written to a journal and read back, as a relaunch does.
    static func roundTrip(_ flow: SignInFlow) throws -> SignInFlow {
        let decoded = try JSONDecoder().decode(SignInFlow.self, from: try JSONEncoder().encode(flow))
        #expect(decoded.state == flow.state)
        #expect(decoded.handOff == flow.handOff)
        return decoded
    }

    @Test("an HTTP error for the provider's sign-in page itself fails the flow as userAgentRefused; other responses change nothing")
    func pageResponses() throws {
        var refused = SignInFlow(Self.webViewPlan())
        _ = refused.handle(.start)
        #expect(refused.handle(.pageResponse(URL(string: "https://stg-id.uaepass.ae/authorize?client_id=app&x=1"), status: 200)).isEmpty)
        #expect(
            refused.handle(.pageResponse(URL(string: "https://stg-id.uaepass.ae/help"), status: 404)).isEmpty,
            "another page's error is the page's business")
        #expect(
            refused.handle(.pageResponse(URL(string: "https://stg-id.uaepass.ae/authorize?client_id=app"), status: 403)) == [
                .dismissUserAgent, .complete(.failed(.userAgentRefused)),
            ])
        #expect(refused.state == .failed(.userAgentRefused))

        // After the hand-off, the authorization endpoint answering an error (a stale reload) is not a refusal.
        var later = Self.handedOff()
        #expect(later.handle(.pageResponse(Self.authorizationURL, status: 500)).isEmpty)
        #expect(later.state == .awaitingAuthenticator)
    }
}
