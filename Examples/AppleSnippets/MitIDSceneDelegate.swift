// The MitID guide's Apple wiring (a UIKit scene delegate). Compiled by scripts/apple-typecheck.sh against
// the Apple API model (AppleSurface); the functions it calls are Tools/Examples/Guides/Guides.swift, which runs
// on Linux against the emulator.
#if canImport(UIKit)
import Switchback
import SwitchbackApple
import UIKit

final class SceneDelegate: UIResponder, UIWindowSceneDelegate {
    var window: UIWindow?
    private lazy var coordinator = makeMitIDCoordinator(
        broker: "https://broker.example.com", host: ApplePresenter(window: { [weak self] in self?.window }), opener: ApplicationURLOpener(),
        journal: KeychainFlowJournalStore()
    )
    private lazy var routing = AppRouting(coordinator: coordinator)

    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        // A universal link that launched the app (the MitID app returning after iOS terminated it).
        for activity in connectionOptions.userActivities { routing.continue(activity) }
        Task { _ = try? await coordinator.restore() }
    }

    func scene(_ scene: UIScene, continue userActivity: NSUserActivity) {
        routing.continue(userActivity)
    }

    func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>) {
        routing.open(URLContexts.map(\.url))
    }

    func signInTapped() {
        Task {
            let result = try await signInWithMitID(coordinator)
            print("signed in at \(result.acr ?? "?")")
        }
    }
}
#endif
