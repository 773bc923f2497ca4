#if canImport(AuthenticationServices) && canImport(UIKit)
    import AuthenticationServices
    import Foundation
    import Switchback
    import UIKit

    /// Shows the system authentication browser (`ASWebAuthenticationSession`) for the system-browser and
    /// ephemeral-browser strategies, and reports its completion to the flow unchanged: what a completion
    /// means is decided by ``PlatformOutcome`` in the core.
    @MainActor
    final class AuthenticationSessionPresenter: NSObject, ASWebAuthenticationPresentationContextProviding {
        private let anchor: @MainActor () -> ASPresentationAnchor
        private var session: ASWebAuthenticationSession?

        init(anchor: @escaping @MainActor () -> ASPresentationAnchor) {
            self.anchor = anchor
        }

        func present(_ url: URL, ephemeral: Bool, redirectURI: URL, events: UserAgentEvents) throws {
            try start(url, ephemeral: ephemeral, redirectURI: redirectURI) { callbackURL, domain, code in
                Task { await events.sessionCompleted(callbackURL: callbackURL, errorDomain: domain, errorCode: code) }
            }
        }

        /// Starts a session that catches `redirectURI` and passes its completion on as received: the URL
        /// caught, or the error's domain and code.
        func start(_ url: URL, ephemeral: Bool, redirectURI: URL, completion report: @escaping @Sendable (URL?, String?, Int?) -> Void) throws {
            session?.cancel()
            let completion: ASWebAuthenticationSession.CompletionHandler = { callbackURL, error in
                let nsError = error.map { $0 as NSError }
                report(callbackURL, nsError?.domain, nsError?.code)
            }
            // The core's rule for what a session catches; the coordinator refuses a redirect URI no session
            // catches (http) before a presenter is asked.
            guard let callback = AuthenticationSessionCallback(redirectURI: redirectURI) else {
                throw SwitchbackError(.strategyNotSupported, "an authentication session cannot catch this redirect URI")
            }
            let session: ASWebAuthenticationSession
            if #available(iOS 17.4, macOS 14.4, *) {
                session = ASWebAuthenticationSession(url: url, callback: Self.sessionCallback(callback), completionHandler: completion)
            } else {
                // Before 17.4 only custom schemes can be caught; an https redirect URI then reaches the app as a
                // universal link, through the coordinator's router.
                let scheme: String? =
                    switch callback {
                    case .customScheme(let scheme): scheme
                    case .https: nil
                    }
                session = ASWebAuthenticationSession(url: url, callbackURLScheme: scheme, completionHandler: completion)
            }
            session.prefersEphemeralWebBrowserSession = ephemeral
            session.presentationContextProvider = self
            self.session = session
            guard session.start() else {
                self.session = nil
                throw SwitchbackError(.userAgentFailed, "the authentication session did not start")
            }
        }

        @available(iOS 17.4, macOS 14.4, *)
        static func sessionCallback(_ callback: AuthenticationSessionCallback) -> ASWebAuthenticationSession.Callback {
            switch callback {
            case .customScheme(let scheme): .customScheme(scheme)
            case .https(let host, let path): .https(host: host, path: path)
            }
        }

        /// Closes the session; its completion then reports a cancellation the finished flow ignores.
        func dismiss() {
            session?.cancel()
            session = nil
        }

        nonisolated func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor {
            MainActor.assumeIsolated { anchor() }
        }
    }
#endif
