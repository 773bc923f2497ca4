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
@Suite("Companion under attack: login CSRF and sessions")
struct SessionAttackTests {
    // MARK: Login CSRF on the redeem link

    @Test(
        "the redeem link sets nothing by GET; a cross-site or Origin-less POST is refused; another account's session is replaced only when confirmed"
    )
    func redeemCSRF() async throws {
        let store = InMemoryCompanionStore()
        try await CompanionRig.with(store: store, returns: .tokens) { rig in
            let issued = try await Attack.handOff(rig, headers: ["Authorization": "Bearer \(try await rig.accessToken())"])
            let redeemText = try #require(issued.json["redeem_url"] as? String)
            let redeemURL = try #require(URL(string: redeemText))
            let code = try #require(issued.json["handoffotp"] as? String)
            // The attacker mails the victim their own link: the GET shows a page naming the account, nothing more.
            let page = try await rig.get(redeemURL)
            #expect(page.status == 200)
            #expect(page.headers["set-cookie"] == nil && page.headers["location"] == nil)
            #expect(page.text.contains("Continue as alice (9b1f7c2e-alice)"), "the provider's username beside the subject")
            #expect(page.headers["content-security-policy"]?.contains("script-src 'none'") == true)
            // A hidden auto-submitting form on the attacker's site, and a client that sends no Origin.
            let fields = [("handoffotp", code), ("goto", CompanionRig.webApp)]
            let crossSite = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields, headers: ["Origin": "https://evil.example"]))
            #expect(crossSite.status == 403)
            #expect(crossSite.headers["set-cookie"] == nil)
            let noOrigin = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields))
            #expect(noOrigin.status == 403)
            let fetchSite = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields, headers: ["Sec-Fetch-Site": "cross-site"]))
            #expect(fetchSite.status == 403)

            // The browser is already signed in as someone else (a session of bob's).
            let bob = try await rig.session(in: store, subject: "bob-subject")
            let swap = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields, headers: ["Origin": rig.origin, "Cookie": bob.cookie]))
            #expect(swap.status == 409, "no silent replacement of another subject's session")
            #expect(swap.headers["set-cookie"] == nil)
            let swapPage = String(decoding: swap.body, as: UTF8.self)
            #expect(swapPage.contains("signed in as bob-subject"))
            // The user confirms on that page: bob's session ends, alice's begins.
            let confirm = try #require(WebPage(url: rig.url("/handoff/redeem"), html: swapPage).confirmForm)
            let confirmed = try await rig.transport.send(
                .form(confirm.action, confirm.fields, headers: ["Origin": rig.origin, "Cookie": bob.cookie]))
            #expect(confirmed.status == 303)
            #expect(confirmed.headers["set-cookie"]?.hasPrefix("__Host-switchback_session=") == true)
            #expect(try await rig.get(rig.url("/session"), headers: ["Cookie": bob.cookie]).status == 401, "the replaced session is gone")
        }
    }

    @Test("the same-origin check takes this server's origin in any ASCII case, and nothing that only lowercases to it")
    func originCase() {
        let origin = "https://companion.example:8443"
        for accepted in [origin, "HTTPS://Companion.Example:8443", "https://companion.examplE:8443"] {
            #expect(ASCIICase.equals(accepted.utf8, lowercased: origin.utf8), "\(accepted)")
        }
        // The Kelvin sign lowercases to "k" in Unicode, which `lowercased() ==` accepted; "@" and "`" differ
        // only in the bit that ASCII case sets; then a longer, a shorter and an empty origin.
        let refused = [
            ("https://\u{212A}ey.example", "https://key.example"), ("https://a@b.example", "https://a`b.example"),
            (origin + "/", origin), (String(origin.dropLast()), origin), ("", origin), ("null", origin),
        ]
        for (text, expected) in refused {
            #expect(!ASCIICase.equals(text.utf8, lowercased: expected.utf8), "\(text)")
        }
    }

    @Test("logout ends the session (cookie only from the same origin) and clears the cookie")
    func logout() async throws {
        let store = InMemoryCompanionStore()
        try await CompanionRig.with(store: store) { rig in
            let session = try await rig.session(in: store, subject: "alice-subject")
            let crossSite = try await rig.post("/session/logout", [:], headers: ["Cookie": session.cookie, "Origin": "https://evil.example"])
            #expect(crossSite.response.status == 403)
            #expect(try await rig.get(rig.url("/session"), headers: ["Cookie": session.cookie]).status == 200)
            let ended = try await rig.post("/session/logout", [:], headers: ["Cookie": session.cookie, "Origin": rig.origin])
            #expect(ended.response.status == 204)
            #expect(ended.response.headers["set-cookie"]?.contains("Max-Age=0") == true)
            #expect(try await rig.get(rig.url("/session"), headers: ["Cookie": session.cookie]).status == 401)
            let other = try await rig.session(in: store, subject: "carol-subject")
            #expect(try await rig.post("/session/logout", [:], headers: ["Authorization": "Session \(other.id)"]).response.status == 204)
            #expect(try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(other.id)"]).status == 401)
        }
    }
}
