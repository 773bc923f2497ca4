// Runs each provider guide's app-side code (Guides.swift) on the simulated phone against the emulator
// playing that provider; the device stands in for ApplePresenter, ApplicationURLOpener and the Keychain.
import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import Crypto


let appID = "A1B2C3D4E5.com.example.app"

/// The emulator for `profile` (`configure` adjusts its clients), the backend companion on
/// api.example.com serving the app's association file on app.example.com (`companion` adds its routes),
/// and a phone with the app and the authenticator `scheme`; `install` makes the app's coordinator from
/// the issuer, the companion's URL and the phone.
func phone(
    profile: String, variants: [String] = [], authenticator scheme: String?, configure: (inout EmulatorConfiguration) -> Void = { _ in },
    companion routes: @escaping (_ issuer: String, inout ServerConfiguration) throws -> Void = { _, _ in },
    install: @escaping @Sendable (String, URL, SimulatedApp.Context) -> SignInCoordinator
) async throws -> (RunningApp, stop: @Sendable () async -> Void, device: SimulatedDevice) {
    var emulatorConfiguration = EmulatorConfiguration.defaults
    for index in emulatorConfiguration.clients.indices where emulatorConfiguration.clients[index].clientID == "backend" {
        emulatorConfiguration.clients[index].appReturnURLs = ["https://app.example.com/appswitch"]
        emulatorConfiguration.clients[index].redirectURIs.append("https://api.example.com/complete")
    }
    configure(&emulatorConfiguration)
    let emulator = try await Emulator.start(profile: Profile.named(profile, variants: variants).get(), configuration: emulatorConfiguration)
    let associations = [AppAssociation(appIDs: [appID], paths: ["/appswitch*", "/oauth/callback*", "/signed-in*"])]
    var configuration = ServerConfiguration(port: 0, publicURL: "https://api.example.com", associations: associations)
    try routes(emulator.issuer, &configuration)
    let companion = try await Companion.start(configuration)
    // The phone resolves both names to the companion's loopback port.
    let loopback = URL(string: "http://127.0.0.1:\(companion.port)")!
    let device = SimulatedDevice(hosts: ["app.example.com": loopback, "api.example.com": loopback])
    // The MitID app claims its universal-link host: the page's "Open MitID app" is such a link.
    if let scheme { await device.installAuthenticator(scheme: scheme, backend: URL(string: emulator.issuer)!, universalLinkHost: scheme == "mitid" ? MitID.appSwitchHost : nil) }
    let (issuer, companionURL) = (emulator.issuer, companion.baseURL)
    let app = await device.install(SimulatedApp(appID: appID, schemes: ["com.example.app"], associatedDomains: ["app.example.com"]) {
        install(issuer, companionURL, $0)
    })
    // `shutDown` removes the phone's storage folder, which outlives the run otherwise.
    return (app, { await device.shutDown(); await companion.stop(); await emulator.stop() }, device)
}

/// Prints the outcome; a failure prints the phone's (redacted) story first.
func report(_ guide: String, on device: SimulatedDevice, _ signIn: () async throws -> SignInResult) async throws {
    do {
        let result = try await signIn()
        print("\(guide): signed in, sub \(result.subject ?? "?"), acr \(result.acr ?? "none")\(result.companion?.session == nil ? "" : ", companion session")")
    } catch {
        for step in await device.transcript { FileHandle.standardError.write(Data("\(step.from.rawValue) → \(step.to.rawValue): \(step.text)\n".utf8)) }
        throw error
    }
}

// The presets name the real providers' hosts; the emulator serves the same pages from loopback.
let (uaePassApp, stopUAEPass, uaePassPhone) = try await phone(profile: "uaepass", variants: ["staging-bug"], authenticator: "uaepassstg", companion: { issuer, configuration in
    // The confidential client: the code exchange with client_secret_basic, the identity from userinfo.
    let endpoints = ProviderMetadata.uaePass(base: URL(string: issuer)!)
    configuration.provider = .init(issuer: issuer, clientID: "backend", clientSecret: "backend-secret", identitySource: .userInfo, metadata: endpoints)
    configuration.exchange = .init(redirectURIs: ["com.example.app:/oauth/callback"], returns: .tokens)
}) { issuer, companionURL, device in
    makeUAEPassCoordinator(
        endpoints: .uaePass(base: URL(string: issuer)!), companion: CompanionClient(companionURL, transport: device.network), host: device.host,
        opener: device.opener, journal: device.journal, clock: device.clock
    )
}
try await report("UAE Pass", on: uaePassPhone) {
    try await signInWithUAEPass(uaePassApp.coordinator, environment: .staging, preset: ProviderPreset.uaePass.serving(from: ["127.0.0.1"]))
}
await stopUAEPass()

// The broker redirects to the companion's response page, whose button opens the app's universal link.
let (mitIDApp, stopMitID, mitIDPhone) = try await phone(profile: "mitid", authenticator: "mitid", configure: { emulator in
    for index in emulator.clients.indices where emulator.clients[index].clientID == "native-rs" {
        emulator.clients[index].redirectURIs.append("https://api.example.com/response")
    }
}, companion: { _, configuration in
    configuration.responsePage = .init(appLink: "https://app.example.com/oauth/callback")
}) { issuer, _, device in
    makeMitIDCoordinator(broker: issuer, host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("MitID", on: mitIDPhone) { try await signInWithMitID(mitIDApp.coordinator, preset: ProviderPreset.mitID(.signaturgruppen).serving(from: ["127.0.0.1"])) }
await stopMitID()

// MitID with backend completion: the broker's client is the companion's; the broker answers its page.
let (completionApp, stopCompletion, completionPhone) = try await phone(profile: "mitid", authenticator: "mitid", companion: { issuer, configuration in
    configuration.provider = .init(
        issuer: issuer, clientID: "backend", clientSecret: "backend-secret", forwardedParameters: ["idp_params"], authorizationParameters: ["idp_values": "mitid"])
    configuration.completion = .init(appLink: "https://app.example.com/signed-in", returns: .session)
}) { _, companionURL, device in
    makeMitIDCompletionCoordinator(companion: CompanionClient(companionURL, transport: device.network), host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("MitID (backend completion)", on: completionPhone) {
    try await signInWithMitIDCompletion(completionApp.coordinator, preset: ProviderPreset.mitID(.signaturgruppen).serving(from: ["127.0.0.1"]))
}
await stopCompletion()

let bankIDCompanion = LockedValue<(client: CompanionClient, url: URL, network: any HTTPTransport)?>(nil)
// What the shop's backend sends to register each order's statement with the companion.
let shopBackendToken = "guides-shop-backend-token-0123456789abcdef"
// One order, in the shape of BankID's payment.v1 examples.
let order: JSONValue = .object(["payments": .array([.object([
    "paymentId": .string("order-42"), "amount": .string("199.00"), "currency": .string("NOK"), "creditorName": .string("Example Shop"),
])])])
let (bankIDApp, stopBankID, bankIDPhone) = try await phone(profile: "bankid-no", authenticator: "bankid-no", companion: { issuer, configuration in
    // The confidential client: the permission proxy and the code exchange, returning tokens to the app.
    configuration.provider = .init(issuer: issuer, clientID: "backend", clientSecret: "backend-secret")
    configuration.exchange = .init(redirectURIs: ["com.example.app:/oauth/callback"], returns: .tokens)
    // The permission type agreed with BankID; each order's statement comes from the shop's backend.
    configuration.permission = .init(
        server: issuer + "/biometrics", appCallbackURIs: ["https://app.example.com/appswitch"], type: "payment.v1",
        backendToken: shopBackendToken)
}) { issuer, companionURL, device in
    let companion = CompanionClient(companionURL, transport: device.network)
    bankIDCompanion.withLock { $0 = (companion, companionURL, device.network) }
    return makeBankIDNorwayCoordinator(issuer: issuer, companion: companion, host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("Norwegian BankID", on: bankIDPhone) {
    guard let (companion, companionURL, network) = bankIDCompanion.withLock({ $0 }) else {
        throw SwitchbackError(.invalidConfiguration, "the app did not launch")
    }
    // The shop's backend, server to server: the order's statement, whose one-time ID the app is given (here
    // over the simulated network, where the companion's public host resolves).
    let statement = try await RegisteredStatement.register(order, at: companionURL, backendToken: shopBackendToken, transport: network)
    return try await signInWithBankIDNorway(bankIDApp.coordinator, companion: companion, statement: statement.statementID)
}
await stopBankID()

let (oidcApp, stopOIDC, oidcPhone) = try await phone(profile: "generic", authenticator: nil) { issuer, _, device in
    makeOIDCCoordinator(issuer: issuer, host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("OpenID Connect", on: oidcPhone) { try await signInWithOIDC(oidcApp.coordinator) }
await stopOIDC()

// Singpass: the companion is the FAPI client, with the private_key_jwt key registered at Singpass and the
// key Singpass encrypts ID tokens to (its public half registered as use:enc); DPoP keys are made per sign-in.
// The keys are written to a private directory for its configuration.
let keys = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-guides-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
defer { try? FileManager.default.removeItem(at: keys) }
let clientKey = P256.Signing.PrivateKey()
try clientKey.pemRepresentation.write(to: keys.appendingPathComponent("client.pem"), atomically: true, encoding: .utf8)
let encryptionKey = P256.KeyAgreement.PrivateKey()
try encryptionKey.pemRepresentation.write(to: keys.appendingPathComponent("encryption.pem"), atomically: true, encoding: .utf8)
let encryptionJWK = try DecryptionKey(pem: encryptionKey.pemRepresentation, keyID: "companion-enc-1").publicJWK(algorithm: "ECDH-ES+A256KW")
let (singpassApp, stopSingpass, singpassPhone) = try await phone(profile: "singpass", authenticator: "singpass", configure: { emulator in
    let jwk: JSONValue = .object(PublicJWK.p256(clientKey.publicKey).merging(["kid": .string("companion-1"), "use": .string("sig"), "alg": .string("ES256")]) { $1 })
    emulator.clients.append(.init(
        clientID: "singpass-client", authentication: .privateKeyJWT, redirectURIs: ["https://app.example.com/oauth/callback"], idTokenAlgorithm: "ES256",
        jwks: .object(["keys": .array([jwk, .object(encryptionJWK)])]), appReturnURLs: ["https://app.example.com/appswitch"]
    ))
}, companion: { issuer, configuration in
    configuration.provider = .init(
        issuer: issuer, clientID: "singpass-client", privateKeyFile: keys.appendingPathComponent("client.pem").path, keyAlgorithm: "ES256", keyID: "companion-1",
        dpop: true, authorizationParameters: ["authentication_context_type": "APP_AUTHENTICATION_DEFAULT"],
        decryptionKeyFile: keys.appendingPathComponent("encryption.pem").path, decryptionKeyID: "companion-enc-1"
    )
    configuration.exchange = .init(redirectURIs: ["https://app.example.com/oauth/callback"], returns: .session)
}) { _, companionURL, device in
    makeSingpassCoordinator(companion: CompanionClient(companionURL, transport: device.network), host: device.host, opener: device.opener, journal: device.journal, clock: device.clock)
}
try await report("Singpass", on: singpassPhone) { try await signInWithSingpass(singpassApp.coordinator, preset: ProviderPreset.singpass.serving(from: ["127.0.0.1"])) }
await stopSingpass()
