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
            Button("Pay with BankID") {
                Task {
                    // Your backend registers this order's statement with the companion and hands back its
                    // one-time statement_id (server to server; the app never names a statement itself).
                    let statement = try await statementID(forOrder: "order-42")
                    _ = try await signInWithBankIDNorway(coordinator, companion: companion, statement: statement)
                }
            }
            .switchbackRouting(AppRouting(coordinator: coordinator))
            .task { _ = try? await coordinator.restore() }
        }
    }
}
/// Your backend's own route for an order: it posts the order's statement to the companion's
/// `POST /permission/statement` and answers the `statement_id` it got.
func statementID(forOrder order: String) async throws -> String {
    let url = URL(string: "https://api.example.com/orders/\(order)/bankid-statement")!
    let answer = try await URLSessionTransport().send(HTTPRequest(method: .post, url: url))
    return String(decoding: answer.body, as: UTF8.self)
}
#endif
