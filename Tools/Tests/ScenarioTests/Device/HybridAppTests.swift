import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackScenarios
import SwitchbackTesting
import ToolsTestSupport

/// A hybrid app on the simulated device: its screen is a WebView showing a real web app; sign-in leaves
/// for a secure browser through the companion's bridge and comes back into the web app with a one-time
/// code the web app redeems, server to server. Everything over HTTP: emulator, companion, web app.
@Suite("Hybrid app on the simulated device")
struct HybridAppTests {
    typealias Rig = HybridRig
    static let webOrigin = HybridRig.webOrigin
    static let companionOrigin = HybridRig.companionOrigin
    static let alice = "9b1f7c2e-alice"

    /// Runs `body` with a hybrid app showing its web app, and stops everything afterwards.
    static func withRig<Result>(
        profile: Profile = .generic, responseType: ResponseType = .code, browser: HybridShell.Browser = .authenticationSession,
        trigger: String = "", returnScheme: String = "myapp", _ body: (Rig) async throws -> Result
    ) async throws -> Result {
        let rig = try await HybridRig.start(
            profile: profile, responseType: responseType, browser: browser, trigger: trigger, returnScheme: returnScheme)
        return try await withStopping(rig, stop: { await $0.stop() }) { rig in
            try await settle(rig.device) { $0.appScreenPage?.heading == "Web app" }
            return try await body(rig)
        }
    }

    static func settle(_ device: SimulatedDevice, _ done: @Sendable (isolated SimulatedDevice) -> Bool) async throws {
        try await HybridRig.settle(device, done)
    }

    static func screen(_ device: SimulatedDevice) async -> String { await device.appScreenPage?.heading ?? "" }

    /// One way the sign-in can come back.
    struct Shape: CustomTestStringConvertible, Sendable {
        let name: String
        let profile: Profile
        let responseType: ResponseType
        let trigger: String
        let browser: HybridShell.Browser
        var testDescription: String { name }
    }

    static let shapes = [
        Shape(
            name: "code in the query, authentication session", profile: .generic, responseType: .code, trigger: "",
            browser: .authenticationSession),
        Shape(name: "code in the query, Safari view", profile: .generic, responseType: .code, trigger: "", browser: .safariView),
        Shape(
            name: "code by form_post", profile: .generic, responseType: .code, trigger: "&response_mode=form_post",
            browser: .authenticationSession),
        Shape(
            name: "implicit tokens in the fragment", profile: .legacyImplicit, responseType: .idTokenToken, trigger: "",
            browser: .authenticationSession),
        Shape(
            name: "implicit tokens by form_post", profile: .legacyImplicit, responseType: .idTokenToken, trigger: "&response_mode=form_post",
            browser: .authenticationSession),
    ]

    @Test("the web app in the app's WebView signs in through the system browser and lands signed in; no token in any URL", arguments: shapes)
    func signIn(_ shape: Shape) async throws {
        try await Self.withRig(profile: shape.profile, responseType: shape.responseType, browser: shape.browser, trigger: shape.trigger) { rig in
            #expect(await rig.device.userTaps(linkWithID: "sign-in"))
            try await Self.settle(rig.device) { $0.appScreenPage?.heading.hasPrefix("Sign") == true }
            #expect(await Self.screen(rig.device) == "Signed in as \(Self.alice)")

            // The web app's backend received the provider's tokens from the companion, not from a URL.
            let received = rig.webApp.received
            let tokens = ["access_token", "id_token", "refresh_token"].compactMap { received[$0] }
            #expect(tokens.count == (shape.responseType == .code ? 3 : 2), "tokens handed to the web app's backend: \(received.keys.sorted())")
            let log = await rig.device.navigationLog
            #expect(log.contains { $0.scheme == "switchback" && $0.host == "sign-in" }, "the trigger was seen")
            #expect(log.contains { $0.scheme == "myapp" && $0.path == "/home" }, "the deep link was seen")
            let fragmentShape = shape.responseType == .idTokenToken && !shape.trigger.contains("form_post")
            let carrying = log.filter { url in tokens.contains { url.absoluteString.contains($0) } }
            #expect(carrying.count == (fragmentShape ? 1 : 0), "URLs carrying a token: \(carrying.map { Redaction.describe($0) })")
            for url in log {
                let text = url.absoluteString
                let leaked = tokens.filter { text.contains($0) }
                guard !leaked.isEmpty else { continue }
                // The legacy implicit shape is the provider's redirect with the tokens in the fragment: it reaches
                // the companion's forwarding page in the browser, and no server, app or WebView of the app's.
                #expect(fragmentShape, "a token in \(Redaction.describe(url))")
                #expect(url.host == Self.companionOrigin.host && url.path == "/bridge/callback" && url.query == nil)
                #expect(leaked.allSatisfy { URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedFragment?.contains($0) == true })
            }
            for url in log where url.scheme != "switchback" {
                #expect(!rig.webApp.bindings.contains { url.absoluteString.contains($0) }, "the binding stays out of every URL but the trigger")
            }
            // The browser is gone and the app is in front.
            #expect(await rig.device.frontPage?.heading == "Signed in as \(Self.alice)")
            #expect(await rig.device.foreground == "A1B2C3D4E5.com.example.app")
        }
    }

    @Test("the return link replayed, or forged, through the system is refused and the web app is left alone")
    func replayedAndForeign() async throws {
        try await Self.withRig(browser: .safariView) { rig in
            await rig.device.userTaps(linkWithID: "sign-in")
            try await Self.settle(rig.device) { $0.appScreenPage?.heading.hasPrefix("Sign") == true }
            #expect(await Self.screen(rig.device) == "Signed in as \(Self.alice)")
            let returned = try #require(await rig.device.navigationLog.last { $0.scheme == "myapp" })

            // Another app opens the same deep link again, then a forged one.
            #expect(await !rig.device.openFromAnotherApp(returned))
            #expect(await !rig.device.openFromAnotherApp(URL(string: "myapp://oauth/home?handoffotp=forged-code-0123456789")!))
            #expect(await !rig.device.openFromAnotherApp(URL(string: "myapp://oauth/home?access_token=planted")!))
            try await Self.settle(rig.device) { _ in true }
            #expect(await rig.device.transcript.filter { $0.text.hasPrefix("the hybrid bridge refuses the link") }.count == 3)
            #expect(await Self.screen(rig.device) == "Signed in as \(Self.alice)", "nothing was loaded")
        }
    }

    @Test("a return scheme the companion does not allow: no browser opens and the web app is told not_allowed")
    func schemeNotAllowed() async throws {
        try await Self.withRig(returnScheme: "evilapp") { rig in
            await rig.device.userTaps(linkWithID: "sign-in")
            try await Self.settle(rig.device) { $0.appScreenPage?.heading.hasPrefix("Sign") == true }
            #expect(await Self.screen(rig.device) == "Sign-in failed: not_allowed")
            #expect(await !rig.device.navigationLog.contains { $0.path.hasPrefix("/authorize") }, "the provider was never shown")
        }
    }

    @Test("the provider declines: the web app is told access_denied, nothing is signed in")
    func declined() async throws {
        try await Self.withRig { rig in
            await rig.emulator.setFaults([.authorizationError], forClient: "backend")
            await rig.device.userTaps(linkWithID: "sign-in")
            try await Self.settle(rig.device) { $0.appScreenPage?.heading.hasPrefix("Sign") == true }
            #expect(await Self.screen(rig.device) == "Sign-in failed: access_denied")
            #expect(rig.webApp.received.isEmpty)
        }
    }

    @Test("the user closes the browser while the provider waits on the authenticator: the web app is told cancelled")
    func closed() async throws {
        try await Self.withRig(profile: .mitID) { rig in
            // The authenticator is opened and the user leaves it without answering, then switches back.
            await rig.device.installAuthenticator(
                scheme: "mitid", backend: URL(string: rig.emulator.issuer)!, behaviour: .init(.ignore), universalLinkHost: MitID.appSwitchHost)
            await rig.device.userTaps(linkWithID: "sign-in")
            try await Self.settle(rig.device) { $0.transcript.contains { $0.text == "switches back by hand" } }
            let bridge = try #require(await rig.device.app?.bridge)
            #expect(await bridge.isSigningIn, "the provider's page still waits in the browser")
            await rig.device.userClosesUserAgent()
            try await Self.settle(rig.device) { $0.appScreenPage?.heading.hasPrefix("Sign") == true }
            #expect(await Self.screen(rig.device) == "Sign-in failed: cancelled")
            #expect(await !bridge.isSigningIn)
            #expect(rig.webApp.received.isEmpty)
        }
    }

    enum Destination: String, CaseIterable, Sendable {
        case systemBrowser = "system browser"
        case webView = "app's WebView"
    }

    @Test(
        "a natively signed-in app opens the second web app signed in, through a one-time code; the cookie's flags are right",
        arguments: Destination.allCases)
    func handOff(_ destination: Destination) async throws {
        try await Self.withRig { rig in
            let app = try #require(await rig.device.app)
            // The provider and the companion keep real time; the device's clock stands still. The cookie's Max-Age is
            // what is left of the session when the companion answers, so it is bounded by the real time this took.
            let started = Date()
            let credential = try #require(try await app.coordinator.signIn(SignInRequest(provider: "generic", strategy: .systemBrowser)).credential)
            let target = Self.companionOrigin.appendingPathComponent("session")
            let handOff = SessionHandOff(companion: CompanionClient(Self.companionOrigin, transport: rig.device.network))
            switch destination {
            case .systemBrowser:
                try await handOff.open(target, accessToken: credential.accessToken, in: .systemBrowser(app.opener))
            case .webView:
                let device = rig.device
                try await handOff.open(target, accessToken: credential.accessToken, in: .webView { url in await device.loadInAppScreen(url) })
            }
            try await Self.settle(rig.device) { $0.frontPage?.url.path == "/session" }
            let page = try #require(await rig.device.frontPage)
            #expect(page.url == target, "landed on goto")
            #expect(page.html.contains(Self.alice), "signed in as alice: \(page.html.prefix(200))")
            #expect(await rig.device.foreground == (destination == .systemBrowser ? "safari" : "A1B2C3D4E5.com.example.app"))

            let jar = destination == .systemBrowser ? "safari" : "app-webview"
            let cookie = try #require(
                await rig.device.cookies(in: jar, host: Self.companionOrigin.host!).first { $0.name == "__Host-switchback_session" })
            #expect(cookie.secure && cookie.httpOnly && cookie.sameSite == "Lax" && cookie.path == "/")
            let lifetime = try #require(cookie.expires).timeIntervalSince(rig.device.clock.now())
            let elapsed = Date().timeIntervalSince(started)
            #expect(
                lifetime <= 3600 && lifetime >= 3600 - elapsed.rounded(.up) - 1,
                "Max-Age is what is left of the session: \(lifetime) s, \(elapsed) s on")
            for url in await rig.device.navigationLog {
                #expect(!url.absoluteString.contains(credential.accessToken), "the access token in \(Redaction.describe(url))")
                #expect(!url.absoluteString.contains("access_token"))
            }
        }
    }
}
