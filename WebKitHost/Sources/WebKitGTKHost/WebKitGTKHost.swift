public import Foundation
public import Switchback
import CWebKitGTK
import CWebKitShim

/// The WebView strategy's user agent on a real WebKit engine: a WebKitGTK web view whose navigation and
/// new-window decisions go to the flow (`UserAgentEvents.shouldLoad`), whose failed loads are reported
/// with their error's domain and code, and which carries out the flow's answers (load, close). It is the
/// WKWebView adapter's counterpart and, like it, decides nothing: the same core calls in the same places.
public final class WebKitGTKHost: UserAgentHost, @unchecked Sendable {
    /// What the engine reported, in order, for tests to check what really happened.
    public enum Observation: Sendable, Equatable {
        /// A navigation (or new window) put to the flow, and the answer; `kind` is the engine's navigation
        /// type: link, form, back-forward, reload, form-resubmit or other (script, redirect, load).
        case decided(URL?, kind: String, redirect: Bool, userGesture: Bool, newWindow: Bool, allowed: Bool)
        /// The response to a main-frame navigation.
        case response(URL?, status: Int)
        /// A load failed with this error.
        case failed(URL?, domain: String, code: Int)
        /// A main-frame page finished loading.
        case finished(URL?)
        case presented(URL)
        /// The app loaded `url` into the shown view, which then held cookies with these names for it.
        case loaded(URL, cookies: [String])
        case closed
    }

    /// The user agent iOS WKWebViews send (no `Safari/` token), so providers see an embedded WebView.
    public static let webViewUserAgent =
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"

    fileprivate let loop: MainLoop
    private let userAgent: String
    /// Lets custom-scheme navigations through without asking the flow, as iOS's WKWebView sometimes does:
    /// the engine then fails the provisional load, and only the failure reaches the flow.
    /// For tests of that fallback path; off in any real use.
    let customSchemesSkipPolicy: Bool
    private let lock = NSLock()
    private var observed: [Observation] = []
    private var current: Presentation?

    /// Starts (once per process) the GLib main loop the engine runs on. Throws when GTK has no display.
    public init(userAgent: String = WebKitGTKHost.webViewUserAgent, customSchemesSkipPolicy: Bool = false) throws {
        loop = try MainLoop.shared.get()
        self.userAgent = userAgent
        self.customSchemesSkipPolicy = customSchemesSkipPolicy
    }

    public var observations: [Observation] { lock.withLock { observed } }

    func observe(_ observation: Observation) { lock.withLock { observed.append(observation) } }

    // MARK: UserAgentHost

    public func present(_ url: URL, strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents) async throws {
        guard strategy == .webView else {
            throw SwitchbackError(.strategyNotSupported, "this host is a WebView; \(strategy) needs another user agent")
        }
        await show(
            url,
            Presentation(
                host: self, shouldLoad: { await events.shouldLoad($0) }, loadFailed: { await events.loadFailed($0, errorDomain: $1, errorCode: $2) },
                response: { await events.pageResponse($0, status: $1) }, dismissed: { await events.dismissed() }
            ))
    }

    /// Shows a web app (a hybrid app's own WebView): every navigation and new window is put to `decide`
    /// (a ``HybridBridge``'s `decide(_:) == .allow`), which loads it when true.
    public func open(_ start: URL, decide: @escaping @Sendable (URL?) async -> Bool) async {
        await show(start, Presentation(host: self, shouldLoad: decide, loadFailed: { _, _, _ in }, response: { _, _ in }, dismissed: nil))
    }

    private func show(_ url: URL, _ presentation: Presentation) async {
        await dismiss()
        lock.withLock { current = presentation }
        observe(.presented(url))
        let userAgent = userAgent
        await loop.run { presentation.open(userAgent: userAgent, at: url) }
    }

    public func load(_ url: URL) async {
        guard let presentation = lock.withLock({ current }) else { return }
        let header = await cookies(for: url)
        let names = header.split(separator: ";").compactMap { $0.split(separator: "=").first.map { String($0).trimmingCharacters(in: .whitespaces) } }
        observe(.loaded(url, cookies: names))
        await loop.run { presentation.load(url) }
    }

    public func dismiss() async {
        guard
            let presentation = lock.withLock({
                let shown = current
                current = nil
                return shown
            })
        else { return }
        observe(.closed)
        await loop.run { presentation.close() }
    }

    /// The user taps Cancel on the WebView's screen: the screen closes and the flow is told.
    public func userCancels() async {
        guard
            let presentation = lock.withLock({
                let shown = current
                current = nil
                return shown
            })
        else { return }
        observe(.closed)
        await loop.run { presentation.close() }
        await presentation.dismissed?()
    }

    /// The cookies the shown WebView holds for `url`, as a `Cookie` header value.
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

    /// The user taps the link with this `id` (for tests); false when the page has none.
    @discardableResult
    public func userTaps(linkWithID id: String) async -> Bool {
        let escaped = id.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        return await evaluate("(function(){var a=document.getElementById('\(escaped)');if(!a)return 'no';a.click();return 'yes';})()") == "yes"
    }

    /// The user types a username and password into the page's form and submits it (for tests); false
    /// when the page has no password form.
    @discardableResult
    public func userSignsIn(username: String, password: String) async -> Bool {
        func literal(_ text: String) -> String {
            "'"
                + text.unicodeScalars.map {
                    $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil) ? String($0) : String(format: "\\u{%x}", $0.value)
                }.joined() + "'"
        }
        let script = """
            (function(){var p=document.querySelector('input[type=password]');if(!p||!p.form)return 'no';var f=p.form;
            f.querySelector('input[name=username]').value=\(literal(username));p.value=\(literal(password));f.submit();return 'yes';})()
            """
        return await evaluate(script) == "yes"
    }

    private func evaluate(_ script: String) async -> String {
        guard let presentation = lock.withLock({ current }) else { return "" }
        return await withCheckedContinuation { continuation in
            loop.perform { presentation.evaluate(script) { continuation.resume(returning: $0) } }
        }
    }
}

/// One shown WebView. Its view pointer is touched only on the main loop's thread.
final class Presentation: @unchecked Sendable {
    weak var host: WebKitGTKHost?
    /// The app's answer to a navigation: true to load it.
    let shouldLoad: @Sendable (URL?) async -> Bool
    /// A failed load, with its error's domain and code.
    let loadFailed: @Sendable (URL?, String, Int) async -> Void
    /// The response to a main-frame navigation, with its HTTP status.
    let response: @Sendable (URL?, Int) async -> Void
    /// The user closed the screen.
    let dismissed: (@Sendable () async -> Void)?
    private var view: UnsafeMutablePointer<WebKitWebView>?
    private var context: Unmanaged<Presentation>?

    init(
        host: WebKitGTKHost, shouldLoad: @escaping @Sendable (URL?) async -> Bool, loadFailed: @escaping @Sendable (URL?, String, Int) async -> Void,
        response: @escaping @Sendable (URL?, Int) async -> Void, dismissed: (@Sendable () async -> Void)?
    ) {
        self.host = host
        self.shouldLoad = shouldLoad
        self.loadFailed = loadFailed
        self.response = response
        self.dismissed = dismissed
    }

    func open(userAgent: String, at url: URL) {
        let context = Unmanaged.passRetained(self)
        self.context = context
        view = sb_web_view_new(
            userAgent,
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
        webkit_web_view_load_uri(view, url.absoluteString)
    }

    func close() {
        guard let view else { return }
        sb_web_view_destroy(view)
        self.view = nil
        context?.release()
        context = nil
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
        if host.customSchemesSkipPolicy, let scheme = url?.scheme?.lowercased(), !["http", "https", "about", "data", "blob"].contains(scheme) {
            return 0
        }
        g_object_ref(decision)
        let pending = Pointer(decision)
        let viewPointer = Pointer(view)
        let shouldLoad = shouldLoad
        let loop = host.loop
        Task {
            let allowed = await shouldLoad(url)
            host.observe(.decided(url, kind: kind, redirect: redirect, userGesture: gesture, newWindow: newWindow, allowed: allowed))
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
