#if canImport(UIKit)
public import Foundation
public import Switchback
#if canImport(Darwin)
import UIKit
#else
// NSUserActivity is Foundation's on Apple platforms; on Linux the type-check's UIKit model declares it.
public import UIKit
#endif

/// Wires the app's lifecycle and URL entry points into the coordinator, one call each.
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

    public init(coordinator: SignInCoordinator, notificationCenter: NotificationCenter = .default) {
        self.coordinator = coordinator
        let pairs: [(Notification.Name, @Sendable (SignInCoordinator) async -> Void)] = [
            (UIApplication.didBecomeActiveNotification, { await $0.appDidBecomeActive() }),
            (UIApplication.didEnterBackgroundNotification, { await $0.appDidEnterBackground() }),
        ]
        for (name, action) in pairs {
            observers.append(notificationCenter.addObserver(forName: name, object: nil, queue: .main) { _ in
                Task { await action(coordinator) }
            })
        }
    }

    /// `application(_:open:options:)`, `scene(_:openURLContexts:)`, SwiftUI `onOpenURL`.
    public func open(_ urls: [URL]) {
        for url in urls { route(url, universalLink: false) }
    }

    /// `scene(_:continue:)`, `application(_:continue:restorationHandler:)`, SwiftUI `onContinueUserActivity`.
    public func `continue`(_ userActivity: NSUserActivity) {
        guard userActivity.activityType == NSUserActivityTypeBrowsingWeb, let url = userActivity.webpageURL else { return }
        route(url, universalLink: true)
    }

    private func route(_ url: URL, universalLink: Bool) {
        let coordinator = coordinator
        Task { @MainActor in
            let handled = (try? await universalLink ? coordinator.handle(userActivity: url) : coordinator.handle(url: url)) ?? true
            if !handled { unhandled?(url) }
        }
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
