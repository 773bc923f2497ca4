public import Foundation

/// Shows the provider's pages: the platform adapters (`ASWebAuthenticationSession`,
/// `SFSafariViewController`, `WKWebView`) and the simulated device implement it. A host only translates:
/// it reports what happens through the ``UserAgentEvents`` it is given and performs what it is told.
public protocol UserAgentHost: Sendable {
    /// Shows `url` with `strategy`, replacing any user agent this host shows. Returns once it is shown;
    /// throws when it cannot be (the flow then fails with ``SwitchbackError/Code/userAgentFailed``).
    func present(_ url: URL, strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents) async throws
    /// Loads `url` in the WebView being shown.
    func load(_ url: URL) async
    /// Closes the user agent (not reported back as a dismissal).
    func dismiss() async
}

/// Opens URLs through the operating system (`UIApplication.open`).
public protocol URLOpener: Sendable {
    /// Opens `url`; false when no installed app handles it.
    func open(_ url: URL) async -> Bool
    /// Opens an https `url` only in an installed app that claims it as a universal link
    /// (`UIApplication.open` with `universalLinksOnly`); false, opening nothing, when none does.
    func openUniversalLink(_ url: URL) async -> Bool
}

extension URLOpener {
    /// Without universal-link support every link goes to ``open(_:)`` by its custom scheme.
    public func openUniversalLink(_ url: URL) async -> Bool { false }
}

/// The universal-link form of an app's custom-scheme link, where its app has one (Swedish BankID's
/// `bankid:///?autostarttoken=…` is also `https://app.bankid.com/?autostarttoken=…`). Apple recommends the
/// universal link: it opens only the genuine app (no other app can claim the domain), never a prompt.
public enum AppLinkForm {
    /// `appLinks` maps a custom scheme to the https base its app claims; the query is carried over.
    public static func universalLink(for url: URL, appLinks: [String: URL]) -> URL? {
        guard let scheme = url.scheme?.lowercased(), let base = appLinks[scheme], base.scheme?.lowercased() == "https",
            var components = URLComponents(url: base, resolvingAgainstBaseURL: false)
        else { return nil }
        components.percentEncodedQuery = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery
        components.fragment = nil
        return components.url
    }
}

/// What a user agent reports back to its sign-in.
public struct UserAgentEvents: Sendable {
    let coordinator: SignInCoordinator
    public let flowID: String

    /// The WebView's question before each navigation: true to load it, false to cancel it (the flow has
    /// then acted on it: opened the authenticator, finished, or opened another app).
    public func shouldLoad(_ url: URL?) async -> Bool {
        await coordinator.deliver(.navigation(url), to: flowID).contains(.allowNavigation)
    }

    /// A load failed before it started; `cancelledByPolicy` when it is a load ``shouldLoad(_:)`` refused.
    public func loadFailed(_ url: URL?, cancelledByPolicy: Bool) async {
        await coordinator.deliver(.navigationFailed(url, cancelledByPolicy: cancelledByPolicy), to: flowID)
    }

    /// A WebView received the response to a main-frame navigation (`decidePolicyFor navigationResponse`):
    /// the response's URL and HTTP status. Answer the WebView with "allow" whatever this returns.
    public func pageResponse(_ url: URL?, status: Int) async {
        await coordinator.deliver(.pageResponse(url, status: status), to: flowID)
    }

    /// The authentication session's callback, or a form_post response the app received.
    public func callback(_ callback: AuthorizationCallback) async {
        await coordinator.deliver(.callback(callback), to: flowID)
    }

    /// The user closed the user agent.
    public func dismissed() async {
        await coordinator.deliver(.userAgentDismissed, to: flowID)
    }

    /// The page failed to load for good.
    public func failed() async {
        await coordinator.deliver(.userAgentFailed, to: flowID)
    }
}
