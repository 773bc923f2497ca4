#if canImport(AuthenticationServices) && canImport(SafariServices) && canImport(WebKit) && canImport(UIKit)
    import AuthenticationServices
    public import Foundation
    public import Switchback
    public import UIKit
    public import WebKit

    /// The user agents of an iOS app, one per strategy, behind the core's ``UserAgentHost``.
    ///
    /// ```swift
    /// let presenter = ApplePresenter(window: { scene.keyWindow })
    /// let coordinator = SignInCoordinator(.app(client), host: presenter, opener: ApplicationURLOpener(), journal: KeychainFlowJournalStore())
    /// ```
    @MainActor
    public final class ApplePresenter: UserAgentHost {
        private let window: @MainActor () -> UIWindow?
        private let dataStore: WKWebsiteDataStore
        private lazy var session = AuthenticationSessionPresenter(anchor: { [window] in window() ?? ASPresentationAnchor() })
        private lazy var safari = SafariViewPresenter(presenting: { [weak self] in self?.topViewController })
        private var webView: WebViewController?

        /// `window` gives the window to present from; `dataStore` is the WebView's website data store.
        public init(window: @escaping @MainActor () -> UIWindow?, dataStore: WKWebsiteDataStore = .nonPersistent()) {
            self.window = window
            self.dataStore = dataStore
        }

        public func present(_ url: URL, strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents) async throws {
            await dismiss()
            switch strategy {
            case .systemBrowser, .ephemeralBrowser:
                try session.present(url, ephemeral: strategy == .ephemeralBrowser, redirectURI: redirectURI, events: events)
            case .safariView:
                try safari.present(url, events: events)
            case .webView:
                guard let host = topViewController else { throw SwitchbackError(.userAgentFailed, "no view controller to present the WebView from") }
                let controller = WebViewController(events: events, dataStore: dataStore)
                webView = controller
                host.present(UINavigationController(rootViewController: controller), animated: true)
                controller.loadViewIfNeeded()
                controller.webView.load(URLRequest(url: url))
            }
        }

        public func load(_ url: URL) async {
            webView?.webView.load(URLRequest(url: url))
        }

        public func dismiss() async {
            session.dismiss()
            safari.dismiss()
            webView?.navigationController?.dismiss(animated: true)
            webView = nil
        }

        private var topViewController: UIViewController? {
            var top = window()?.rootViewController
            while let presented = top?.presentedViewController { top = presented }
            return top
        }
    }

    /// `UIApplication.open`, for the coordinator to open authenticator links.
    public struct ApplicationURLOpener: URLOpener {
        public init() {}

        public func open(_ url: URL) async -> Bool {
            await UIApplication.shared.open(url, options: [:])
        }

        public func openUniversalLink(_ url: URL) async -> Bool {
            await UIApplication.shared.open(url, options: [.universalLinksOnly: true])
        }
    }
#endif
