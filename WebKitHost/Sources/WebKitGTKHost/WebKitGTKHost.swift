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
///   (``Seat/ephemeralSession``) a fresh store shared with nothing. It catches its callback and closes.
///
/// What iOS does with a URL (its callback rule, universal links, the User-Agent strings, the loopback
/// names) is `IOSUserAgentRules`, the same rules the simulated device follows.
/// - "Safari" itself exists here only as the store the authentication session draws on.
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

    fileprivate let loop: MainLoop
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
    private let lock = NSLock()
    private var observed: [Observation] = []
    private var current: Presentation?
    private var system: (any URLOpener)?
    private var hosts: [String: URL] = [:]
    /// The long-lived stores (by seat: `safari`, `safariView`, `webView`), shared by the hosts of one device.
    private let stores: Stores

    /// The long-lived stores by name; touched on the loop's thread only, released with the last host using them.
    final class Stores: @unchecked Sendable {
        let loop: MainLoop
        var byName: [String: Pointer<WebKitWebContext>] = [:]
        /// The name proxy (its URL) each long-lived store already routes through, so that it is routed once.
        var routedThrough: [String: String] = [:]

        init(loop: MainLoop) { self.loop = loop }

        deinit {
            let stores = Array(byName.values)
            loop.perform { for store in stores { g_object_unref(store.value) } }
        }
    }

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

    /// Where the browsers send what they do not load (other schemes, universal links): the device's
    /// operating system, which opens the app that handles it. Without one such links open nothing.
    /// `hosts` names servers that run on loopback (`api.example.com` → `http://127.0.0.1:8080`): every view
    /// reaches their https under those names through a loopback proxy with a certificate made for them
    /// (``NameProxy``), so pages keep their real origins; an http navigation to one of the names loads the
    /// loopback address instead.
    @discardableResult
    public func routeLinks(through system: any URLOpener, resolving hosts: [String: URL] = [:]) -> Self {
        lock.withLock {
            self.system = system
            self.hosts = IOSUserAgentRules.names(hosts)
        }
        return self
    }

    /// The proxy that carries the named servers' https under their names (started with the first view
    /// shown after ``routeLinks(through:resolving:)`` named servers); nil without names. A proxy that could
    /// not start fails every view shown after it, typed, rather than leaving the names unreachable.
    private var names: Task<NameProxy, any Error>?

    private func nameProxy() async throws -> NameProxy? {
        let task = lock.withLock { () -> Task<NameProxy, any Error>? in
            if names == nil, !hosts.isEmpty {
                let hosts = hosts
                names = Task { try await NameProxy.start(hosts: hosts) }
            }
            return names
        }
        return try await task?.value
    }

    /// `url` on the loopback server its host name stands for, if ``routeLinks(through:resolving:)`` named it
    /// and the name proxy does not carry it (an http URL, or no proxy).
    func resolved(_ url: URL) -> URL? {
        if url.scheme?.lowercased() == "https", lock.withLock({ names != nil }) { return nil }
        return IOSUserAgentRules.loopbackAddress(of: url, in: lock.withLock { hosts })
    }

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

    /// A hybrid app's secure browser on the engine (`HybridBridge.Browser`): an authentication session in
    /// `host` (a window of its own over the app's WebView), catching `<returnScheme>://oauth` and closing,
    /// that tells the bridge what the Apple adapter (`HybridConnector`) tells it: the session's completion,
    /// the URL caught or the user's Cancel. `bridge` gives the launch's bridge.
    public struct BridgeBrowser: HybridBridge.Browser {
        let host: WebKitGTKHost
        let bridge: @Sendable () -> HybridBridge?

        public init(_ host: WebKitGTKHost, bridge: @escaping @Sendable () -> HybridBridge?) {
            self.host = host
            self.bridge = bridge
        }

        public func show(_ url: URL, returnScheme: String) async throws {
            guard let callback = URL(string: "\(returnScheme)://oauth") else {
                throw SwitchbackError(.invalidURL, "the return scheme is not a scheme")
            }
            let bridge = bridge
            try await host.presentSession(url, callback: callback, ephemeral: false) { url, domain, code in
                await bridge()?.browserSessionCompleted(callbackURL: url, errorDomain: domain, errorCode: code)
            }
        }

        public func close() async { await host.dismiss() }
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

    /// The store a new view of `seat` uses: the app's WebView or Safari view store, kept; a fresh one for an
    /// ephemeral session; for an authentication session a fresh one holding Safari's persistent cookies.
    private func store(for seat: Seat) async throws -> Pointer<WebKitWebContext> {
        let proxy = try await nameProxy()
        let store = await unroutedStore(for: seat)
        // The named servers' https goes through the name proxy, under their names, with its certificate: once
        // for a long-lived store, and for each fresh one.
        if let proxy {
            await loop.run {
                if let kept = seat.keptStoreName {
                    guard self.stores.routedThrough[kept] != proxy.url else { return }
                    self.stores.routedThrough[kept] = proxy.url
                }
                let names = proxy.names.map { strdup($0) } + [nil]
                defer { for name in names { free(name) } }
                names.withUnsafeBufferPointer { buffer in
                    buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                        sb_store_route(store.value, proxy.url, proxy.certificatePEM, $0)
                    }
                }
            }
        }
        return store
    }

    private func unroutedStore(for seat: Seat) async -> Pointer<WebKitWebContext> {
        if let name = seat.keptStoreName { return await loop.run { self.kept(name) } }
        let session = await loop.run { Pointer(sb_store_new()) }
        if seat == .authenticationSession {
            _ = await copyCookies(from: await loop.run { self.kept(Seat.safari.rawValue) }, to: session, persistentOnly: true)
        }
        return session
    }

    /// A long-lived store; on the loop's thread only.
    private func kept(_ name: String) -> Pointer<WebKitWebContext> {
        if let store = stores.byName[name] { return store }
        let store = Pointer(sb_store_new()!)
        stores.byName[name] = store
        return store
    }

    private func copyCookies(from: Pointer<WebKitWebContext>, to: Pointer<WebKitWebContext>, persistentOnly: Bool) async -> Int {
        await withCheckedContinuation { continuation in
            let done = CopyDone { continuation.resume(returning: $0) }
            loop.perform {
                sb_copy_cookies(
                    from.value, to.value, persistentOnly ? 1 : 0,
                    { copied, context in Unmanaged<CopyDone>.fromOpaque(context!).takeRetainedValue().run(Int(copied)) },
                    Unmanaged.passRetained(done).toOpaque())
            }
        }
    }

    private final class CopyDone: Sendable {
        let run: @Sendable (Int) -> Void
        init(_ run: @escaping @Sendable (Int) -> Void) { self.run = run }
    }

    /// What a browser (the Safari view, the authentication session) does with a navigation, by
    /// `IOSUserAgentRules`: the authentication session catches its callback and closes; a scheme other than
    /// the web's goes to the system; a universal link the rule lets open goes to the app that claims it, if
    /// one does; the rest the browser loads.
    func browserLoads(_ navigation: Presentation.Navigation, catching callback: (redirectURI: URL, caught: @Sendable (URL) async -> Void)?) async
        -> Bool
    {
        // A view already closed or replaced does nothing more: it neither catches nor routes anything.
        guard lock.withLock({ current === navigation.source }), let url = navigation.url else {
            return false
        }
        if let callback, IOSUserAgentRules.authenticationSessionCatches(url, redirectURI: callback.redirectURI) {
            observe(.caught(url))
            guard await closeCurrent(if: navigation.source) != nil else { return false }
            await callback.caught(url)
            return false
        }
        let system = lock.withLock { self.system }
        if !IOSUserAgentRules.browserLoads(url) {
            let opened = await system?.open(url) ?? false
            observe(.routed(url, opened: opened))
            return false
        }
        if let from = navigation.from, IOSUserAgentRules.universalLinkOpensApp(url, from: .page(from, navigation.rule)), let system,
            await system.openUniversalLink(url)
        {
            observe(.routed(url, opened: true))
            return false
        }
        if let loopback = resolved(url) {
            observe(.resolved(url, to: loopback))
            await loop.run { navigation.source.load(loopback) }
            return false
        }
        return true
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
    private func closeCurrent(if only: Presentation? = nil) async -> Presentation? {
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

    /// The text of the page the WebView shows (for tests; evaluated apart from the page's own scripts).
    public func pageText() async -> String {
        await evaluate("document.body ? document.body.innerText : ''")
    }

    /// The user types a username and password into the page's sign-in form (one with a `username` field)
    /// and taps its submit button (for tests); false when the page has no such form.
    @discardableResult
    public func userSignsIn(username: String, password: String) async -> Bool {
        let target = await evaluate("(function(){\(Self.signIn(username: username, password: password))return '';})()")
        guard target.hasPrefix("sign-in:") else { return false }
        return await submit(String(target.dropFirst("sign-in:".count)))
    }

    static let signsIn = "signs in with username and password"

    /// Script statements that, on a page with a sign-in form (a password field whose form has a `username`
    /// field; a code display's form has none), fill it and return `sign-in:` and the button to tap.
    static func signIn(username: String, password: String) -> String {
        """
        var p=Array.prototype.find.call(document.querySelectorAll('input[type=password]'),function(i){return i.form&&i.form.querySelector('input[name=username]');});
        if(p)return 'sign-in:'+\(fill("p.form", [("username", username), ("password", password)]));
        """
    }

    /// A script expression that types `fields` (name, value) into `form` (an expression for a form element)
    /// and names the element the user then taps to send it: its submit button (given an ID if it has
    /// none), or `-` when it has none and was submitted as Enter in a field would.
    static func fill(_ form: String, _ fields: [(String, String)]) -> String {
        let assignments = fields.map { "(function(i){if(i)i.value=\(literal($0.1));})(f.querySelector('[name=\"'+\(literal($0.0))+'\"]'));" }.joined()
        return """
            (function(f){\(assignments)var b=f.querySelector('button[type=submit],input[type=submit],button:not([type])');
            if(b){if(!b.id)b.id='switchback-submit';return b.id;}f.submit();return '-';})(\(form))
            """
    }

    /// The user types `fields` (name, value) into the shown page's form with `id` and taps its submit button
    /// with input events; false when the page has no such form.
    @discardableResult
    public func userFills(formWithID id: String, _ fields: [(String, String)]) async -> Bool {
        let target = await evaluate(
            "(function(){var f=document.getElementById(\(Self.literal(id)));if(!f||f.tagName!=='FORM')return '';return \(Self.fill("f", fields));})()"
        )
        return await submit(target)
    }

    /// Taps the submit button a ``fill(_:_:)`` script named (`-`: the form was sent without one).
    private func submit(_ target: String) async -> Bool {
        if target == "-" { return true }
        guard !target.isEmpty else { return false }
        return await userClicks(elementWithID: target)
    }

    /// What the user does on the shown page, if it asks anything of them, read from its DOM as a person reads
    /// the screen: signs in on a username and password form (not a code display's, whose user has the app),
    /// and taps (with input events, ``userClicks(elementWithID:)``) a confirmation form's button (`form#confirm`,
    /// `#continue`), the return link (`#return`) or the page's "Open …" link (`#handoff`, once per page).
    /// Forms are filled by script and sent by tapping their submit button. Returns what they did, in the
    /// demo's words; nil when the page asks nothing. For tests and `switchback-webkit demo`.
    public func userActs(username: String, password: String, tapsHandOff: Bool) async -> String? {
        let script = """
            (function(){
            \(Self.signIn(username: username, password: password))
            var c=document.getElementById('confirm');
            if(c&&c.tagName==='FORM'){var b=document.getElementById('continue');if(b)return 'tap:continue:'+b.textContent.trim();c.submit();return 'taps "Continue"';}
            var r=document.getElementById('return');
            if(r&&r.href){return 'tap:return:'+r.textContent.trim();}
            var h=document.getElementById('handoff');
            if(\(tapsHandOff ? "true" : "false")&&h&&h.href&&!window.switchbackTapped){window.switchbackTapped=true;return 'tap:handoff:'+h.textContent.trim();}
            return '';})()
            """
        let done = await evaluate(script)
        if done.hasPrefix("sign-in:") {
            return await submit(String(done.dropFirst("sign-in:".count))) ? Self.signsIn : nil
        }
        // A link or button is tapped with input events, so the engine's gesture flag is a person's, not a script's.
        if done.hasPrefix("tap:") {
            let parts = done.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3, await userClicks(elementWithID: parts[1]) else { return nil }
            return "taps \"\(parts[2])\""
        }
        return done.isEmpty ? nil : done
    }

    /// `text` as a JavaScript string literal: letters and digits as they are, everything else escaped.
    static func literal(_ text: String) -> String {
        "'"
            + text.unicodeScalars.map {
                $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil) ? String($0) : String(format: "\\u{%x}", $0.value)
            }.joined() + "'"
    }

    /// The user taps the element with `id` with input events (a mouse press and release at its centre, the
    /// path a person's tap takes through the engine), not a script: false when the page shows no such element.
    @discardableResult
    public func userClicks(elementWithID id: String) async -> Bool {
        let escaped = id.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        let place = await evaluate(
            "(function(){var e=document.getElementById('\(escaped)');if(!e)return '';e.scrollIntoView({block:'center'});var r=e.getBoundingClientRect();return (r.left+r.width/2)+','+(r.top+r.height/2);})()"
        )
        let point = place.split(separator: ",").compactMap { Double($0) }
        guard point.count == 2, let presentation = lock.withLock({ current }) else { return false }
        await loop.run { presentation.click(x: point[0], y: point[1]) }
        return true
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

    private func evaluate(_ script: String) async -> String {
        guard let presentation = lock.withLock({ current }) else { return "" }
        return await withCheckedContinuation { continuation in
            loop.perform { presentation.evaluate(script) { continuation.resume(returning: $0) } }
        }
    }
}

/// One shown view. Its view and store pointers are touched only on the main loop's thread.
final class Presentation: @unchecked Sendable {
    /// A navigation the engine puts to the view's owner: its URL, whether the user's gesture started it,
    /// and the page it leaves.
    struct Navigation: Sendable {
        let url: URL?
        let userGesture: Bool
        /// The engine's navigation type: link, form, back-forward, reload, form-resubmit or other.
        let kind: String
        let from: URL?
        /// The view the navigation happens in.
        let source: Presentation

        /// How it started, as `IOSUserAgentRules` tells navigations apart.
        var rule: IOSUserAgentRules.Navigation {
            guard userGesture else { return .other }
            switch kind {
            case "link": return .tappedLink
            case "form": return .submittedForm
            default: return .other
            }
        }
    }

    weak var host: WebKitGTKHost?
    /// The owner's answer to a navigation: true to load it.
    let shouldLoad: @Sendable (Navigation) async -> Bool
    /// A failed load, with its error's domain and code.
    let loadFailed: @Sendable (URL?, String, Int) async -> Void
    /// The response to a main-frame navigation, with its HTTP status.
    let response: @Sendable (URL?, Int) async -> Void
    /// The user closed the screen.
    let dismissed: (@Sendable () async -> Void)?
    /// The user agent this view stands in for; set before it opens.
    var seat: WebKitGTKHost.Seat = .webView
    private var view: UnsafeMutablePointer<WebKitWebView>?
    private var store: Pointer<WebKitWebContext>?
    private var context: Unmanaged<Presentation>?

    init(
        host: WebKitGTKHost, shouldLoad: @escaping @Sendable (Navigation) async -> Bool,
        loadFailed: @escaping @Sendable (URL?, String, Int) async -> Void, response: @escaping @Sendable (URL?, Int) async -> Void,
        dismissed: (@Sendable () async -> Void)?
    ) {
        self.host = host
        self.shouldLoad = shouldLoad
        self.loadFailed = loadFailed
        self.response = response
        self.dismissed = dismissed
    }

    /// Opens a view on `store` at `url`. A session's own store (ephemeral or authentication session) is
    /// this view's to release: ``close()`` hands it back.
    func open(store: Pointer<WebKitWebContext>, userAgent: String, at url: URL) {
        let context = Unmanaged.passRetained(self)
        self.context = context
        if seat.keptStoreName == nil { self.store = store }
        view = sb_web_view_new(
            store.value, userAgent,
            { decision, navigation, context in
                Unmanaged<Presentation>.fromOpaque(context!).takeUnretainedValue().decide(decision!, navigation!.pointee)
            },
            { uri, domain, code, context in
                Unmanaged<Presentation>.fromOpaque(context!).takeUnretainedValue().failed(
                    uri.map { String(cString: $0) }, domain: String(cString: domain!), code: Int(code))
            },
            { uri, context in
                Unmanaged<Presentation>.fromOpaque(context!).takeUnretainedValue().host?.observe(
                    .finished(uri.flatMap { URL(string: String(cString: $0)) }))
            },
            { uri, status, context in
                Unmanaged<Presentation>.fromOpaque(context!).takeUnretainedValue().responded(
                    uri.flatMap { URL(string: String(cString: $0)) }, status: Int(status))
            }, context.toOpaque())
        load(url)
    }

    func load(_ url: URL) {
        guard let view else { return }
        loadsPending += 1
        webkit_web_view_load_uri(view, url.absoluteString)
    }

    /// Loads asked for by the app or the host that have not reached decide-policy yet (loop thread only):
    /// their navigations are not the page's own.
    private var loadsPending = 0

    /// Closes the view; returns the session store it owned, for the host to release (after giving an
    /// authentication session's persistent cookies back to Safari).
    func close() -> Pointer<WebKitWebContext>? {
        guard let view else { return nil }
        sb_web_view_destroy(view)
        self.view = nil
        context?.release()
        context = nil
        defer { store = nil }
        return store
    }

    /// decide-policy: keep the decision, ask the flow, answer on the loop's thread.
    private func decide(_ decision: UnsafeMutablePointer<WebKitPolicyDecision>, _ navigation: sb_navigation) -> Int32 {
        guard let host, let view else { return 0 }
        let url = navigation.uri.flatMap { URL(string: String(cString: $0)) }
        let redirect = navigation.is_redirect != 0
        let gesture = navigation.is_user_gesture != 0
        let newWindow = navigation.new_window != 0
        let kind: String =
            switch UInt32(bitPattern: navigation.navigation_type) {
            case WEBKIT_NAVIGATION_TYPE_LINK_CLICKED.rawValue: "link"
            case WEBKIT_NAVIGATION_TYPE_FORM_SUBMITTED.rawValue: "form"
            case WEBKIT_NAVIGATION_TYPE_BACK_FORWARD.rawValue: "back-forward"
            case WEBKIT_NAVIGATION_TYPE_RELOAD.rawValue: "reload"
            case WEBKIT_NAVIGATION_TYPE_FORM_RESUBMITTED.rawValue: "form-resubmit"
            default: "other"
            }
        if host.customSchemesSkipPolicy, let url, !IOSUserAgentRules.browserLoads(url) {
            return 0
        }
        g_object_ref(decision)
        let pending = Pointer(decision)
        let viewPointer = Pointer(view)
        let shouldLoad = shouldLoad
        let loop = host.loop
        let seat = seat
        let from = webkit_web_view_get_uri(view).flatMap { URL(string: String(cString: $0)) }
        let byHost = loadsPending > 0 && !redirect
        if byHost { loadsPending -= 1 }
        let captures = host.capturesPages && !byHost && !redirect
        Task {
            if captures {
                // The page that starts the navigation is still the one shown: keep what it was.
                let html = await withCheckedContinuation { continuation in
                    loop.perform { [weak self] in
                        guard let self else { return continuation.resume(returning: "") }
                        self.evaluate("document.documentElement ? document.documentElement.outerHTML : ''") { continuation.resume(returning: $0) }
                    }
                }
                host.observe(.left(from, html: html, to: url, kind: kind, userGesture: gesture))
            }
            let allowed = await shouldLoad(Navigation(url: url, userGesture: gesture, kind: kind, from: from, source: self))
            if seat == .webView {
                host.observe(.decided(url, kind: kind, redirect: redirect, userGesture: gesture, newWindow: newWindow, allowed: allowed))
            } else {
                host.observe(.navigated(url, kind: kind, userGesture: gesture, loaded: allowed))
            }
            loop.perform { [weak self] in
                // A new window opens in this same view, as the WKWebView adapter does.
                if newWindow {
                    sb_decision_ignore(pending.value)
                    if allowed, self?.view == viewPointer.value, let url { webkit_web_view_load_uri(viewPointer.value, url.absoluteString) }
                } else if allowed, self?.view == viewPointer.value {
                    sb_decision_use(pending.value)
                } else {
                    sb_decision_ignore(pending.value)
                }
            }
        }
        return 1
    }

    private func responded(_ url: URL?, status: Int) {
        host?.observe(.response(url, status: status))
        let response = response
        Task { await response(url, status) }
    }

    private func failed(_ uri: String?, domain: String, code: Int) {
        let url = uri.flatMap { URL(string: $0) }
        host?.observe(.failed(url, domain: domain, code: code))
        let loadFailed = loadFailed
        Task { await loadFailed(url, domain, code) }
    }

    func cookies(for url: URL, _ done: @escaping @Sendable (String) -> Void) {
        guard let view else { return done("") }
        let box = Unmanaged.passRetained(Callback(done)).toOpaque()
        sb_cookies(
            view, url.absoluteString,
            { header, context in
                Unmanaged<Callback>.fromOpaque(context!).takeRetainedValue().run(header.map { String(cString: $0) } ?? "")
            }, box)
    }

    /// The view's current address (loop thread only).
    var url: URL? {
        view.flatMap { webkit_web_view_get_uri($0) }.flatMap { URL(string: String(cString: $0)) }
    }

    func click(x: Double, y: Double) {
        guard let view else { return }
        sb_click(view, x, y)
    }

    func photograph(to path: String, _ done: @escaping @Sendable (Bool) -> Void) {
        guard let view else { return done(false) }
        let box = Unmanaged.passRetained(Written(done)).toOpaque()
        sb_snapshot(
            view, path,
            { written, context in
                Unmanaged<Written>.fromOpaque(context!).takeRetainedValue().run(written != 0)
            }, box)
    }

    private final class Written {
        let run: @Sendable (Bool) -> Void
        init(_ run: @escaping @Sendable (Bool) -> Void) { self.run = run }
    }

    func evaluate(_ script: String, _ done: @escaping @Sendable (String) -> Void) {
        guard let view else { return done("") }
        let box = Unmanaged.passRetained(Callback(done)).toOpaque()
        sb_evaluate(
            view, script,
            { text, context in
                Unmanaged<Callback>.fromOpaque(context!).takeRetainedValue().run(text.map { String(cString: $0) } ?? "")
            }, box)
    }

    private final class Callback {
        let run: @Sendable (String) -> Void
        init(_ run: @escaping @Sendable (String) -> Void) { self.run = run }
    }
}

/// A C pointer carried to the loop's thread, where alone it is used.
struct Pointer<T>: @unchecked Sendable {
    let value: UnsafeMutablePointer<T>
    init(_ value: UnsafeMutablePointer<T>) { self.value = value }
}
