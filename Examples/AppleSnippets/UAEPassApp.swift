// The UAE Pass guide's Apple wiring (a SwiftUI app). Compiled by scripts/apple-typecheck.sh against the
// Apple API model (AppleSurface); the functions it calls are Tools/Examples/Guides/Guides.swift, which runs on
// Linux against the emulator.
#if canImport(SwiftUI) && canImport(UIKit)
import Switchback
import SwitchbackApple
import SwiftUI
import UIKit
import WebKit

@main
struct UAEPassExampleApp: App {
    // The persistent data store keeps UAE Pass's session cookie if iOS terminates the app while the user
    // is in the UAE Pass app; the saved page then resumes in a WebView with the same cookies.
    let coordinator = makeUAEPassCoordinator(
        endpoints: .uaePass(.staging), companion: CompanionClient(URL(string: "https://api.example.com")!),
        host: ApplePresenter(window: { UIApplication.shared.connectedScenes.compactMap { ($0 as? UIWindowScene)?.keyWindow }.first }, dataStore: .default()),
        opener: ApplicationURLOpener(), journal: KeychainFlowJournalStore()
    )

    var body: some Scene {
        WindowGroup {
            SignInView(coordinator: coordinator)
                .switchbackRouting(AppRouting(coordinator: coordinator))
                .task { _ = try? await coordinator.restore() }
        }
    }
}

/// In debug builds, at launch: what Info.plist still lacks for the sign-in (each problem names its fix).
func reportSetupProblems(for request: SignInRequest, redirectURI: URL) {
    let problems = SetupCheck.main.problems(for: request, preset: .uaePass, redirectURI: redirectURI)
    for problem in problems { assertionFailure("Switchback setup: \(problem)") }
}

struct SignInView: View {
    let coordinator: SignInCoordinator
    @State private var status = "Signed out"

    var body: some View {
        VStack {
            Text(status)
            Button("Sign in with UAE Pass") {
                Task {
                    do {
                        let result = try await signInWithUAEPass(coordinator, environment: .staging)
                        status = "Signed in as \(result.subject ?? "?")"
                    } catch let error as SwitchbackError where error.code == .userCancelled {
                        status = "Signed out"
                    } catch {
                        status = "Sign-in failed: \(error)"
                    }
                }
            }
        }
    }
}
#endif
