#if canImport(UIKit)
    public import Foundation
    public import Switchback
    #if canImport(Darwin)
        import UIKit
    #else
        // NSUserActivity is Foundation's on Apple platforms; on Linux the type-check's UIKit model declares it.
        public import UIKit
    #endif

    /// Wires the app's lifecycle and URL entry points into the coordinator, one call each. Events reach the
    /// coordinator one at a time in the order the system delivered them (a link that opened the app before
    /// `didBecomeActive` is handled before it).
    ///
    /// ```swift
    /// // SceneDelegate
    /// func scene(_ scene: UIScene, openURLContexts contexts: Set<UIOpenURLContext>) { routing.open(contexts.map(\.url)) }
    /// func scene(_ scene: UIScene, continue userActivity: NSUserActivity) { routing.continue(userActivity) }
    /// ```
    @MainActor
    public final class AppRouting {
        public let coordinator: SignInCoordinator
        /// Called with links that belong to no sign-in, for the app's own handling.
        public var unhandled: (@MainActor (URL) -> Void)?
        private var observers: [any NSObjectProtocol] = []
        private let events: AsyncStream<Event>.Continuation

        enum Event: Sendable {
            case becameActive, enteredBackground
            case link(URL)
        }

        public init(coordinator: SignInCoordinator, notificationCenter: NotificationCenter = .default) {
            self.coordinator = coordinator
            let (stream, events) = AsyncStream.makeStream(of: Event.self)
            self.events = events
            // One consumer, so the coordinator sees the events in the order they were posted; it ends with the stream.
            Task { [weak self] in
                for await event in stream {
                    switch event {
                    case .becameActive: await coordinator.appDidBecomeActive()
                    case .enteredBackground: await coordinator.appDidEnterBackground()
                    case .link(let url):
                        let handled = (try? await coordinator.handle(url: url)) ?? true
                        if !handled { self?.unhandled?(url) }
                    }
                }
            }
            let pairs: [(Notification.Name, Event)] = [
                (UIApplication.didBecomeActiveNotification, .becameActive), (UIApplication.didEnterBackgroundNotification, .enteredBackground),
            ]
            for (name, event) in pairs {
                observers.append(notificationCenter.addObserver(forName: name, object: nil, queue: .main) { _ in events.yield(event) })
            }
        }

        deinit {
            events.finish()
        }

        /// `application(_:open:options:)`, `scene(_:openURLContexts:)`, SwiftUI `onOpenURL`.
        public func open(_ urls: [URL]) {
            for url in urls { events.yield(.link(url)) }
        }

        /// `scene(_:continue:)`, `application(_:continue:restorationHandler:)`, SwiftUI `onContinueUserActivity`.
        public func `continue`(_ userActivity: NSUserActivity) {
            guard userActivity.activityType == NSUserActivityTypeBrowsingWeb, let url = userActivity.webpageURL else { return }
            events.yield(.link(url))
        }
    }

    extension SetupCheck {
        /// The check of this app's Info.plist.
        public static var main: SetupCheck { SetupCheck(infoDictionary: Bundle.main.infoDictionary ?? [:]) }
    }
#endif

#if canImport(SwiftUI) && canImport(UIKit)
    public import SwiftUI

    extension View {
        /// Routes opened URLs and universal links to the sign-in (`onOpenURL`, `onContinueUserActivity`).
        @MainActor
        public func switchbackRouting(_ routing: AppRouting) -> some View {
            onOpenURL { routing.open([$0]) }
                .onContinueUserActivity(NSUserActivityTypeBrowsingWeb) { routing.continue($0) }
        }
    }
#endif
