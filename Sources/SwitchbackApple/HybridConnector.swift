#if canImport(WebKit) && canImport(AuthenticationServices) && canImport(UIKit)
    public import AuthenticationServices
    public import Foundation
    public import Switchback
    public import UIKit
    public import WebKit

    /// Connects a hybrid app's WKWebView (Capacitor and the like) to a ``HybridBridge``: the WebView's
    /// navigation questions go to the bridge, the sign-in is shown in an `ASWebAuthenticationSession` whose
    /// callback scheme is the return scheme, and its completion goes back to the bridge as received. Every
    /// decision is the bridge's.
    ///
    /// ```swift
    /// let connector = HybridConnector(
    ///     HybridBridge.Configuration(webOrigin: URL(string: "https://web.example.com")!, returnScheme: "myapp"),
    ///     companion: CompanionClient(URL(string: "https://auth.example.com")!),
    ///     webView: webView, anchor: { view.window! })
    /// webView.navigationDelegate = connector          // or call `shouldAllow` from your own delegate
    /// ```
    @MainActor
    public final class HybridConnector: NSObject, WKNavigationDelegate {
        public let bridge: HybridBridge
        private let browser: SessionBrowser

        /// `ephemeral` asks the session not to share Safari's cookies.
        public init(
            _ configuration: HybridBridge.Configuration, companion: CompanionClient, webView: WKWebView,
            anchor: @escaping @MainActor () -> ASPresentationAnchor,
            ephemeral: Bool = false
        ) {
            let browser = SessionBrowser(anchor: anchor, ephemeral: ephemeral)
            self.browser = browser
            self.bridge = HybridBridge(
                configuration, companion: companion, browser: browser,
                loadInWebView: { [weak webView] url in
                    await MainActor.run { _ = webView?.load(URLRequest(url: url)) }
                })
            super.init()
            browser.bridge = bridge
        }

        public func webView(
            _ webView: WKWebView, decidePolicyFor navigationAction: WKNavigationAction,
            decisionHandler: @escaping @MainActor @Sendable (WKNavigationActionPolicy) -> Void
        ) {
            let url = navigationAction.request.url
            let bridge = bridge
            Task { @MainActor in decisionHandler(await bridge.decide(url) == .allow ? .allow : .cancel) }
        }

        /// For an app whose WebView already has a navigation delegate: call this first from its
        /// `decidePolicyFor`, and cancel the navigation when it returns false.
        public func shouldAllow(_ navigationAction: WKNavigationAction) async -> Bool {
            await bridge.decide(navigationAction.request.url) == .allow
        }

        /// A link the system delivered (`scene(_:openURLContexts:)`, SwiftUI `onOpenURL`): true when it was the
        /// bridge's, accepted or refused; false when the app should handle it.
        public func handle(url: URL) async -> Bool {
            await bridge.handleReturn(url) != .notBridge
        }
    }

    /// The bridge's browser: one `ASWebAuthenticationSession` at a time, caught on the return scheme, its
    /// completion reported to the bridge unchanged.
    @MainActor
    private final class SessionBrowser: HybridBridge.Browser {
        weak var bridge: HybridBridge?
        private let presenter: AuthenticationSessionPresenter
        private let ephemeral: Bool

        init(anchor: @escaping @MainActor () -> ASPresentationAnchor, ephemeral: Bool) {
            presenter = AuthenticationSessionPresenter(anchor: anchor)
            self.ephemeral = ephemeral
        }

        func show(_ url: URL, returnScheme: String) async throws {
            try presenter.start(url, ephemeral: ephemeral, redirectURI: try HybridBridge.callbackURL(returnScheme: returnScheme)) {
                [weak self] callbackURL, domain, code in
                Task { @MainActor in await self?.bridge?.browserSessionCompleted(callbackURL: callbackURL, errorDomain: domain, errorCode: code) }
            }
        }

        func close() async {
            presenter.dismiss()
        }
    }
#endif
