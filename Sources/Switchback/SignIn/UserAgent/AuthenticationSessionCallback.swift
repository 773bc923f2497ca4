public import Foundation

/// What the system's authentication browser (`ASWebAuthenticationSession`) catches as its callback, as
/// Apple documents it: a custom scheme by its scheme (`Callback.customScheme(_:)`, and the
/// `callbackURLScheme` of the older initializer), an https URL by host and path
/// (`Callback.https(host:path:)`, iOS 17.4). Apple offers no callback for http, so an http redirect URI
/// is never caught: ``init(redirectURI:)`` returns nil for it and the coordinator refuses such a sign-in.
///
/// The Apple adapter turns this value into the session's callback, and the test hosts (the simulated
/// device and the WebKitGTK host) catch with ``matches(_:)``, so all three follow one rule.
public enum AuthenticationSessionCallback: Sendable, Hashable {
    /// A custom scheme, lowercased: any URL of that scheme is caught.
    case customScheme(String)
    /// An https URL with this host (lowercased) and exactly this path.
    case https(host: String, path: String)

    /// The callback that catches `redirectURI`; nil when no session can catch it (http, an https URL
    /// without a host, or no scheme).
    public init?(redirectURI: URL) {
        guard let scheme = redirectURI.scheme?.lowercased() else { return nil }
        switch scheme {
        case "http":
            return nil
        case "https":
            guard let host = redirectURI.host?.lowercased(), !host.isEmpty else { return nil }
            self = .https(host: host, path: redirectURI.path)
        default:
            self = .customScheme(scheme)
        }
    }

    /// Whether the session ends on `url`, handing it to the app.
    public func matches(_ url: URL) -> Bool {
        switch self {
        case .customScheme(let scheme):
            url.scheme?.lowercased() == scheme
        case .https(let host, let path):
            url.scheme?.lowercased() == "https" && url.host?.lowercased() == host && url.path == path
        }
    }
}
