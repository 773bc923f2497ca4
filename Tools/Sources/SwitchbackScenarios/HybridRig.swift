public import Foundation
import Logging
@_spi(SwitchbackInternals) public import Switchback
public import SwitchbackEmulator
public import SwitchbackServer
public import SwitchbackTesting

/// A hybrid app on the simulated device, over HTTP: the emulator as the provider, the companion (its
/// bridge returning to `myapp://oauth/…`, its hand-off allowing `/session`) mounted at the second web app's
/// origin, a real web app server the app's WebView shows, and the app installed with its hybrid shell.
public struct HybridRig: Sendable {
    public static let webOrigin = URL(string: "https://web.example.com")!
    /// The companion, at the second web app's origin (its routes mounted there, as a reverse proxy would).
    public static let companionOrigin = URL(string: "https://shop.example.com")!
    public static let appID = "A1B2C3D4E5.com.example.app"

    public let emulator: Emulator
    public let companion: Companion
    public let webApp: HybridWebApp
    public let device: SimulatedDevice
    /// The device's names for its loopback servers (the web app's and the companion's): a real engine's
    /// browser resolves them the same way (`WebKitGTKHost.routeLinks(through:resolving:)`).
    public let hosts: [String: URL]

    /// Starts everything and installs the app. `screen` replaces the device's simulated WebView with a
    /// real engine's, which then shows the web app at its loopback address; `signInBrowser` replaces the
    /// device's secure browser with a real engine's (which reaches the companion under its name through
    /// ``hosts``); `trigger` adds to the web app's sign-in link (`&response_mode=form_post`).
    public static func start(
        profile: Profile = .generic, responseType: ResponseType = .code, browser: HybridShell.Browser = .authenticationSession, trigger: String = "",
        returnScheme: String = "myapp", screen: (any HybridScreen)? = nil, signInBrowser: ExternalBridgeBrowser? = nil
    ) async throws -> HybridRig {
        var emulatorConfiguration = EmulatorConfiguration.defaults
        emulatorConfiguration.signingKeys = .perProcess
        for index in emulatorConfiguration.clients.indices where emulatorConfiguration.clients[index].clientID == "backend" {
            emulatorConfiguration.clients[index].redirectURIs.append(companionOrigin.absoluteString + "/bridge/callback")
        }
        // Access tokens are issued for the companion (`aud`), the audience its hand-off requires.
        emulatorConfiguration.accessTokenAudience = companionOrigin.absoluteString
        let quiet = Logger(label: "quiet") { _ in SwiftLogNoOpLogHandler() }
        let emulator = try await Emulator.start(profile: profile, configuration: emulatorConfiguration, logger: quiet)
        let configuration = ServerConfiguration(
            port: 0, publicURL: companionOrigin.absoluteString,
            provider: .init(issuer: emulator.issuer, clientID: "backend", clientSecret: "backend-secret"),
            bridge: .init(schemes: ["myapp"], returns: .tokens, responseType: responseType),
            // The app's own client (native-rs) holds the tokens it hands off; the companion accepts only its tokens.
            handOff: .init(
                audience: companionOrigin.absoluteString, allowedRedirects: [companionOrigin.absoluteString + "/session"],
                acceptedClients: ["native-rs"])
        )
        let companion: Companion
        do {
            companion = try await Companion.start(configuration, logger: quiet)
        } catch {
            await emulator.stop()
            throw error
        }
        let loopback = URL(string: "http://127.0.0.1:\(companion.port)")!
        let webApp = try await HybridWebApp.start(companion: loopback, trigger: trigger, secureCookie: screen == nil)
        let hosts = [webOrigin.host!: webApp.baseURL, companionOrigin.host!: loopback]
        let device = SimulatedDevice(hosts: hosts)
        // A real engine does not resolve names through the device's hosts map: it shows the web app at its loopback address.
        let origin = screen == nil ? webOrigin : webApp.baseURL
        let shell = HybridShell(
            .init(webOrigin: origin, returnScheme: returnScheme), companion: CompanionClient(companionOrigin, transport: device.network),
            browser: browser,
            screen: screen, signInBrowser: signInBrowser)
        let issuer = emulator.issuer
        await device.install(
            SimulatedApp(appID: appID, schemes: [returnScheme, "com.example.app"], hybrid: shell) { context in
                // The app can also sign in natively (hand-off to a second web app starts from that).
                let client = OIDCClient(
                    configuration: ClientConfiguration(clientID: "native-rs", redirectURI: URL(string: "com.example.app:/oauth/callback")!),
                    provider: .discovery(issuer: issuer), logger: quiet
                )
                return SignInCoordinator(
                    .app(client), host: context.host, opener: context.opener, journal: context.journal, clock: context.clock, logger: quiet)
            })
        return HybridRig(emulator: emulator, companion: companion, webApp: webApp, device: device, hosts: hosts)
    }

    public func stop() async {
        await webApp.stop()
        await companion.stop()
        await emulator.stop()
    }

    /// Waits (real time, at most 20 s) until the device is idle and `done` holds; throws with the
    /// device's transcript when it does not.
    public static func settle(_ device: SimulatedDevice, _ done: @Sendable (isolated SimulatedDevice) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if await device.isIdle, await done(device) { return }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        let steps = await device.transcript.map { "\($0.from.rawValue) → \($0.to.rawValue): \($0.text)" }.joined(separator: "\n")
        throw SwitchbackError(
            .timedOut, "the device did not settle; the app's WebView shows \"\(await device.appScreenPage?.heading ?? "nothing")\"\n\(steps)")
    }
}
