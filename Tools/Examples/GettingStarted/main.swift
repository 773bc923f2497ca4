// The README's getting-started code (App.swift), run for real: the simulated device stands in for
// `ApplePresenter`, `ApplicationURLOpener` and the Keychain journal store, the emulator for UAE Pass
// staging, and the companion on loopback is the app's backend (UAE Pass authenticates the client with a
// secret, which only the backend holds).
import Foundation
import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting

let emulator = try await Emulator.start(profile: Profile.named("uaepass", variants: ["staging-bug"]).get())
// UAE Pass publishes no discovery document: its documented endpoint layout, here on the emulator.
let endpoints = ProviderMetadata.uaePass(base: URL(string: emulator.issuer)!)
let companion = try await Companion.start(ServerConfiguration(
    port: 0,
    provider: .init(issuer: emulator.issuer, clientID: "backend", clientSecret: "backend-secret", identitySource: .userInfo, metadata: endpoints),
    exchange: .init(redirectURIs: ["com.example.app:/oauth/callback"], returns: .tokens)
))
let device = SimulatedDevice()
await device.installAuthenticator(scheme: "uaepassstg", backend: URL(string: emulator.issuer)!)

// The app's code is App.swift, as in the README; here the simulated phone stands in for the Apple adapters.
let app = await device.install(SimulatedApp(appID: "A1B2C3D4E5.com.example.app", schemes: ["com.example.app"]) { platform in
    makeCoordinator(
        endpoints: endpoints, companion: CompanionClient(companion.baseURL, transport: device.network), host: platform.host,
        opener: platform.opener, journal: platform.journal, clock: platform.clock
    )
})
// The preset's provider hosts are UAE Pass's; the emulator serves the same pages from loopback.
let result = try await signIn(app.coordinator, preset: ProviderPreset.uaePass.serving(from: ["127.0.0.1"]))

print("signed in: sub \(result.subject ?? "?"), acr \(result.acr ?? "?"), identity from \(result.credential.map { "\($0.identitySource)" } ?? "?")")
await device.shutDown()   // the simulated phone's storage folder goes with it
await companion.stop()
await emulator.stop()
