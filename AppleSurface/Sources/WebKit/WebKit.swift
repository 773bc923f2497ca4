// A model of the WebKit API the adapters use, declared as the iOS 18 SDK documents it. The navigation
// delegate's methods are what a test calls to play the engine (see AppleGlueTests); nothing here loads
// a page. Each declaration names its page (https://developer.apple.com/documentation/webkit/...).
public import Foundation
public import UIKit
#if canImport(FoundationNetworking)
    // On Apple platforms URLRequest and URLResponse are Foundation's; on Linux they live in FoundationNetworking,
    // which this model re-exports so that the adapters' `import Foundation` sees them as on iOS.
    @_exported public import FoundationNetworking
#endif

// https://developer.apple.com/documentation/webkit/wkwebsitedatastore
@MainActor open class WKWebsiteDataStore: NSObject {
    // https://developer.apple.com/documentation/webkit/wkwebsitedatastore/default()
    public static func `default`() -> WKWebsiteDataStore { WKWebsiteDataStore(persistent: true) }
    // https://developer.apple.com/documentation/webkit/wkwebsitedatastore/nonpersistent()
    public static func nonPersistent() -> WKWebsiteDataStore { WKWebsiteDataStore(persistent: false) }
    // https://developer.apple.com/documentation/webkit/wkwebsitedatastore/ispersistent
    public let isPersistent: Bool
    init(persistent: Bool) { isPersistent = persistent }
}

// https://developer.apple.com/documentation/webkit/wkwebviewconfiguration
@MainActor open class WKWebViewConfiguration: NSObject {
    // https://developer.apple.com/documentation/webkit/wkwebviewconfiguration/websitedatastore
    open var websiteDataStore: WKWebsiteDataStore = .default()
    public override init() {}
}

// https://developer.apple.com/documentation/webkit/wknavigation
@MainActor open class WKNavigation: NSObject {}

// https://developer.apple.com/documentation/webkit/wknavigationaction
@MainActor open class WKNavigationAction: NSObject {
    // https://developer.apple.com/documentation/webkit/wknavigationaction/request
    open var request: URLRequest { storedRequest }
    private let storedRequest: URLRequest
    /// A model's constructor: the engine makes these.
    public init(request: URLRequest) { storedRequest = request }
}

// https://developer.apple.com/documentation/webkit/wknavigationresponse
@MainActor open class WKNavigationResponse: NSObject {
    // https://developer.apple.com/documentation/webkit/wknavigationresponse/response
    open var response: URLResponse { storedResponse }
    // https://developer.apple.com/documentation/webkit/wknavigationresponse/isformainframe
    open var isForMainFrame: Bool { mainFrame }
    private let storedResponse: URLResponse
    private let mainFrame: Bool
    /// A model's constructor: the engine makes these.
    public init(response: URLResponse, isForMainFrame: Bool) {
        storedResponse = response
        mainFrame = isForMainFrame
    }
}

// https://developer.apple.com/documentation/webkit/wknavigationactionpolicy
public enum WKNavigationActionPolicy: Int, Sendable {
    case cancel = 0
    case allow = 1
    case download = 2
}

// https://developer.apple.com/documentation/webkit/wknavigationresponsepolicy
public enum WKNavigationResponsePolicy: Int, Sendable {
    case cancel = 0
    case allow = 1
    case download = 2
}

// https://developer.apple.com/documentation/webkit/wknavigationdelegate
@MainActor public protocol WKNavigationDelegate: NSObjectProtocol {
    // https://developer.apple.com/documentation/webkit/wknavigationdelegate/webview(_:decidepolicyfor:decisionhandler:)-2ni62
    func webView(
        _ webView: WKWebView, decidePolicyFor navigationAction: WKNavigationAction,
        decisionHandler: @escaping @MainActor @Sendable (WKNavigationActionPolicy) -> Void)
    // https://developer.apple.com/documentation/webkit/wknavigationdelegate/webview(_:decidepolicyfor:decisionhandler:)-2ni5g
    func webView(
        _ webView: WKWebView, decidePolicyFor navigationResponse: WKNavigationResponse,
        decisionHandler: @escaping @MainActor @Sendable (WKNavigationResponsePolicy) -> Void)
    // https://developer.apple.com/documentation/webkit/wknavigationdelegate/webview(_:didstartprovisionalnavigation:)
    func webView(_ webView: WKWebView, didStartProvisionalNavigation navigation: WKNavigation!)
    // https://developer.apple.com/documentation/webkit/wknavigationdelegate/webview(_:didfinish:)
    func webView(_ webView: WKWebView, didFinish navigation: WKNavigation!)
    // https://developer.apple.com/documentation/webkit/wknavigationdelegate/webview(_:didfailprovisionalnavigation:witherror:)
    func webView(_ webView: WKWebView, didFailProvisionalNavigation navigation: WKNavigation!, withError error: any Error)
    // https://developer.apple.com/documentation/webkit/wknavigationdelegate/webview(_:didfail:witherror:)
    func webView(_ webView: WKWebView, didFail navigation: WKNavigation!, withError error: any Error)
}

// Optional requirements in Objective-C: the engine's defaults when a delegate does not implement one.
extension WKNavigationDelegate {
    public func webView(
        _ webView: WKWebView, decidePolicyFor navigationAction: WKNavigationAction,
        decisionHandler: @escaping @MainActor @Sendable (WKNavigationActionPolicy) -> Void
    ) {
        decisionHandler(.allow)
    }
    public func webView(
        _ webView: WKWebView, decidePolicyFor navigationResponse: WKNavigationResponse,
        decisionHandler: @escaping @MainActor @Sendable (WKNavigationResponsePolicy) -> Void
    ) {
        decisionHandler(.allow)
    }
    public func webView(_ webView: WKWebView, didStartProvisionalNavigation navigation: WKNavigation!) {}
    public func webView(_ webView: WKWebView, didFinish navigation: WKNavigation!) {}
    public func webView(_ webView: WKWebView, didFailProvisionalNavigation navigation: WKNavigation!, withError error: any Error) {}
    public func webView(_ webView: WKWebView, didFail navigation: WKNavigation!, withError error: any Error) {}
}

// https://developer.apple.com/documentation/webkit/wkwebview
@MainActor open class WKWebView: UIView {
    // https://developer.apple.com/documentation/webkit/wkwebview/init(frame:configuration:)
    public init(frame: CGRect, configuration: WKWebViewConfiguration) {
        self.configuration = configuration
        super.init(frame: frame)
    }
    // https://developer.apple.com/documentation/webkit/wkwebview/configuration
    public let configuration: WKWebViewConfiguration
    // https://developer.apple.com/documentation/webkit/wkwebview/navigationdelegate
    open weak var navigationDelegate: (any WKNavigationDelegate)?
    /// The requests `load(_:)` was given, in order (the model's record of what the engine was asked to show).
    public private(set) var loadedRequests: [URLRequest] = []
    // https://developer.apple.com/documentation/webkit/wkwebview/load(_:)-5fl3g
    @discardableResult
    open func load(_ request: URLRequest) -> WKNavigation? {
        loadedRequests.append(request)
        return WKNavigation()
    }
}
