public import Foundation

/// How platform callbacks read, decided here so the Apple adapters only pass the values along: the
/// authentication session's completion, and a WebView's failed load.
public enum PlatformOutcome {
    /// `ASWebAuthenticationSessionErrorDomain`, and its codes.
    public static let authenticationSessionErrorDomain = "com.apple.AuthenticationServices.WebAuthenticationSession"
    static let canceledLogin = 1

    /// What an authentication session's completion handler reports.
    public enum SessionCompletion: Sendable, Equatable {
        /// It caught the callback URL.
        case callback(URL)
        /// The user tapped Cancel (or closed the sheet).
        case cancelledByUser
        /// It could not be shown or failed otherwise (no presentation anchor, an invalid one, a system error).
        case failed
    }

    public static func sessionCompletion(callbackURL: URL?, errorDomain: String?, errorCode: Int?) -> SessionCompletion {
        if let callbackURL { return .callback(callbackURL) }
        if errorDomain == authenticationSessionErrorDomain, errorCode == canceledLogin { return .cancelledByUser }
        return .failed
    }

    /// Whether a WebView's failed load is the load the app's own policy cancelled (WebKit's "frame load
    /// interrupted", 102, or a cancelled request, -999) rather than a failure of the page.
    public static func loadFailureWasCancellation(errorDomain: String, errorCode: Int) -> Bool {
        (errorDomain == "WebKitErrorDomain" && errorCode == 102) || (errorDomain == NSURLErrorDomain && errorCode == NSURLErrorCancelled)
    }
}

extension UserAgentEvents {
    /// The authentication session's completion handler, as received.
    public func sessionCompleted(callbackURL: URL?, errorDomain: String?, errorCode: Int?) async {
        switch PlatformOutcome.sessionCompletion(callbackURL: callbackURL, errorDomain: errorDomain, errorCode: errorCode) {
        case .callback(let url): await callback(.redirect(url))
        case .cancelledByUser: await dismissed()
        case .failed: await failed()
        }
    }

    /// A WebView's `didFailProvisionalNavigation` or `didFail`, as received: the failing URL (from the
    /// error's `NSURLErrorFailingURLErrorKey`) and the error's domain and code.
    public func loadFailed(_ url: URL?, errorDomain: String, errorCode: Int) async {
        await loadFailed(url, cancelledByPolicy: PlatformOutcome.loadFailureWasCancellation(errorDomain: errorDomain, errorCode: errorCode))
    }
}
