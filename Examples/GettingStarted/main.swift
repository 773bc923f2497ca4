// The README's getting-started code, run for real: the app-side part is exactly what an iOS app writes,
// with the simulated device standing in for `ApplePresenter`, `ApplicationURLOpener` and the Keychain
// journal store, and the emulator standing in for UAE Pass staging.
import Foundation
import Switchback
import SwitchbackEmulator
import SwitchbackTesting

guard #available(macOS 14, iOS 17, *) else { fatalError("the emulator needs macOS 14") }
let emulator = try await Emulator.start(profile: Profile.named("uaepass", variants: ["staging-bug"]).get())
let device = SimulatedDevice()
await device.installAuthenticator(scheme: "uaepassstg", backend: URL(string: emulator.issuer)!)

let app = await device.install(SimulatedApp(appID: "A1B2C3D4E5.com.example.app", schemes: ["com.example.app"]) { platform in
    // --- the app's code, as in the README ---
    let client = OIDCClient(
        configuration: ClientConfiguration(clientID: "native-rs", redirectURI: URL(string: "com.example.app:/oauth/callback")!),
        provider: .discovery(issuer: emulator.issuer)
    )
    return SignInCoordinator(client: client, host: platform.host, opener: platform.opener, journal: platform.journal, clock: platform.clock)
})

// The preset's provider hosts are UAE Pass's; the emulator serves the same pages from loopback.
let uaePass = ProviderPreset.uaePass.serving(from: ["127.0.0.1"])
let request = try await uaePass.request(
    strategy: .webView, environment: .staging,
    links: .init(scheme: URL(string: "com.example.app:/handoff"), universalLink: URL(string: "https://app.example.com/appswitch"))
)
let credential = try await app.coordinator.signIn(request)
// --- end of the app's code ---

print("signed in: sub \(credential.idTokenClaims?.sub ?? "?"), acr \(credential.idTokenClaims?.acr ?? "?")")
await emulator.stop()
