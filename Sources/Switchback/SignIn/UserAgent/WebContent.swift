public import Foundation

/// The schemes a browser or WebView shows itself: the web's, and those a page makes for itself. Anything
/// else (a custom scheme, `tel:`) goes to the system, which opens the app that registered it. The
/// WebView's navigation policy and the test hosts (`IOSUserAgentRules`) share this one list.
@_spi(SwitchbackInternals) public enum WebContent {
    public static let schemes: Set<String> = ["http", "https", "about", "data", "blob"]

    /// Whether a browser loads `url` itself.
    public static func loadsInBrowser(_ url: URL) -> Bool {
        url.scheme.map { schemes.contains($0.lowercased()) } ?? false
    }
}
