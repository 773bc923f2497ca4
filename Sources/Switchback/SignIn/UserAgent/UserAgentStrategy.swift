/// Where the provider's pages are shown during a sign-in.
public enum UserAgentStrategy: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The system's authentication browser (`ASWebAuthenticationSession`) sharing Safari's cookies: its
    /// callback hook catches the redirect URI, and an authenticator's https resume page opened in Safari
    /// still finds the provider's session (pattern A works).
    case systemBrowser = "system-browser"
    /// The same browser with a private, ephemeral cookie jar: nothing is shared with Safari, so a resume
    /// page that Safari opens is a dead end.
    case ephemeralBrowser = "ephemeral-browser"
    /// A Safari view (`SFSafariViewController`): its own cookie jar and no callback hook; the redirect URI
    /// and app return links reach the app by the operating system's URL routing.
    case safariView = "safari-view"
    /// The app's own WebView: every navigation passes through ``NavigationPolicy``, authenticator links are
    /// rewritten to return to the app, and the redirect URI is intercepted before it loads.
    case webView = "webview"

    public var description: String { rawValue }

    /// Whether the user agent itself reports the redirect URI (the authentication session's callback).
    public var hasCallbackHook: Bool {
        self == .systemBrowser || self == .ephemeralBrowser
    }

    /// Whether the app sees, and may rewrite, each navigation.
    public var seesNavigations: Bool { self == .webView }

    /// Whether the user agent's cookies are Safari's, so a provider page Safari opens continues the sign-in.
    public var sharesSafariCookies: Bool { self == .systemBrowser }
}

/// How the authenticator app brings the user back. The documentation calls them pattern A
/// (``providerPage``), pattern B (``appScheme``) and pattern C (``universalLink``).
public enum ReturnPattern: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// A: an https page on the provider's domain, opened by the system in Safari.
    case providerPage = "provider-page"
    /// B: the app's own custom scheme.
    case appScheme = "app-scheme"
    /// C: a universal link on a domain the app owns, with its association file.
    case universalLink = "universal-link"

    public var description: String { rawValue }
}
