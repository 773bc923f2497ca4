#if canImport(SafariServices) && canImport(UIKit)
    import Foundation
    import SafariServices
    import Switchback
    import UIKit

    /// Shows a Safari view (`SFSafariViewController`). It has no callback hook: the redirect URI, app
    /// return links and tap-to-return pages reach the app through the coordinator's router, and the
    /// coordinator then dismisses it. The user's Done before that is reported as a dismissal.
    @MainActor
    final class SafariViewPresenter: NSObject, SFSafariViewControllerDelegate {
        private let presenting: @MainActor () -> UIViewController?
        private var controller: SFSafariViewController?
        private var events: UserAgentEvents?

        init(presenting: @escaping @MainActor () -> UIViewController?) {
            self.presenting = presenting
        }

        func present(_ url: URL, events: UserAgentEvents) throws {
            guard let host = presenting() else { throw SwitchbackError(.userAgentFailed, "no view controller to present the Safari view from") }
            controller?.dismiss(animated: false)
            let controller = SFSafariViewController(url: url)
            controller.delegate = self
            controller.dismissButtonStyle = .cancel
            self.controller = controller
            self.events = events
            host.present(controller, animated: true)
        }

        /// Dismissed by the flow: not reported back (`safariViewControllerDidFinish` is not called then).
        func dismiss() {
            controller?.dismiss(animated: true)
            controller = nil
            events = nil
        }

        nonisolated func safariViewControllerDidFinish(_ controller: SFSafariViewController) {
            MainActor.assumeIsolated {
                guard let events, controller === self.controller else { return }
                self.controller = nil
                self.events = nil
                Task { await events.dismissed() }
            }
        }
    }
#endif
