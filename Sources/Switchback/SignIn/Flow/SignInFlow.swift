public import Foundation

/// One sign-in, as a state machine: a value that does no I/O. Each ``Event`` the app, the user agent or
/// a timer reports goes through ``handle(_:)``, which moves the state and returns the ``Action``s to
/// perform, in order. It completes exactly once: after ``Action/complete(_:)`` every event is ignored.
///
/// ```swift
/// var flow = SignInFlow(plan)
/// for action in flow.handle(.start) { perform(action) }
/// // later, from the WebView's navigation delegate:
/// for action in flow.handle(.navigation(url)) { perform(action) }
/// ```
@_spi(SwitchbackInternals) public struct SignInFlow: Sendable, Codable, Equatable {
    /// What the flow needs to know about this sign-in; fixed when it starts.
    public struct Plan: Sendable, Codable, Equatable {
        /// Correlates the authenticator's return with this flow (random, unguessable).
        public var flowID: String
        public var strategy: UserAgentStrategy
        /// The URL the user agent opens first.
        public var authorizationURL: URL
        /// Where the provider sends the authorization response (matched exactly).
        public var redirectURI: URL
        /// The WebView rewrite of authenticator links, when the strategy is ``UserAgentStrategy/webView``
        /// and the provider hands off to an authenticator.
        public var rewrite: Rewrite?
        /// A return URL the provider itself gives the authenticator (`app_callback_uri`, an app switch
        /// link): opening it only brings the app forward; the user agent's page then continues.
        public var appReturnURL: URL?
        /// Whether the authenticator returns to an https page of the provider, which the system opens in
        /// Safari (pattern A): with a user agent sharing Safari's cookies, the sign-in then finishes even
        /// if the app was terminated meanwhile.
        public var returnsThroughProviderPage: Bool
        /// What happens when the app becomes active after a hand-off and no return arrives in ``gracePeriod``.
        public var withoutReturn: WithoutReturn
        public var gracePeriod: TimeInterval
        /// Custom schemes whose apps also claim an https universal link, opened first (nil in journals
        /// written before it existed).
        public var appLinks: [String: URL]?
        /// The flow opens ``authorizationURL`` in another app (a wallet) rather than in a user agent, and
        /// ends when that app opens ``redirectURI`` (nil in journals written before it existed).
        public var startsInApp: Bool?
        /// The app's universal link its own page at ``redirectURI`` forwards the response to (its query and
        /// fragment unchanged): a response opened there is taken as the redirect URI's.
        public var responseLink: URL?

        public init(
            flowID: String, strategy: UserAgentStrategy, authorizationURL: URL, redirectURI: URL, rewrite: Rewrite? = nil,
            appReturnURL: URL? = nil, returnsThroughProviderPage: Bool = false, withoutReturn: WithoutReturn = .wait, gracePeriod: TimeInterval = 2,
            appLinks: [String: URL]? = nil, startsInApp: Bool? = nil, responseLink: URL? = nil
        ) {
            self.responseLink = responseLink
            self.appLinks = appLinks
            self.startsInApp = startsInApp
            self.returnsThroughProviderPage = returnsThroughProviderPage
            self.flowID = flowID
            self.strategy = strategy
            self.authorizationURL = authorizationURL
            self.redirectURI = redirectURI
            self.rewrite = rewrite
            self.appReturnURL = appReturnURL
            self.withoutReturn = withoutReturn
            self.gracePeriod = gracePeriod
        }

        public typealias Rewrite = SignInRequest.Rewrite
        public typealias WithoutReturn = SignInRequest.WithoutReturn

        /// `url` as the redirect URI received it: a response forwarded to ``responseLink`` carries the
        /// redirect URI's own query items (kept, as registered) and the forwarded query and fragment;
        /// anything else is returned unchanged.
        public func atRedirectURI(_ url: URL) -> URL {
            guard let link = responseLink, !RedirectURIMatcher.matches(url, registered: redirectURI),
                RedirectURIMatcher.matches(url, registered: link),
                let received = URLComponents(url: url, resolvingAgainstBaseURL: false),
                var components = URLComponents(url: redirectURI, resolvingAgainstBaseURL: false)
            else { return url }
            let registered = components.percentEncodedQueryItems ?? []
            let forwarded = (received.percentEncodedQueryItems ?? []).filter { !registered.contains($0) }
            let items = registered + forwarded
            components.percentEncodedQueryItems = items.isEmpty ? nil : items
            components.percentEncodedFragment = received.percentEncodedFragment
            return components.url ?? url
        }

        /// The navigation policy the WebView applies.
        public var navigationPolicy: NavigationPolicy {
            NavigationPolicy(
                redirectURI: redirectURI, authenticator: rewrite?.rule, environment: rewrite?.environment ?? .production,
                returnTo: rewrite?.returnTo ?? redirectURI, flowID: flowID
            )
        }
    }

    public enum State: Sendable, Codable, Equatable {
        /// Not started.
        case ready
        /// The user agent shows the provider's pages.
        case presenting
        /// The user is in the authenticator app.
        case awaitingAuthenticator
        /// The user agent loads the provider's resume page after the authenticator returned.
        case resuming(URL)
        /// Back from the authenticator; the provider's page continues towards the redirect URI.
        case awaitingCallback
        /// The authorization response arrived; the code is being exchanged.
        case exchanging
        case completed
        case failed(SwitchbackError.Code)
        case cancelled

        /// Whether the flow has ended.
        public var isFinal: Bool {
            switch self {
            case .completed, .failed, .cancelled: true
            default: false
            }
        }
    }

    public enum Event: Sendable, Equatable {
        case start
        /// The WebView asks whether to load `url`.
        case navigation(URL?)
        /// A load failed before it started (a custom scheme nothing routes, or a load the policy cancelled).
        case navigationFailed(URL?, cancelledByPolicy: Bool)
        /// A WebView received the response to a main-frame navigation: its URL and HTTP status.
        case pageResponse(URL?, status: Int)
        case authenticatorLaunched
        /// The authenticator's link could not be opened: the app is not installed.
        case authenticatorLaunchFailed
        /// The operating system opened the app with a URL (custom scheme or universal link).
        case openedURL(URL)
        /// The user agent reported the authorization response (the authentication session's callback, or
        /// a form_post response relayed by the app's backend).
        case callback(AuthorizationCallback)
        case becameActive
        case enteredBackground
        /// The user closed the user agent.
        case userAgentDismissed
        /// The user agent could not be shown or its page failed.
        case userAgentFailed
        /// The grace period after ``becameActive`` ended.
        case graceElapsed
        case timedOut
        case cancel
        case exchangeSucceeded
        case exchangeFailed(SwitchbackError.Code)
        /// The return link carried a one-time code its verifier does not know (a link another app or a page
        /// opened, not the wallet's): a flow that opened another app goes back to waiting for the genuine one.
        case returnUnknown
        /// The app was terminated and launched again; the flow was read back from its journal.
        case relaunched
    }

    public enum Action: Sendable, Equatable {
        /// Show the user agent at `url` (the authorization URL, or a resume page after a relaunch).
        case present(URL)
        /// Answer the WebView's navigation question.
        case allowNavigation
        case cancelNavigation
        /// Open the (rewritten) authenticator link through the operating system.
        case openAuthenticator(URL)
        /// Open a link that belongs to another app through the operating system.
        case openExternally(URL)
        /// Load `url` in the WebView that is showing.
        case load(URL)
        /// Wait ``Plan/gracePeriod`` then report ``Event/graceElapsed``.
        case startGraceTimer(TimeInterval)
        /// Save the flow to its journal (the app may be terminated from here on).
        case persist
        case dismissUserAgent
        /// Redeem the code in the response; report ``Event/exchangeSucceeded`` or ``Event/exchangeFailed(_:)``.
        case exchange(AuthorizationCallback)
        /// The URL was for this flow but is refused (a replayed return or callback): nothing else happens.
        case reject(URL, SwitchbackError.Code)
        /// The sign-in is over; remove its journal.
        case complete(Outcome)
    }

    public enum Outcome: Sendable, Equatable {
        case signedIn
        case failed(SwitchbackError.Code)
        case cancelled
    }

    public let plan: Plan
    public private(set) var state: State = .ready
    /// The rewrite of the authenticator link this flow opened (its saved resume URLs).
    public private(set) var handOff: HandOffRewrite?
    /// Whether a user agent is showing (false after a relaunch until the flow presents one again).
    public private(set) var userAgentShown = false
    private var graceArmed = false

    public init(_ plan: Plan) {
        self.plan = plan
    }

    /// How an incoming URL relates to this flow.
    public enum Recognition: Sendable, Equatable {
        /// The authorization response at the redirect URI.
        case callback
        /// A rewritten authenticator return for this flow.
        case authenticatorReturn(HandOffRewrite.Return)
        /// The provider-given app return URL.
        case appReturn
        case unrelated
    }

    public func recognise(_ url: URL) -> Recognition {
        if RedirectURIMatcher.matches(url, registered: plan.redirectURI) { return .callback }
        // A forwarded response carries one; the bare link (tapped on any page) is no response and ends nothing.
        if let link = plan.responseLink, RedirectURIMatcher.matches(url, registered: link), Self.carriesResponse(url) { return .callback }
        if let rewrite = plan.rewrite {
            let match = HandOffRewrite.match(url, returnTo: rewrite.returnTo, flowID: plan.flowID)
            if match != .unrelated { return .authenticatorReturn(match) }
        }
        if let appReturnURL = plan.appReturnURL, RedirectURIMatcher.matches(url, registered: appReturnURL) { return .appReturn }
        return .unrelated
    }

    public mutating func handle(_ event: Event) -> [Action] {
        guard !state.isFinal else { return [] }
        switch event {
        case .start:
            guard state == .ready else { return [] }
            if plan.startsInApp == true {
                // No user agent: the other app is the whole sign-in, and the app may be terminated meanwhile.
                state = .awaitingAuthenticator
                return [.persist, .openAuthenticator(plan.authorizationURL)]
            }
            state = .presenting
            userAgentShown = true
            return [.persist, .present(plan.authorizationURL)]
        case .navigation(let url):
            guard state != .exchanging else { return [.cancelNavigation] }
            return navigate(plan.navigationPolicy.decide(url), answering: true)
        case .navigationFailed(let url, let cancelledByPolicy):
            guard state != .exchanging else { return [] }
            switch plan.navigationPolicy.decideFailedLoad(of: url, cancelledByPolicy: cancelledByPolicy) {
            case .act(let decision): return navigate(decision, answering: false)
            case .ignore: return []
            case .fail: return fail(.userAgentFailed)
            }
        case .pageResponse(let url, let status):
            // An error for the provider's sign-in page itself, before anything else happened: the provider
            // refuses this user agent. Errors on later pages are the page's business (the user sees them).
            guard state == .presenting, status >= 400, let url, Self.sameEndpoint(url, plan.authorizationURL) else { return [] }
            return fail(.userAgentRefused)
        case .authenticatorLaunched:
            return []
        case .authenticatorLaunchFailed:
            guard state == .awaitingAuthenticator else { return [] }
            return fail(.authenticatorUnavailable)
        case .openedURL(let url):
            return opened(url)
        case .callback(let callback):
            return receive(callback)
        case .becameActive:
            guard state == .awaitingAuthenticator else { return [] }
            graceArmed = true
            return [.startGraceTimer(plan.gracePeriod)]
        case .enteredBackground:
            graceArmed = false
            // Every state worth keeping was saved when it was entered. A system browser does not tell the app it opened the authenticator; going to the background
            // while it shows the provider is the sign of it.
            guard state == .presenting, !plan.strategy.seesNavigations else { return [] }
            state = .awaitingAuthenticator
            return [.persist]
        case .graceElapsed:
            guard state == .awaitingAuthenticator, graceArmed else { return [] }
            graceArmed = false
            switch plan.withoutReturn {
            case .wait:
                state = .awaitingCallback
                return [.persist]
            case .reload:
                guard let saved = handOff?.successURL else {
                    state = .awaitingCallback
                    return [.persist]
                }
                return resume(at: saved)
            case .fail:
                return fail(.authenticatorDidNotReturn)
            }
        case .userAgentDismissed:
            userAgentShown = false
            guard state != .exchanging else { return [] }
            state = .cancelled
            return [.complete(.cancelled)]
        case .userAgentFailed:
            guard state != .exchanging else { return [] }
            return fail(.userAgentFailed)
        case .timedOut:
            return fail(.timedOut)
        case .cancel:
            state = .cancelled
            return dismissing() + [.complete(.cancelled)]
        case .exchangeSucceeded:
            guard state == .exchanging else { return [] }
            state = .completed
            return [.complete(.signedIn)]
        case .exchangeFailed(let code):
            guard state == .exchanging else { return [] }
            return fail(code)
        case .returnUnknown:
            guard state == .exchanging, plan.startsInApp == true else { return [] }
            state = .awaitingCallback
            return [.persist]
        case .relaunched:
            return relaunched()
        }
    }

    private mutating func navigate(_ decision: NavigationPolicy.Decision, answering: Bool) -> [Action] {
        let cancel: [Action] = answering ? [.cancelNavigation] : []
        switch decision {
        case .allow:
            return answering ? [.allowNavigation] : []
        case .launchAuthenticator(let rewrite):
            // The same link again (a page that both scripts and meta-refreshes to it) opens the app once.
            if state == .awaitingAuthenticator, handOff?.link == rewrite.link { return cancel }
            handOff = rewrite
            state = .awaitingAuthenticator
            graceArmed = false
            return cancel + [.persist, .openAuthenticator(rewrite.link)]
        case .finish(let url):
            return cancel + receive(.redirect(url))
        case .openExternally(let url):
            return cancel + [.openExternally(url)]
        case .block(let code):
            return cancel + fail(code)
        }
    }

    private mutating func opened(_ url: URL) -> [Action] {
        switch recognise(url) {
        case .callback:
            // A refusal names the URL as it was opened, a forwarded response's too.
            guard state != .exchanging, state != .ready else { return [.reject(url, .callbackReplayed)] }
            return receive(.redirect(plan.atRedirectURI(url)))
        case .authenticatorReturn(.success):
            return authenticatorReturned(url, approved: true)
        case .authenticatorReturn(.failure):
            return authenticatorReturned(url, approved: false)
        case .authenticatorReturn(.otherFlow):
            return [.reject(url, .flowNotFound)]
        case .appReturn:
            guard state == .awaitingAuthenticator || state == .presenting else { return [] }
            guard userAgentShown else { return fail(.flowInterrupted) }
            state = .awaitingCallback
            graceArmed = false
            return [.persist]
        case .authenticatorReturn(.unrelated), .unrelated:
            return []
        }
    }

    /// The rewritten return: load the provider's success page, or its failure page (which answers the
    /// decline with an OAuth error), once.
    private mutating func authenticatorReturned(_ url: URL, approved: Bool) -> [Action] {
        guard state == .awaitingAuthenticator || state == .presenting, let handOff else {
            return [.reject(url, .callbackReplayed)]
        }
        if approved { return resume(at: handOff.successURL) }
        guard let failureURL = handOff.failureURL else { return fail(.authorizationError) }
        return resume(at: failureURL)
    }

    private mutating func resume(at url: URL) -> [Action] {
        state = .resuming(url)
        graceArmed = false
        if userAgentShown { return [.persist, .load(url)] }
        userAgentShown = true
        return [.persist, .present(url)]
    }

    private mutating func receive(_ callback: AuthorizationCallback) -> [Action] {
        guard state != .exchanging, state != .ready else { return [.reject(callback.url, .callbackReplayed)] }
        state = .exchanging
        graceArmed = false
        return dismissing() + [.exchange(callback)]
    }

    private mutating func relaunched() -> [Action] {
        userAgentShown = false
        graceArmed = false
        switch state {
        case .awaitingAuthenticator where plan.startsInApp == true, .awaitingCallback where plan.startsInApp == true:
            // The other app answers elsewhere (a wallet answers the companion) and then opens the return link,
            // which launches the app again: nothing was lost with the terminated process.
            return []
        case .awaitingAuthenticator where handOff != nil:
            // The rewritten return will bring the app back; the saved resume page is opened then.
            return []
        case .resuming(let url):
            return resume(at: url)
        case .presenting where resumesInSafari, .awaitingAuthenticator where resumesInSafari, .awaitingCallback where resumesInSafari:
            // The provider's resume page opens in Safari, which shares the provider's cookies with the closed
            // authentication session: it can still finish and send the redirect URI to the app.
            state = .awaitingCallback
            return [.persist]
        default:
            return fail(.flowInterrupted)
        }
    }

    private var resumesInSafari: Bool {
        plan.strategy.sharesSafariCookies && plan.returnsThroughProviderPage
    }

    /// Whether `url` carries an authorization response's `state`, `code` or `error` (in its query or fragment).
    static func carriesResponse(_ url: URL) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return false }
        let fields = [components.percentEncodedQuery, components.percentEncodedFragment].compactMap { $0 }.flatMap {
            FormEncoding.decode($0, plusIsSpace: true) ?? []
        }
        return fields.contains { ["state", "code", "error"].contains($0.0) }
    }

    /// Same scheme, host, port and path: the authorization endpoint, whatever the query.
    private static func sameEndpoint(_ url: URL, _ endpoint: URL) -> Bool {
        url.scheme?.lowercased() == endpoint.scheme?.lowercased() && url.host?.lowercased() == endpoint.host?.lowercased()
            && url.port == endpoint.port
            && url.path == endpoint.path
    }

    private mutating func fail(_ code: SwitchbackError.Code) -> [Action] {
        state = .failed(code)
        return dismissing() + [.complete(.failed(code))]
    }

    private mutating func dismissing() -> [Action] {
        guard userAgentShown else { return [] }
        userAgentShown = false
        return [.dismissUserAgent]
    }
}
