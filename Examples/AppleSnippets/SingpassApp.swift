// The Singpass guide's Apple wiring (a SwiftUI app). Compiled by scripts/apple-typecheck.sh against the
// Apple API model (AppleSurface); the functions it calls are Tools/Examples/Guides/Guides.swift, which runs on
// Linux against the emulator.
#if canImport(SwiftUI) && canImport(UIKit)
import Switchback
import SwitchbackApple
import SwiftUI
import UIKit

@main
struct SingpassExampleApp: App {
    // The backend companion is Singpass's client: it holds the signing and DPoP keys.
    let coordinator = makeSingpassCoordinator(
        companion: CompanionClient(URL(string: "https://api.example.com")!),
        host: ApplePresenter(window: { UIApplication.shared.connectedScenes.compactMap { ($0 as? UIWindowScene)?.keyWindow }.first }),
        opener: ApplicationURLOpener(), journal: KeychainFlowJournalStore()
    )
    @State private var session: String?

    var body: some Scene {
        WindowGroup {
            Button("Sign in with Singpass") {
                Task {
                    // Sent back to the companion as `Authorization: Session …`; keep it in the Keychain.
                    session = try await signInWithSingpass(coordinator).companion?.session
                }
            }
            .switchbackRouting(AppRouting(coordinator: coordinator))
            .task { _ = try? await coordinator.restore() }
        }
    }
}
#endif
