// The README's Apple wiring: the functions it calls are Tools/Examples/GettingStarted/App.swift, which runs on
// Linux against the emulator. Compiled by scripts/apple-typecheck.sh against the Apple API model (AppleSurface).
#if canImport(SwiftUI) && canImport(UIKit)
import Switchback
import SwitchbackApple
import SwiftUI
import UIKit

@main
struct GettingStartedApp: App {
    let coordinator = makeCoordinator(
        endpoints: .uaePass(.staging), companion: CompanionClient(URL(string: "https://api.example.com")!),
        host: ApplePresenter(window: { UIApplication.shared.connectedScenes.compactMap { ($0 as? UIWindowScene)?.keyWindow }.first }),
        opener: ApplicationURLOpener(), journal: KeychainFlowJournalStore()
    )

    var body: some Scene {
        WindowGroup {
            Button("Sign in with UAE Pass") { Task { _ = try? await signIn(coordinator) } }
                .switchbackRouting(AppRouting(coordinator: coordinator))   // return links reach the coordinator
                .task { _ = try? await coordinator.restore() }             // sign-ins a termination interrupted
        }
    }
}
#endif
