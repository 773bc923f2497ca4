import Foundation
import Logging
import NIOCore
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// The companion attacked over real HTTP on loopback: each test names the attacker, what they hold and what
/// they try, and fails on the code before the fix. Where a store is involved, the test runs on memory and on
/// PostgreSQL (two instances sharing it).
@Suite("Companion under attack: its pages")
struct PageAttackTests {
    // MARK: Pages

    @Test("the app-link page builds its link from publicURL and a normalised path: //evil.example/x stays on this host")
    func associationPage() async throws {
        try await CompanionRig.with(change: {
            $0.associations = [AppAssociation(appIDs: ["A1B2C3D4E5.com.example.app"], paths: ["/*"])]
        }) { rig in
            for path in ["//evil.example/x", "/signed-in//evil.example", "/a/../..//evil.example"] {
                let page = try await rig.transport.send(HTTPRequest(method: .get, url: URL(string: rig.companion.baseURL.absoluteString + path)!))
                guard page.status == 200 else { continue }
                let link = try #require(WebPage(url: rig.url("/"), html: page.text).returnLink)
                #expect(link.host == "127.0.0.1" && link.port == rig.companion.port, "\(path) -> \(link)")
            }
            let ordinary = try await rig.get(rig.url("/signed-in?result=abc"))
            let link = try #require(WebPage(url: rig.url("/"), html: ordinary.text).returnLink)
            #expect(link.absoluteString == rig.companion.baseURL.absoluteString + "/signed-in?result=abc")
        }
    }

    @Test("pages allow no script but the fragment page's own, by hash; its form keeps a path prefix of publicURL")
    func contentSecurityPolicy() async throws {
        try await CompanionRig.with { rig in
            let fragmentPage = try await rig.get(rig.url("/bridge/callback"))
            let policy = try #require(fragmentPage.headers["content-security-policy"])
            #expect(!policy.contains("unsafe-inline"))
            #expect(policy.contains("script-src 'sha256-"))
            let error = try await rig.get(rig.url("/handoff/redeem?handoffotp=x&goto=https%3A%2F%2Fevil.example"))
            #expect(error.headers["content-security-policy"]?.contains("script-src 'none'") == true)

            try await CompanionRig.with(change: { $0.publicURL = "http://127.0.0.1/auth" }) { prefixed in
                // A reverse proxy serves the companion under /auth and strips the prefix: the page is asked for at the bare path.
                let page = try await prefixed.get(try #require(URL(string: "http://127.0.0.1:\(prefixed.companion.port)/bridge/callback")))
                #expect(page.text.contains("action=\"http://127.0.0.1/auth/bridge/fragment\""))
            }
        }
    }
}
