import Foundation
import Testing
@testable import SwitchbackTesting

/// The simulated device's iOS rule for universal links, which MitID's "Open MitID app" button depends on:
/// a link opens its app only from the user's tap on a page of another domain; a script or redirect
/// navigation, or a tap within the same domain, stays in the browser.
@Suite("Simulated device: the universal-link rule")
struct UniversalLinkRuleTests {
    static let link = URL(string: "https://appswitch.mitid.nets.eu/authenticate?txn=abc")!

    static func device() async -> SimulatedDevice {
        let device = SimulatedDevice()
        await device.installAuthenticator(
            scheme: "mitid", name: "MitID", backend: URL(string: "http://127.0.0.1:9")!, universalLinkHost: "appswitch.mitid.nets.eu")
        return device
    }

    @Test("a tap on a page of another domain opens the authenticator app")
    func tapAcrossDomains() async {
        let device = await Self.device()
        let opened = await device.open(Self.link, from: .page(URL(string: "https://broker.example/authorize")!, userGesture: true))
        #expect(opened)
        #expect(await device.transcript.contains { $0.text == "opens MitID by its universal link" })
    }

    @Test(
        "a script or redirect navigation, or a tap on the same domain, stays in the browser",
        arguments: [
            (URL(string: "https://broker.example/authorize")!, false), (URL(string: "https://appswitch.mitid.nets.eu/start")!, true),
        ])
    func staysInBrowser(page: URL, gesture: Bool) async {
        let device = await Self.device()
        #expect(await !device.open(Self.link, from: .page(page, userGesture: gesture)))
        #expect(await !device.transcript.contains { $0.text.contains("by its universal link") })
    }
}
