import Foundation
import Switchback
import SwitchbackEmulator
import SwitchbackScenarios
import SwitchbackTesting
import Testing
import WebKitGTKHost

extension WebKitGTKHost: HybridScreen {}

/// A hybrid app whose own WebView is the real engine: the web app's sign-in link goes to the bridge, the
/// sign-in runs in the device's authentication session, and the return lands in the engine, where the
/// web app redeems its code.
@Suite(
    "WebKitGTK host: a hybrid app's own WebView", .serialized,
    .enabled(if: Engine.runs, "WebKitGTK or a display is missing (run scripts/test.sh, which installs it and uses Xvfb)"))
struct HybridEngineTests {
    /// Waits (at most 20 s) until the engine's page text satisfies `done`.
    static func waitForPage(_ host: WebKitGTKHost, _ done: (String) -> Bool) async throws -> String {
        var text = ""
        for _ in 0..<400 {
            text = await host.pageText()
            if done(text) { return text }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw WebKitGTKHostTests.EngineMissing(description: "the engine's page never got there; it shows \"\(text.prefix(200))\"")
    }

    /// The hybrid rig for a response shape: `code`, `form_post` (the code posted back) or `implicit` (tokens
    /// in the fragment, from the legacy implicit profile).
    static func start(_ shape: String, screen: WebKitGTKHost, signInBrowser: ExternalBridgeBrowser? = nil) async throws -> HybridRig {
        try await HybridRig.start(
            profile: shape == "implicit" ? .legacyImplicit : .generic, responseType: shape == "implicit" ? .idTokenToken : .code,
            trigger: shape == "form_post" ? "&response_mode=form_post" : "", screen: screen, signInBrowser: signInBrowser)
    }

    @Test(
        "code, form_post and implicit shapes: the web app in the engine signs in and no token is in any URL",
        arguments: ["code", "form_post", "implicit"])
    func signIn(shape: String) async throws {
        let host = try WebKitGTKHostTests.host()
        try await withStopping(try await Self.start(shape, screen: host), stop: { await $0.stop() }) { rig in
            _ = try await Self.waitForPage(host) { $0.contains("Web app") }
            #expect(await host.userClicks(elementWithID: "sign-in"))
            let text = try await Self.waitForPage(host) { $0.contains("Signed in") || $0.contains("failed") }
            #expect(text.contains("Signed in as 9b1f7c2e-alice"), "\(shape): the engine shows \(text.prefix(120))")

            // The trigger reached the bridge through the engine's decide-policy and was cancelled there.
            let decided = host.observations.compactMap { if case .decided(let url?, _, _, _, _, let allowed) = $0 { (url, allowed) } else { nil } }
            #expect(decided.contains { $0.0.scheme == "switchback" && !$0.1 })
            #expect(decided.contains { $0.0.path == "/home" && $0.0.query?.hasPrefix("handoffotp=") == true && $0.1 })
            let tokens = ["access_token", "id_token", "refresh_token"].compactMap { rig.webApp.received[$0] }
            #expect(tokens.count == (shape == "implicit" ? 2 : 3), "a refresh token only with a code")
            let engineURLs = decided.map(\.0) + host.observations.compactMap { if case .loaded(let url, _) = $0 { url } else { nil } }
            for url in engineURLs {
                #expect(!tokens.contains { url.absoluteString.contains($0) }, "a token in a URL of the app's WebView: \(Redaction.describe(url))")
            }
            // Outside the engine, only the implicit shape's provider redirect (to the companion's page) carries tokens.
            let carrying = await rig.device.navigationLog.filter { url in tokens.contains { url.absoluteString.contains($0) } }
            #expect(carrying.count == (shape == "implicit" ? 1 : 0))
            #expect(carrying.allSatisfy { $0.host == HybridRig.companionOrigin.host && $0.path == "/bridge/callback" && $0.query == nil })
        }
    }

    @Test(
        "the sign-in in an authentication session on the engine too, in a window over the app's WebView: code, form_post and implicit",
        arguments: ["code", "form_post", "implicit"])
    func signInInEngineSession(shape: String) async throws {
        let host = try WebKitGTKHostTests.host()
        let session = try WebKitGTKHost(device: host)
        try await withStopping(
            try await Self.start(shape, screen: host, signInBrowser: { WebKitGTKHost.BridgeBrowser(session, bridge: $0) }), stop: { await $0.stop() }
        ) { rig in
            session.routeLinks(through: rig.device.browserSystem, resolving: rig.hosts)
            _ = try await Self.waitForPage(host) { $0.contains("Web app") }
            #expect(await host.userClicks(elementWithID: "sign-in"))
            try await WebKitGTKHostTests.userSignsIn(session)
            let text: String
            do {
                text = try await Self.waitForPage(host) { $0.contains("Signed in") || $0.contains("failed") }
            } catch {
                Issue.record("\(shape): in the session: \(session.observations.map(WebKitGTKHostTests.describe).joined(separator: "\n"))")
                throw error
            }
            #expect(text.contains("Signed in as 9b1f7c2e-alice"), "\(shape): the engine shows \(text.prefix(120))")

            // The session caught the return link itself and closed; the device's own browser never showed anything.
            #expect(session.observations.contains { if case .caught(let url) = $0 { url.scheme == "myapp" } else { false } })
            #expect(session.observations.drop { if case .caught = $0 { false } else { true } }.contains(.closed))
            #expect(await !rig.device.transcript.contains { $0.text.contains("authentication session at") })
            // The provider's answer reached the companion through the session's own navigations (its page's script
            // posts the implicit fragment), and no token is in a URL the app's WebView loaded.
            let sessionURLs = session.observations.compactMap { if case .navigated(let url?, _, _, _) = $0 { url } else { nil } }
            #expect(sessionURLs.contains { $0.path == "/bridge/callback" })
            if shape == "implicit" { #expect(sessionURLs.contains { $0.path == "/bridge/fragment" }) }
            let tokens = ["access_token", "id_token", "refresh_token"].compactMap { rig.webApp.received[$0] }
            #expect(tokens.count == (shape == "implicit" ? 2 : 3), "a refresh token only with a code")
            let appURLs = host.observations.compactMap { if case .decided(let url?, _, _, _, _, _) = $0 { url } else { nil } }
            for url in appURLs {
                #expect(!tokens.contains { url.absoluteString.contains($0) }, "a token in a URL of the app's WebView: \(Redaction.describe(url))")
            }
        }
    }
}
