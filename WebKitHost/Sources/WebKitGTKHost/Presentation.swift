import Foundation
import SwitchbackTesting
import CWebKitGTK
import CWebKitShim

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

    /// The presentation a C callback's context names (``open(store:userAgent:at:)`` keeps it retained until ``close()``).
    private static func of(_ context: UnsafeMutableRawPointer?) -> Presentation {
        Unmanaged<Presentation>.fromOpaque(context!).takeUnretainedValue()
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
                Presentation.of(context).decide(decision!, navigation!.pointee)
            },
            { uri, domain, code, context in
                Presentation.of(context).failed(
                    uri.map { String(cString: $0) }, domain: String(cString: domain!), code: Int(code))
            },
            { uri, context in
                Presentation.of(context).host?.observe(
                    .finished(uri.flatMap { URL(string: String(cString: $0)) }))
            },
            { uri, status, context in
                Presentation.of(context).responded(
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
                        self.evaluate(PageScripts.html) { continuation.resume(returning: $0) }
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
        sb_cookies(
            view, url.absoluteString, { header, context in CallbackBox<String>.take(context).run(header.map { String(cString: $0) } ?? "") },
            CallbackBox(done).retained())
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
        sb_snapshot(view, path, { written, context in CallbackBox<Bool>.take(context).run(written != 0) }, CallbackBox(done).retained())
    }

    func evaluate(_ script: String, _ done: @escaping @Sendable (String) -> Void) {
        guard let view else { return done("") }
        sb_evaluate(
            view, script, { text, context in CallbackBox<String>.take(context).run(text.map { String(cString: $0) } ?? "") },
            CallbackBox(done).retained())
    }
}

/// A Swift completion handed through a C callback's `void *` context: retained when handed over, taken
/// (and released) once when the C side calls back. One box for every engine callback that returns a value.
final class CallbackBox<Value>: Sendable {
    let run: @Sendable (Value) -> Void
    init(_ run: @escaping @Sendable (Value) -> Void) { self.run = run }

    /// The box as a C context; the callback must ``take(_:)`` it exactly once.
    func retained() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }

    /// The box a C callback was given, released.
    static func take(_ context: UnsafeMutableRawPointer?) -> CallbackBox { Unmanaged<CallbackBox>.fromOpaque(context!).takeRetainedValue() }
}

/// A C pointer carried to the loop's thread, where alone it is used.
struct Pointer<T>: @unchecked Sendable {
    let value: UnsafeMutablePointer<T>
    init(_ value: UnsafeMutablePointer<T>) { self.value = value }
}
