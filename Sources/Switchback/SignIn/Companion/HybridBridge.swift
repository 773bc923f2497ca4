public import Foundation
public import Logging

/// Sign-in for a hybrid app: a web app inside the app's own WebView, which may not show the provider.
///
/// The web app asks for a sign-in by navigating to the trigger URL
/// `switchback://sign-in?return=/home&binding=<secret>[&response_mode=form_post]`, where `binding` is a
/// random secret of the web app's session (kept in `sessionStorage`, at least 16 characters). The bridge
/// cancels that navigation, asks the backend companion (`POST /bridge/start`) for the authorization, and
/// shows it in a secure system browser. The provider answers the companion, which redeems the code and
/// sends the browser to `<returnScheme>://oauth/home?handoffotp=<one-time code>`. The bridge accepts that
/// link only for the sign-in it started, closes the browser and loads `<webOrigin>/home?handoffotp=…` in
/// the WebView; the web app redeems the code once with its binding (`POST /bridge/redeem`). A link for no
/// pending sign-in, a second delivery, or a link carrying anything but a code or an error is refused.
///
/// Failures reach the web app the same way: `<webOrigin><path>?error=<code>` (`cancelled`,
/// `access_denied`, `server_error`, or the companion's refusal such as `not_allowed`; a code that is not
/// lowercase letters and `_` arrives as `server_error`).
public actor HybridBridge {
    public struct Configuration: Sendable {
        /// The web app's origin (`https://web.example.com`); returns load there.
        public var webOrigin: URL
        /// The app's deep-link scheme the companion returns to; it must be on the companion's allow-list.
        public var returnScheme: String
        /// The scheme of the trigger URL the web app navigates to.
        public var triggerScheme: String

        public init(webOrigin: URL, returnScheme: String, triggerScheme: String = "switchback") {
            self.webOrigin = webOrigin
            self.returnScheme = returnScheme.lowercased()
            self.triggerScheme = triggerScheme.lowercased()
        }
    }

    /// The secure browser the sign-in is shown in (`ASWebAuthenticationSession` with `returnScheme` as its
    /// callback scheme, or Safari); its return link goes to ``handleReturn(_:)``, a dismissal to
    /// ``browserDismissed()``.
    public protocol Browser: Sendable {
        func show(_ url: URL, returnScheme: String) async throws
        func close() async
    }

    /// The URL a browser showing the bridge's sign-in catches as its callback, `<returnScheme>://oauth`:
    /// what every ``Browser`` hands its authentication session. Throws when `returnScheme` is not a scheme.
    public static func callbackURL(returnScheme: String) throws -> URL {
        guard let url = URL(string: "\(returnScheme)://oauth"), url.scheme?.lowercased() == returnScheme.lowercased() else {
            throw SwitchbackError(.invalidConfiguration, "the return scheme is not a URL scheme")
        }
        return url
    }

    /// What the app's WebView does with a navigation.
    public enum Decision: Sendable, Equatable {
        case allow
        /// Cancel it: the bridge has acted on it.
        case cancel
    }

    /// What became of a link the system delivered to the app.
    public enum ReturnOutcome: Sendable, Equatable {
        /// Not a bridge link (another scheme or host): the app handles it as before.
        case notBridge
        /// The WebView was sent to this URL.
        case loaded(URL)
        /// Refused; nothing was loaded.
        case rejected(SwitchbackError.Code)
    }

    public nonisolated let configuration: Configuration
    /// The backend companion that runs the sign-in.
    public nonisolated let companion: CompanionClient
    private let browser: any Browser
    private let loadInWebView: @Sendable (URL) async -> Void
    private let logger: Logger
    /// The return path of the sign-in in progress; nil when none is.
    private var pendingPath: String?

    public init(
        _ configuration: Configuration, companion: CompanionClient, browser: any Browser, loadInWebView: @escaping @Sendable (URL) async -> Void,
        logger: Logger = Logger(label: "switchback.hybrid")
    ) {
        self.configuration = configuration
        self.companion = companion
        self.browser = browser
        self.loadInWebView = loadInWebView
        self.logger = logger
    }

    /// The WebView's question before each navigation. A trigger starts the sign-in (and is cancelled);
    /// anything else is the web app's business.
    public func decide(_ url: URL?) async -> Decision {
        guard let url, url.scheme?.lowercased() == configuration.triggerScheme else { return .allow }
        await start(from: url)
        return .cancel
    }

    private func start(from trigger: URL) async {
        let fields = Dictionary(
            (FormEncoding.decode(URLComponents(url: trigger, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "", plusIsSpace: true) ?? []),
            uniquingKeysWith: { first, _ in first }
        )
        let path = fields["return"] ?? "/"
        guard trigger.host?.lowercased() == "sign-in", Self.isSafePath(path) else {
            return await fail(path: "/", "invalid_request", "the trigger is not \(configuration.triggerScheme)://sign-in with a plain return path")
        }
        guard let binding = fields["binding"], (16...512).contains(binding.utf8.count) else {
            return await fail(path: path, "invalid_request", "the trigger carries no binding of 16 to 512 characters")
        }
        let responseMode = fields["response_mode"].map { ResponseMode(rawValue: $0) }
        if case .some(nil) = responseMode {
            return await fail(path: path, "invalid_request", "the trigger's response_mode is not query, fragment or form_post")
        }
        let authorizationURL: URL
        do {
            authorizationURL = try await companion.startBridge(
                CompanionAPI.BridgeStart(scheme: configuration.returnScheme, path: path, binding: binding, responseMode: responseMode ?? nil))
        } catch let error as SwitchbackError where error.code == .insecureEndpoint {
            return await fail(path: path, "server_error", "the companion is not https")
        } catch let error as SwitchbackError where error.oauthError != nil {
            return await fail(
                path: path, Self.errorCode(error.oauthError!.error), "the companion refused the sign-in (HTTP \(error.httpStatus ?? 0))")
        } catch {
            return await fail(path: path, "server_error", "the companion could not start the sign-in")
        }
        pendingPath = path
        do {
            try await browser.show(authorizationURL, returnScheme: configuration.returnScheme)
            logger.info("hybrid sign-in shown in the browser", metadata: ["return": "\(path)"])
        } catch {
            pendingPath = nil
            await fail(path: path, "server_error", "the browser could not be shown")
        }
    }

    /// A link the system (or the browser session) delivered. Only the return of the sign-in in progress,
    /// carrying exactly a `handoffotp` or an `error`, is loaded into the WebView.
    public func handleReturn(_ url: URL) async -> ReturnOutcome {
        guard url.scheme?.lowercased() == configuration.returnScheme, url.host?.lowercased() == "oauth" else { return .notBridge }
        guard let path = pendingPath else {
            logger.warning("hybrid return link for no sign-in in progress refused")
            return .rejected(.callbackReplayed)
        }
        let returned = url.path.isEmpty ? "/" : url.path
        guard returned == path, url.fragment == nil, url.user == nil,
            let fields = FormEncoding.decode(URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? "", plusIsSpace: false),
            fields.count == 1, let (name, value) = fields.first, name == "handoffotp" || name == "error", !value.isEmpty, value.utf8.count <= 512,
            name == "error" || Self.isOneTimeCode(value)
        else {
            logger.warning("hybrid return link of an unexpected shape refused")
            return .rejected(.handOffLinkInvalid)
        }
        pendingPath = nil
        await browser.close()
        let target = webURL(path: path, query: [(name, name == "error" ? Self.errorCode(value) : value)])
        await loadInWebView(target)
        logger.info("hybrid sign-in returned to the web app", metadata: ["outcome": "\(name == "error" ? "error" : "code")"])
        return .loaded(target)
    }

    /// The browser session ended by catching `url` (`ASWebAuthenticationSession`'s completion handler). A
    /// valid return loads the web app as ``handleReturn(_:)`` does; anything else ends the sign-in with
    /// `?error=invalid_response`, since the session that could have returned is over.
    public func browserCompleted(with url: URL) async -> ReturnOutcome {
        let outcome = await handleReturn(url)
        if case .loaded = outcome { return outcome }
        guard pendingPath != nil else { return outcome }
        await browser.close()
        await end(with: "invalid_response")
        return outcome
    }

    /// `ASWebAuthenticationSession`'s completion handler, as received: the URL it caught, or its error's
    /// domain and code. A caught link goes to ``browserCompleted(with:)``; the user's Cancel tells the web app
    /// `cancelled`; any other failure (the session could not be presented) tells it `server_error`.
    public func browserSessionCompleted(callbackURL: URL?, errorDomain: String?, errorCode: Int?) async {
        switch PlatformOutcome.sessionCompletion(callbackURL: callbackURL, errorDomain: errorDomain, errorCode: errorCode) {
        case .callback(let url): _ = await browserCompleted(with: url)
        case .cancelledByUser: await browserDismissed()
        case .failed: await end(with: "server_error")
        }
    }

    /// The user closed the browser before the sign-in returned.
    public func browserDismissed() async {
        await end(with: "cancelled")
    }

    /// Ends the sign-in in progress, if any, telling the web app `error`.
    private func end(with error: String) async {
        guard let path = pendingPath else { return }
        pendingPath = nil
        await loadInWebView(webURL(path: path, query: [("error", error)]))
    }

    /// Whether a sign-in is waiting for its return link.
    public var isSigningIn: Bool { pendingPath != nil }

    /// A one-time code as the companion makes them: 16 to 512 characters of the base64url alphabet. Anything
    /// else in a return link is not the companion's and does not reach the web app.
    static func isOneTimeCode(_ value: String) -> Bool {
        (16...512).contains(value.utf8.count) && Base64URL.isAlphabet(value)
    }

    /// An error code as the web app receives it: OAuth-shaped (`a`–`z` and `_`, at most 40 characters) as it
    /// came, anything else `server_error`, so that neither the companion nor a forged return link can put
    /// text of its choosing into the web app's page.
    static func errorCode(_ raw: String) -> String {
        OAuthErrorResponse.plainCode(raw) ?? "server_error"
    }

    private func fail(path: String, _ code: String, _ reason: String) async {
        logger.notice("hybrid sign-in not started", metadata: ["reason": "\(reason)"])
        await loadInWebView(webURL(path: path, query: [("error", code)]))
    }

    private func webURL(path: String, query: [(String, String)]) -> URL {
        var components = URLComponents(url: configuration.webOrigin, resolvingAgainstBaseURL: false) ?? URLComponents()
        components.percentEncodedPath = path
        components.percentEncodedQuery = FormEncoding.encode(query)
        components.fragment = nil
        return components.url ?? configuration.webOrigin
    }

    /// `/`-rooted, letters, digits, `-`, `_`, `.` and `/`, no empty or dot segments: the same rule the
    /// companion applies, so the path cannot leave the web origin.
    @_spi(SwitchbackInternals) public static func isSafePath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), path.utf8.count <= 256 else { return false }
        if path == "/" { return true }
        return path.dropFirst().split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
            !segment.isEmpty && segment != "." && segment != ".."
                && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }
        }
    }
}
