import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackScenarios
import SwitchbackTesting
import WebKitGTKHost

extension WebKitGTKHost: HybridScreen {}

/// The engine is also the device's Safari and the app's own WebView outside a sign-in: a session
/// hand-off opens there. One view is shown at a time, so Safari opening while a sign-in shows a sheet
/// closes that sheet (no scenario of the demo does that).
extension WebKitGTKHost: EngineScreens {
    // A view that cannot be shown is in the host's observations (notShown), which the run prints.
    public func safariOpens(_ url: URL) async { try? await browse(url, as: .safari) }
    public func appWebViewLoads(_ url: URL) async { try? await browse(url, as: .webView) }
    public func frontPage() async -> (url: URL?, text: String)? {
        guard shownSeat != nil else { return nil }
        return (await pageURL(), await pageText())
    }
}

/// The hybrid app on the engine: the app's own WebView (one engine window) shows the web app; its sign-in
/// link goes to the bridge, the sign-in runs in an authentication session (a second window over it, sharing
/// the device's stores), and the return lands in the app's WebView, where the web app redeems its one-time code.
enum HybridRun {
    struct Outcome {
        let narration: String
        let photos: [EngineUser.Photo]
        let signedIn: Bool
    }

    static func run(folder: URL?, prefix: String) async throws -> Outcome {
        let host = try WebKitGTKHost()
        let session = try WebKitGTKHost(device: host)
        let rig = try await HybridRig.start(screen: host, signInBrowser: { WebKitGTKHost.BridgeBrowser(session, bridge: $0) })
        session.routeLinks(through: rig.device.browserSystem, resolving: rig.hosts)
        let user = Task { await EngineUser(host: host, folder: folder, prefix: prefix).act() }
        let sessionUser = Task { await EngineUser(host: session, folder: folder, prefix: prefix + "-session").act() }
        var text = await waitForPage(host) { $0.contains("Web app") }
        let tapped = await host.userClicks(elementWithID: "sign-in")
        if tapped { text = await waitForPage(host) { $0.contains("Signed in") || $0.contains("failed") } }
        user.cancel()
        sessionUser.cancel()
        let seen = await user.value
        let seenInSession = await sessionUser.value
        await session.dismiss()
        await host.dismiss()
        let transcript = await rig.device.transcript
        await rig.stop()
        let signedIn = text.contains("Signed in as 9b1f7c2e-alice")
        var lines = ["== hybrid app: the web app in the app's WebView on the engine, the sign-in in an authentication session on the engine =="]
        lines.append("     User → webView: taps \"Sign in\"\(tapped ? "" : " (the web app showed no sign-in link)")")
        for (number, step) in transcript.enumerated() {
            lines.append(String(format: "%3d. ", number + 1) + "\(step.from.rawValue) → \(step.to.rawValue): \(step.text)")
        }
        lines.append(
            signedIn
                ? "Signed in: the web app in the engine shows \"Signed in as 9b1f7c2e-alice\"."
                : "Sign-in failed: the engine shows \"\(text.prefix(160))\"")
        return Outcome(
            narration: lines.joined(separator: "\n") + seen.narration
                + seenInSession.narration.replacingOccurrences(
                    of: "On the engine:", with: "In the session's window:"),
            photos: seen.photos + seenInSession.photos, signedIn: signedIn)
    }

    /// The engine's page text once `done` holds, or as it is after 20 s.
    static func waitForPage(_ host: WebKitGTKHost, _ done: (String) -> Bool) async -> String {
        var text = ""
        for _ in 0..<400 {
            text = await host.pageText()
            if done(text) { return text }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        return text
    }
}
