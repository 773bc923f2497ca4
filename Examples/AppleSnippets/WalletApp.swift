// Identity wallets in an app (Documentation/Wallets.md): an EUDI wallet over OpenID4VP and an ID in Apple
// Wallet through Verify with Wallet, as two routes of one list with one result. Compiled by
// scripts/apple-typecheck.sh against the Apple API model (AppleSurface).
#if canImport(SwiftUI) && canImport(UIKit)
import Switchback
import SwitchbackApple
import SwiftUI
import UIKit

@main
struct WalletExampleApp: App {
    // The companion verifies every presentation: its `wallet` and `appleIdentity` sections.
    let coordinator = SignInCoordinator(
        .wallets(verifiedBy: CompanionClient(URL(string: "https://api.example.com")!)),
        host: ApplePresenter(window: { UIApplication.shared.connectedScenes.compactMap { ($0 as? UIWindowScene)?.keyWindow }.first }),
        opener: ApplicationURLOpener(), journal: KeychainFlowJournalStore(), identityDocuments: PassKitIdentityDocuments()
    )
    // The wallet answers the companion and returns by the app's universal link (the companion's `wallet.appLink`).
    let eudiWallet = SignInRoute.wallet(WalletRequest(wallet: .openID4VP))
    // The system's sheet; the app keeps nothing it asks for.
    let appleWallet = SignInRoute.verifyWithWallet(
        IdentityDocumentRequest(fields: [.init(.givenName), .init(.familyName), .init(.ageAtLeast(18))]))
    @State private var verified: String?

    /// The claims the companion verified, by credential query id ("identity" for Apple Wallet).
    func signIn(_ route: SignInRoute) {
        Task {
            if case .presentation(let presentation) = try await coordinator.signIn(route) {
                verified = presentation.credentials.keys.sorted().joined(separator: ", ")
            }
        }
    }

    var body: some Scene {
        WindowGroup {
            VStack {
                Button("Continue with \(eudiWallet.name)") { signIn(eudiWallet) }
                Button("Continue with \(appleWallet.name)") { signIn(appleWallet) }
                Text(verified ?? "")
            }
            .switchbackRouting(AppRouting(coordinator: coordinator))
            .task { _ = try? await coordinator.restore() }
        }
    }
}
#endif
