public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// iOS's rules for what its browsers and WebViews do with a URL, in one place: the simulated device and the
/// WebKitGTK host (`WebKitHost/`) both call these, and `IOSUserAgentRulesTests` holds the table, each row with
/// its source.
///
/// - The User-Agent each kind of view sends.
/// - Which schemes a browser loads itself; the rest go to the system, which opens the app that registered them.
/// - What an authentication session catches as its callback (``AuthenticationSessionCallback``, from
///   Apple's `ASWebAuthenticationSession.Callback`).
/// - When a universal link opens its app instead of loading (``universalLinkOpensApp(_:from:)``).
/// - How the test hosts resolve the names of servers that run on loopback.
public enum IOSUserAgentRules {
    // MARK: User-Agent

    /// What Safari, the Safari view and the authentication session send (iOS 17.4 on an iPhone).
    public static let safariUserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1"
    /// What a `WKWebView` sends by default: Safari's string without `Version/…` and `Safari/…`, which
    /// providers read to tell an embedded view (UAE Pass requires one, MitID and Singpass refuse one).
    public static let webViewUserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"

    // MARK: Schemes

    /// Whether a browser shows `url` itself: the web's schemes and the ones a page makes for itself.
    /// Anything else (a custom scheme, `tel:`) is handed to the system.
    public static func browserLoads(_ url: URL) -> Bool {
        WebContent.loadsInBrowser(url)
    }

    // MARK: Authentication session

    /// Whether an authentication session started for `redirectURI` ends on `url`: a custom scheme by its
    /// scheme, an https redirect URI by host and path, an http one never.
    public static func authenticationSessionCatches(_ url: URL, redirectURI: URL) -> Bool {
        AuthenticationSessionCallback(redirectURI: redirectURI)?.matches(url) ?? false
    }

    // MARK: Universal links

    /// What started a navigation to a URL an app may claim.
    public enum Opener: Sendable, Equatable {
        /// An app called `UIApplication.open(_:)`, or the user tapped the link outside a browser (Messages, Mail).
        case app
        /// A page showing `page` navigated, in a browser or a `WKWebView`.
        case page(URL, Navigation)
    }

    /// How a page's navigation started, as WebKit tells it apart.
    public enum Navigation: Sendable, Equatable {
        /// The user tapped a link.
        case tappedLink
        /// The user sent a form (a button tap).
        case submittedForm
        /// Anything without a user's tap on a link: a script, a redirect, back and forward, a typed address.
        case other
    }

    /// Whether the system opens the app that claims `url` instead of loading it: when an app opens it, or
    /// when the user taps a link to it on a page of another host. A script or a redirect never opens one,
    /// a form's submission neither (the app would get the URL without the form's body), and a link within
    /// the same host stays in the browser.
    public static func universalLinkOpensApp(_ url: URL, from opener: Opener) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        switch opener {
        case .app:
            return true
        case .page(let page, let navigation):
            return navigation == .tappedLink && page.host?.lowercased() != url.host?.lowercased()
        }
    }

    // MARK: Names

    /// `hosts` with lowercased names (the first of two spellings of one name wins).
    public static func names(_ hosts: [String: URL]) -> [String: URL] {
        Dictionary(hosts.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// `url` on the loopback server its host stands for in `hosts` (keys lowercased, as ``names(_:)``
    /// makes them), keeping path, query and fragment; nil when `hosts` does not name its host.
    public static func loopbackAddress(of url: URL, in hosts: [String: URL]) -> URL? {
        guard let host = url.host?.lowercased(), let base = hosts[host], var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return nil }
        components.scheme = base.scheme
        components.host = base.host
        components.port = base.port
        return components.url
    }
}
