// The Norwegian BankID guide's Apple wiring (a SwiftUI app). Compiled by scripts/apple-typecheck.sh against
// the Apple API model (AppleSurface); the functions it calls are Tools/Examples/Guides/Guides.swift, which runs
// on Linux against the emulator.
#if canImport(SwiftUI) && canImport(UIKit)
import Switchback
import SwitchbackApple
import SwiftUI
import UIKit

@main
struct BankIDExampleApp: App {
    // The backend companion (`switchback server` or SwitchbackServer in your backend) holds the secret.
    let companion = CompanionClient(URL(string: "https://api.example.com")!)
    let coordinator: SignInCoordinator

    init() {
        coordinator = makeBankIDNorwayCoordinator(
            issuer: "https://auth.current.bankid.no/auth/realms/current", companion: companion,
            host: ApplePresenter(window: { UIApplication.shared.connectedScenes.compactMap { ($0 as? UIWindowScene)?.keyWindow }.first }),
            opener: ApplicationURLOpener(), journal: KeychainFlowJournalStore()
        )
    }

    var body: some Scene {
        WindowGroup {
            Button("Sign in with BankID") {
                Task { _ = try await signInWithBankIDNorway(coordinator, companion: companion) }
            }
            .switchbackRouting(AppRouting(coordinator: coordinator))
            .task { _ = try? await coordinator.restore() }
        }
    }
}
#endif
