#if canImport(WebKit) && canImport(UIKit)
    import Foundation
    import Switchback
    import UIKit
    import WebKit

    /// The app's own WebView for the WebView strategy: every navigation question goes to the flow
    /// (`UserAgentEvents.shouldLoad`, which applies ``NavigationPolicy`` and the rewrite), every failed load
    /// is reported with its error's domain and code, and the flow's answers are carried out. No script is
    /// injected. The website data store is non-persistent by default; pass `.default()` for a WebView sign-in
    /// to survive the app being terminated while the user is in the authenticator (the provider's session
    /// cookie must still be there when the saved resume page loads).
    @MainActor
    final class WebViewController: UIViewController, WKNavigationDelegate {
        let webView: WKWebView
        private let spinner = UIActivityIndicatorView(style: .medium)
        private let events: UserAgentEvents

        init(events: UserAgentEvents, dataStore: WKWebsiteDataStore) {
            let configuration = WKWebViewConfiguration()
            configuration.websiteDataStore = dataStore
            webView = WKWebView(frame: .zero, configuration: configuration)
            self.events = events
            super.init(nibName: nil, bundle: nil)
            webView.navigationDelegate = self
            // A closure action (iOS 14) rather than target and selector: no Objective-C in the adapter.
            navigationItem.leftBarButtonItem = UIBarButtonItem(
                systemItem: .cancel,
                primaryAction: UIAction { [events] _ in
                    Task { await events.dismissed() }
                })
        }

        @available(*, unavailable)
        required init?(coder: NSCoder) { nil }

        override func loadView() {
            view = webView
            spinner.hidesWhenStopped = true
            navigationItem.rightBarButtonItem = UIBarButtonItem(customView: spinner)
        }

        func webView(
            _ webView: WKWebView, decidePolicyFor navigationAction: WKNavigationAction,
            decisionHandler: @escaping @MainActor @Sendable (WKNavigationActionPolicy) -> Void
        ) {
            let url = navigationAction.request.url
            let events = events
            Task { @MainActor in decisionHandler(await events.shouldLoad(url) ? .allow : .cancel) }
        }

        func webView(
            _ webView: WKWebView, decidePolicyFor navigationResponse: WKNavigationResponse,
            decisionHandler: @escaping @MainActor @Sendable (WKNavigationResponsePolicy) -> Void
        ) {
            decisionHandler(.allow)
            guard navigationResponse.isForMainFrame, let response = navigationResponse.response as? HTTPURLResponse else { return }
            let (url, status) = (response.url, response.statusCode)
            let events = events
            Task { await events.pageResponse(url, status: status) }
        }

        func webView(_ webView: WKWebView, didStartProvisionalNavigation navigation: WKNavigation!) {
            spinner.startAnimating()
        }

        func webView(_ webView: WKWebView, didFinish navigation: WKNavigation!) {
            spinner.stopAnimating()
        }

        func webView(_ webView: WKWebView, didFailProvisionalNavigation navigation: WKNavigation!, withError error: any Error) {
            report(error)
        }

        func webView(_ webView: WKWebView, didFail navigation: WKNavigation!, withError error: any Error) {
            report(error)
        }

        private func report(_ error: any Error) {
            spinner.stopAnimating()
            let nsError = error as NSError
            let url = nsError.userInfo[NSURLErrorFailingURLErrorKey] as? URL
            let events = events
            Task { await events.loadFailed(url, errorDomain: nsError.domain, errorCode: nsError.code) }
        }
    }
#endif
