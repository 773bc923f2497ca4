public import Foundation
public import Switchback
public import SwitchbackTesting
import CWebKitGTK
import CWebKitShim

/// iOS's user agents on a real WebKit engine: a WebKitGTK view standing in for each of them, with the
/// cookie store Apple documents for it, the rules the platform applies to its navigations, and the same
/// core calls the Apple adapters make.
///
/// - The WebView (`WKWebView`, ``Seat/webView``): the app's own data store, kept across presentations as
///   `WKWebsiteDataStore.default()` is; every navigation and new window is put to the flow
///   (`UserAgentEvents.shouldLoad`), its responses and failed loads reported. It decides nothing itself.
/// - The Safari view (`SFSafariViewController`, ``Seat/safariView``): a store of the app's Safari views,
///   separate from Safari's since iOS 11; the app sees none of its navigations. Links of other schemes go
///   to the system (``routeLinks(through:)``), as do https links the user taps to another domain that an
///   app claims (universal links).
/// - The authentication session (`ASWebAuthenticationSession`, ``Seat/authenticationSession``): a store
///   that starts with Safari's persistent cookies, not its session cookies, and gives its persistent
///   cookies back to Safari when it closes; with `prefersEphemeralWebBrowserSession`
///   (``Seat/ephemeralSession``) a fresh store shared with nothing. It catches its callback (a custom
///   scheme by scheme, an https redirect URI by host and path, an http one never) and closes.
/// - "Safari" itself exists here only as the store the authentication session draws on.
///
/// What iOS does with a URL (the callback rule, when a universal link opens its app, the User-Agent
/// strings, the loopback names) is `IOSUserAgentRules`, the same rules the simulated device follows.
///
/// Sources for the store rules: Apple's `prefersEphemeralWebBrowserSession` and
/// `WebAuthenticationSession.BrowserSession` (`.shared` "can share cookies and other browsing data" with
/// the user's browser session, `.ephemeral` does not); for the Safari view, Apple's iOS 11 privacy change
/// as Microsoft's "WebKit and Safari changes in iOS 11" describes it (browsing data kept per app). That
/// a shared session takes Safari's persistent cookies but not its session cookies is what developers
/// report (react-native-app-auth issue 871, among others), not a rule Apple documents; the simulated
/// device makes the same assumption (`SimulatedDevice.sessionJar`).
public final class WebKitGTKHost: UserAgentHost, @unchecked Sendable {
    /// The iOS user agent a shown view stands in for.
    public enum Seat: String, Sendable {
        case webView, safariView, authenticationSession, ephemeralSession
        /// Safari itself: the store the authentication session draws on.
        case safari

        /// The long-lived store the seat's views share, by name; nil for a seat whose every view gets a fresh
        /// store of its own (the authentication sessions), which the view owns and the host releases.
        var keptStoreName: String? {
            switch self {
            case .webView, .safariView, .safari: rawValue
            case .authenticationSession, .ephemeralSession: nil
            }
        }
    }

    /// What the engine reported, in order, for tests to check what really happened.
    public enum Observation: Sendable, Equatable {
        /// A WebView navigation (or new window) put to the flow, and the answer; `kind` is the engine's
        /// navigation type: link, form, back-forward, reload, form-resubmit or other (script, redirect, load).
        case decided(URL?, kind: String, redirect: Bool, userGesture: Bool, newWindow: Bool, allowed: Bool)
        /// A browser (Safari view, authentication session) navigation and whether the browser itself loaded
        /// it (false: it caught it, or handed it to the system).
        case navigated(URL?, kind: String, userGesture: Bool, loaded: Bool)
        /// The response to a main-frame navigation.
        case response(URL?, status: Int)
        /// A load failed with this error.
        case failed(URL?, domain: String, code: Int)
        /// A main-frame page finished loading.
        case finished(URL?)
        case presented(URL, Seat)
        /// The view was not shown: its store could not be routed to the device's names (the name proxy
        /// refused them, or did not start).
        case notShown(URL, reason: String)
        /// The app loaded `url` into the shown view, which then held cookies with these names for it.
        case loaded(URL, cookies: [String])
        /// A browser handed `url` to the system, which opened it (in an app) or not.
        case routed(URL, opened: Bool)
        /// The authentication session caught its callback.
        case caught(URL)
        /// A browser navigation to a name that stands for a loopback server went there instead.
        case resolved(URL, to: URL)
        /// With ``capturesPages``: a page started a navigation itself (a script, a refresh, a form, or the
        /// user's tap: `userGesture`), and this was the page's HTML when it did. Navigations the app or the
        /// host asked for, and redirects, are not the page's and are not recorded.
        case left(URL?, html: String, to: URL?, kind: String, userGesture: Bool)
        case closed
    }

    let loop: MainLoop
    private let userAgent: String
    /// Records, for each navigation a page starts, the page's HTML at that moment (``Observation/left``):
    /// for comparing what a page does in the engine with what a reader of its HTML predicts. Off by default.
    public var capturesPages: Bool {
        get { lock.withLock { captures } }
        set { lock.withLock { captures = newValue } }
    }
    private var captures = false

    /// Lets custom-scheme navigations through without asking the flow, as iOS's WKWebView sometimes does:
    /// the engine then fails the provisional load, and only the failure reaches the flow.
    /// For tests of that fallback path; off in any real use.
    let customSchemesSkipPolicy: Bool
    let lock = NSLock()
    private var observed: [Observation] = []
    var current: Presentation?
    var system: (any URLOpener)?
    var hosts: [String: URL] = [:]
    /// The proxy that carries the named servers' https under their names (started with the first view
    /// shown after ``routeLinks(through:resolving:)`` named servers); nil without names. A proxy that could
    /// not start fails every view shown after it, typed, rather than leaving the names unreachable.
    var names: Task<NameProxy, any Error>?
    /// The long-lived stores (by seat: `safari`, `safariView`, `webView`), shared by the hosts of one device.
    let stores: Stores

    /// Starts (once per process) the GLib main loop the engine runs on. Throws when GTK has no display.
    /// `userAgent` is the WebView's; the browsers send Safari's. With `device`, this host is another window
    /// of that host's device: it shares its stores (Safari's, the Safari views', the app's WebView's), so a
    /// sheet can be shown over the other's view, as an authentication session over a hybrid app's WebView.
    public init(userAgent: String = IOSUserAgentRules.webViewUserAgent, customSchemesSkipPolicy: Bool = false, device: WebKitGTKHost? = nil) throws {
        loop = try MainLoop.shared.get()
        self.userAgent = userAgent
        self.customSchemesSkipPolicy = customSchemesSkipPolicy
        stores = device?.stores ?? Stores(loop: loop)
    }

    public var observations: [Observation] { lock.withLock { observed } }

    func observe(_ observation: Observation) { lock.withLock { observed.append(observation) } }

    // MARK: UserAgentHost

    /// WebKitGTK's counterparts of the errors `PlatformOutcome.loadFailureWasCancellation` knows on iOS: a
    /// frame load interrupted by the app's policy (`WEBKIT_POLICY_ERROR_FRAME_LOAD_INTERRUPTED_BY_POLICY_CHANGE`,
    /// 102) and a cancelled request (`WEBKIT_NETWORK_ERROR_CANCELLED`, 302) are not failures; a custom
    /// scheme the engine cannot show (101) is, and is acted on.
    public static func loadFailureWasCancellation(errorDomain: String, errorCode: Int) -> Bool {
        (errorDomain == "WebKitPolicyError" && errorCode == 102) || (errorDomain == "WebKitNetworkError" && errorCode == 302)
    }

    public func present(_ url: URL, strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents) async throws {
        switch strategy {
        case .webView:
            try await show(
                url, seat: .webView,
                Presentation(
                    host: self, shouldLoad: { await events.shouldLoad($0.url) },
                    loadFailed: {
                        await events.loadFailed($0, cancelledByPolicy: WebKitGTKHost.loadFailureWasCancellation(errorDomain: $1, errorCode: $2))
                    },
                    response: { await events.pageResponse($0, status: $1) },
                    dismissed: { await events.dismissed() }))
        case .safariView:
            try await show(
                url, seat: .safariView,
                Presentation(
                    host: self, shouldLoad: { [weak self] in await self?.browserLoads($0, catching: nil) ?? false }, loadFailed: { _, _, _ in },
                    response: { _, _ in }, dismissed: { await events.dismissed() }))
        case .systemBrowser, .ephemeralBrowser:
            try await presentSession(url, callback: redirectURI, ephemeral: strategy == .ephemeralBrowser) {
                await events.sessionCompleted(callbackURL: $0, errorDomain: $1, errorCode: $2)
            }
        }
    }

    /// Shows `url` in an authentication session (ephemeral or sharing Safari's persistent cookies) that
    /// catches `callback` and closes. `completion` is its completion handler as the Apple adapters receive
    /// it: the URL caught, or the user's Cancel (`ASWebAuthenticationSessionError.canceledLogin`, code 1).
    /// Throws when the session cannot be shown (``Observation/notShown(_:reason:)``).
    public func presentSession(
        _ url: URL, callback: URL, ephemeral: Bool,
        completion: @escaping @Sendable (_ callbackURL: URL?, _ errorDomain: String?, _ errorCode: Int?) async -> Void
    ) async throws {
        let caught: @Sendable (URL) async -> Void = { await completion($0, nil, nil) }
        try await show(
            url, seat: ephemeral ? .ephemeralSession : .authenticationSession,
            Presentation(
                host: self, shouldLoad: { [weak self] in await self?.browserLoads($0, catching: (callback, caught)) ?? false },
                loadFailed: { _, _, _ in }, response: { _, _ in },
                dismissed: { await completion(nil, PlatformOutcome.authenticationSessionErrorDomain, 1) }))
    }

    /// Shows a web app (a hybrid app's own WebView): every navigation and new window is put to `decide`
    /// (a ``HybridBridge``'s `decide(_:) == .allow`), which loads it when true. A web app that cannot be
    /// shown is observed (``Observation/notShown(_:reason:)``).
    public func open(_ start: URL, decide: @escaping @Sendable (URL?) async -> Bool) async {
        try? await show(
            start, seat: .webView,
            Presentation(host: self, shouldLoad: { await decide($0.url) }, loadFailed: { _, _, _ in }, response: { _, _ in }, dismissed: nil))
    }

    /// Shows `url` in a view standing in for `seat`, with no sign-in attached, and returns once the page
    /// finished loading (or after 10 s): the browsers apply their own rules, a WebView loads everything. For
    /// tests and demos that look at the user agents themselves (their cookie stores, what they route).
    /// Throws when the view cannot be shown (``Observation/notShown(_:reason:)``).
    public func browse(_ url: URL, as seat: Seat) async throws {
        let before = finishedLoads
        try await open(url, as: seat)
        for _ in 0..<1000 where finishedLoads == before {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
    }

    private var finishedLoads: Int {
        observations.count { if case .finished = $0 { true } else { false } }
    }

    private func open(_ url: URL, as seat: Seat) async throws {
        let loads: @Sendable (Presentation.Navigation) async -> Bool
        if seat == .webView {
            loads = { _ in true }
        } else {
            loads = { [weak self] in await self?.browserLoads($0, catching: nil) ?? false }
        }
        try await show(
            url, seat: seat, Presentation(host: self, shouldLoad: loads, loadFailed: { _, _, _ in }, response: { _, _ in }, dismissed: nil))
    }

    private func show(_ url: URL, seat: Seat, _ presentation: Presentation) async throws {
        await dismiss()
        presentation.seat = seat
        lock.withLock { current = presentation }
        observe(.presented(url, seat))
        let userAgent = seat == .webView ? userAgent : IOSUserAgentRules.safariUserAgent
        let store: Pointer<WebKitWebContext>
        do {
            store = try await self.store(for: seat)
        } catch {
            lock.withLock { if current === presentation { current = nil } }
            observe(.notShown(url, reason: "\(error)"))
            throw error
        }
        // Dismissed while its store was being prepared: it never opens, and a session's own store is released.
        guard lock.withLock({ current === presentation }) else {
            if seat.keptStoreName == nil { loop.perform { g_object_unref(store.value) } }
            return
        }
        await loop.run { presentation.open(store: store, userAgent: userAgent, at: url) }
    }

    public func load(_ url: URL) async {
        guard let presentation = lock.withLock({ current }) else { return }
        let header = await cookies(for: url)
        let names = header.split(separator: ";").compactMap { $0.split(separator: "=").first.map { String($0).trimmingCharacters(in: .whitespaces) } }
        observe(.loaded(url, cookies: names))
        await loop.run { presentation.load(url) }
    }

    public func dismiss() async {
        await closeCurrent()
    }

    /// The user taps Cancel (or Done) on the shown screen: the screen closes and the flow is told.
    public func userCancels() async {
        guard let presentation = await closeCurrent() else { return }
        await presentation.dismissed?()
    }

    /// Closes the shown view (only when it is `only`, if given); an authentication session first gives its
    /// persistent cookies back to Safari's store. Returns the view closed.
    @discardableResult
    func closeCurrent(if only: Presentation? = nil) async -> Presentation? {
        guard
            let presentation = lock.withLock({ () -> Presentation? in
                guard let shown = current, only == nil || shown === only else { return nil }
                current = nil
                return shown
            })
        else { return nil }
        observe(.closed)
        let store = await loop.run { presentation.close() }
        if let store {
            if presentation.seat == .authenticationSession {
                let safari = await loop.run { self.kept(Seat.safari.rawValue) }
                _ = await copyCookies(from: store, to: safari, persistentOnly: true)
            }
            loop.perform { g_object_unref(store.value) }
        }
        return presentation
    }

    /// The cookies the shown view holds for `url`, as a `Cookie` header value.
    public func cookies(for url: URL) async -> String {
        guard let presentation = lock.withLock({ current }) else { return "" }
        return await withCheckedContinuation { continuation in
            loop.perform { presentation.cookies(for: url) { continuation.resume(returning: $0) } }
        }
    }

    /// The seat of the view shown now, if any.
    public var shownSeat: Seat? { lock.withLock { current?.seat } }

    /// The address of the page the shown view holds; nil when nothing is shown.
    public func pageURL() async -> URL? {
        guard let presentation = lock.withLock({ current }) else { return nil }
        return await loop.run { presentation.url }
    }

    /// Writes a PNG of the shown view to `file`; false when nothing is shown or the engine could not.
    public func photograph(to file: URL) async -> Bool {
        guard let presentation = lock.withLock({ current }) else { return false }
        return await withCheckedContinuation { continuation in
            loop.perform { presentation.photograph(to: file.path) { continuation.resume(returning: $0) } }
        }
    }

    /// Runs `script` on the shown page, apart from the page's own scripts, and returns its string result
    /// (for tests: setting or reading what a page could).
    @discardableResult
    public func runScript(_ script: String) async -> String {
        await evaluate(script)
    }

    func evaluate(_ script: String) async -> String {
        guard let presentation = lock.withLock({ current }) else { return "" }
        return await withCheckedContinuation { continuation in
            loop.perform { presentation.evaluate(script) { continuation.resume(returning: $0) } }
        }
    }
}
