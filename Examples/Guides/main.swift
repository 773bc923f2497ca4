// Runs each provider guide's app-side code (Guides.swift) on the simulated phone against the emulator
// playing that provider; the device stands in for ApplePresenter, ApplicationURLOpener and the Keychain.
import Foundation
import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting

guard #available(macOS 14, iOS 17, *) else { fatalError("the emulator needs macOS 14") }

let appID = "A1B2C3D4E5.com.example.app"

/// The emulator for `profile`, a companion serving the app's association file on app.example.com (and with
/// `backend`, the permission proxy and code exchange), a phone with the app and the authenticator `scheme`;
/// `install` makes the app's coordinator from the issuer, the companion's URL and the phone.
func phone(
    profile: String, variants: [String] = [], authenticator scheme: String?, backend: Bool = false,
    install: @escaping @Sendable (String, URL, SimulatedApp.Context) -> SignInCoordinator
) async throws -> (RunningApp, stop: @Sendable () async -> Void, device: SimulatedDevice) {
    var emulatorConfiguration = EmulatorConfiguration.defaults
    for index in emulatorConfiguration.clients.indices where emulatorConfiguration.clients[index].clientID == "backend" {
        emulatorConfiguration.clients[index].appReturnURLs = ["https://app.example.com/appswitch"]
    }
    let emulator = try await Emulator.start(profile: Profile.named(profile, variants: variants).get(), configuration: emulatorConfiguration)
    let associations = [AppAssociation(appIDs: [appID], paths: ["/appswitch*", "/oauth/callback*"])]
    // The backend companion: the app's association file, and for a confidential client the permission
    // proxy and the code exchange, returning tokens to the app.
    let companion = try await Companion.start(
        backend
            ? ServerConfiguration(
                port: 0, provider: .init(issuer: emulator.issuer, clientID: "backend", clientSecret: "backend-secret"),
                exchange: .init(redirectURIs: ["com.example.app:/oauth/callback"], returns: .tokens),
                permission: .init(endpoint: emulator.issuer + "/permissions", appCallbackURIs: ["https://app.example.com/appswitch"]), associations: associations
            )
            : ServerConfiguration(port: 0, associations: associations)
    )
    let device = SimulatedDevice(hosts: ["app.example.com": companion.baseURL])
    if let scheme { await device.installAuthenticator(scheme: scheme, backend: URL(string: emulator.issuer)!) }
    let (issuer, companionURL) = (emulator.issuer, companion.baseURL)
    let app = await device.install(SimulatedApp(appID: appID, schemes: ["com.example.app"], associatedDomains: ["app.example.com"]) {
        install(issuer, companionURL, $0)
    })
    return (app, { await companion.stop(); await emulator.stop() }, device)
}

/// Prints the outcome; a failure prints the phone's (redacted) story first.
func report(_ guide: String, on device: SimulatedDevice, _ signIn: () async throws -> Credential) async throws {
    do {
        let credential = try await signIn()
        print("\(guide): signed in, sub \(credential.idTokenClaims?.sub ?? "?"), acr \(credential.idTokenClaims?.acr ?? "none")")
    } catch {
        for step in await device.transcript { FileHandle.standardError.write(Data("\(step.from.rawValue) → \(step.to.rawValue): \(step.text)\n".utf8)) }
        throw error
    }
}

// The presets name the real providers' hosts; the emulator serves the same pages from loopback.
let (uaePassApp, stopUAEPass, uaePassPhone) = try await phone(profile: "uaepass", variants: ["staging-bug"], authenticator: "uaepassstg") { issuer, _, device in
    makeUAEPassCoordinator(issuer: issuer, host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("UAE Pass", on: uaePassPhone) {
    try await signInWithUAEPass(uaePassApp.coordinator, environment: .staging, preset: ProviderPreset.uaePass.serving(from: ["127.0.0.1"]))
}
await stopUAEPass()

let (mitIDApp, stopMitID, mitIDPhone) = try await phone(profile: "mitid", authenticator: "mitid") { issuer, _, device in
    makeMitIDCoordinator(broker: issuer, host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("MitID", on: mitIDPhone) { try await signInWithMitID(mitIDApp.coordinator, preset: ProviderPreset.mitID.serving(from: ["127.0.0.1"])) }
await stopMitID()

let bankIDCompanion = LockedValue<CompanionClient?>(nil)
let (bankIDApp, stopBankID, bankIDPhone) = try await phone(profile: "bankid-no", authenticator: "bankid-no", backend: true) { issuer, companionURL, device in
    let companion = CompanionClient(companionURL)
    bankIDCompanion.withLock { $0 = companion }
    return makeBankIDNorwayCoordinator(issuer: issuer, companion: companion, host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("Norwegian BankID", on: bankIDPhone) {
    guard let companion = bankIDCompanion.withLock({ $0 }) else { throw SwitchbackError(.invalidConfiguration, "the app did not launch") }
    return try await signInWithBankIDNorway(bankIDApp.coordinator, companion: companion)
}
await stopBankID()

let (oidcApp, stopOIDC, oidcPhone) = try await phone(profile: "generic", authenticator: nil) { issuer, _, device in
    makeOIDCCoordinator(issuer: issuer, host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("OpenID Connect", on: oidcPhone) { try await signInWithOIDC(oidcApp.coordinator) }
await stopOIDC()
