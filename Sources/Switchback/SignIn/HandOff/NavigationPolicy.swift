public import Foundation

/// What a WebView host does with each navigation during a sign-in: a pure function of the URL and the
/// flow, so that every platform adapter (`WKNavigationDelegate`, Android's `shouldOverrideUrlLoading`)
/// only translates callbacks and performs the decision.
///
/// ```swift
/// switch policy.decide(navigationAction.request.url) {
/// case .allow: decisionHandler(.allow)
/// case .launchAuthenticator(let rewrite): decisionHandler(.cancel); save(rewrite); open(rewrite.link)
/// case .finish(let callback): decisionHandler(.cancel); complete(callback)
/// case .openExternally(let url): decisionHandler(.cancel); open(url)
/// case .block(let error): decisionHandler(.cancel); fail(error)
/// }
/// ```
public struct NavigationPolicy: Sendable {
    /// The redirect URI the provider sends the authorization response to (matched exactly).
    public let redirectURI: URL
    /// The provider's authenticator, when it has one the page hands off to.
    public let authenticator: AuthenticatorRule?
    public let environment: AuthenticatorRule.Environment
    /// Where the authenticator must send the user back to (the app's scheme or universal link).
    public let returnTo: URL
    /// Correlates the authenticator's return with this flow.
    public let flowID: String

    public init(
        redirectURI: URL, authenticator: AuthenticatorRule?, environment: AuthenticatorRule.Environment = .production, returnTo: URL, flowID: String
    ) {
        self.redirectURI = redirectURI
        self.authenticator = authenticator
        self.environment = environment
        self.returnTo = returnTo
        self.flowID = flowID
    }

    public enum Decision: Sendable, Equatable {
        /// Let the WebView load it.
        case allow
        /// Cancel; keep the provider's return URLs; open the rewritten deep link.
        case launchAuthenticator(HandOffRewrite)
        /// Cancel; the authorization response has arrived — complete the sign-in with it.
        case finish(URL)
        /// Cancel; another app's link (a phone number, mail, an app the page links to) for the system.
        case openExternally(URL)
        /// Cancel and fail the flow with this error (an authenticator link carrying a foreign return URL).
        case block(SwitchbackError.Code)
    }

    /// The decision for a navigation to `url` (nil URLs, which WebViews do report, are allowed to fail
    /// on their own).
    public func decide(_ url: URL?) -> Decision {
        guard let url else { return .allow }
        if RedirectURIMatcher.matches(url, registered: redirectURI) { return .finish(url) }
        if let authenticator, authenticator.launches(url) {
            do {
                return .launchAuthenticator(
                    try HandOffRewrite(url, rule: authenticator, environment: environment, returnTo: returnTo, flowID: flowID))
            } catch let error as SwitchbackError {
                return .block(error.code)
            } catch {
                return .block(.handOffLinkInvalid)
            }
        }
        return WebContent.loadsInBrowser(url) ? .allow : .openExternally(url)
    }

    /// What to do when a load failed before it started. WebViews report a custom-scheme navigation they
    /// cannot route here instead of asking first on some paths, and report the load the
    /// policy itself cancelled as "interrupted"; neither may fail the sign-in.
    public enum LoadFailureDecision: Sendable, Equatable {
        /// The failure carries the URL the policy would have acted on: act on it now.
        case act(Decision)
        /// A load this policy cancelled on purpose, or a subresource: not an error.
        case ignore
        /// A real failure of the provider's page.
        case fail
    }

    public func decideFailedLoad(of url: URL?, cancelledByPolicy: Bool) -> LoadFailureDecision {
        if let url {
            switch decide(url) {
            case .allow: break
            case let decision where !cancelledByPolicy: return .act(decision)
            default: return .ignore
            }
        }
        return cancelledByPolicy ? .ignore : .fail
    }
}
