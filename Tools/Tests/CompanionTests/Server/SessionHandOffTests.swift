import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// The app's half of session hand-off, against a real companion and emulator over HTTP.
@Suite("Session hand-off client")
struct SessionHandOffTests {
    @Test("the client asks with its access token, opens the companion's redeem URL once, and the browser lands signed in")
    func opensSignedIn() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            let handOff = SessionHandOff(companion: CompanionClient(rig.companion.baseURL, transport: rig.transport))
            let opener = RecordingURLOpener()
            let webApp = try #require(URL(string: CompanionRig.webApp + "/orders"))
            try await handOff.open(webApp, accessToken: token, in: .systemBrowser(opener))

            let opened = try #require(opener.opened.first)
            #expect(opener.opened.count == 1)
            #expect(opened.path.hasSuffix("/handoff/redeem"))
            #expect(!opened.absoluteString.contains(token), "the access token is never in the URL")
            // What the browser does with it: a page naming the account, one tap, a cookie and a redirect to the web app.
            let landing = try await rig.followRedeem(opened)
            #expect(landing.status == 303)
            #expect(landing.headers["location"] == webApp.absoluteString)
            let cookie = try #require(landing.headers["set-cookie"])
            let whoami = try await rig.get(rig.url("/session"), headers: ["Cookie": String(try #require(cookie.split(separator: ";").first))])
            #expect(whoami.text.contains("9b1f7c2e-alice"))
        }
    }

    @Test("into the app's WebView: the loader receives the redeem URL")
    func webView() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            let loaded = LockedValue<[URL]>([])
            try await SessionHandOff(companion: CompanionClient(rig.companion.baseURL, transport: rig.transport))
                .open(try #require(URL(string: CompanionRig.webApp)), accessToken: token, in: .webView { url in loaded.withLock { $0.append(url) } })
            let url = try #require(loaded.withLock { $0 }.first)
            #expect(try await rig.followRedeem(url).status == 303)
        }
    }

    @Test("refusals are typed: a revoked or forged token, a destination off the allow-list, a companion that is not https, an opener that fails")
    func refusals() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let handOff = SessionHandOff(companion: CompanionClient(rig.companion.baseURL, transport: rig.transport))
            let webApp = try #require(URL(string: CompanionRig.webApp))
            let forged = await #expect(throws: SwitchbackError.self) {
                try await handOff.redeemURL(for: webApp, accessToken: "forged-token-0123456789")
            }
            #expect(forged?.code == .handOffRefused)
            #expect(forged?.oauthError?.error == "invalid_token")
            #expect(forged?.description.contains("forged-token") == false)

            let token = try await rig.accessToken()
            let elsewhere = await #expect(throws: SwitchbackError.self) {
                try await handOff.redeemURL(for: URL(string: "https://evil.example/app")!, accessToken: token)
            }
            #expect(elsewhere?.oauthError?.error == "not_allowed")
            let plain = await #expect(throws: SwitchbackError.self) {
                try await handOff.redeemURL(for: URL(string: "http://web.example.com/app")!, accessToken: token)
            }
            #expect(plain?.code == .invalidURL)
            let insecure = await #expect(throws: SwitchbackError.self) {
                try await SessionHandOff(companion: CompanionClient(URL(string: "http://auth.example.com")!)).redeemURL(
                    for: webApp, accessToken: token)
            }
            #expect(insecure?.code == .insecureEndpoint)
            let failing = await #expect(throws: SwitchbackError.self) {
                try await handOff.open(webApp, accessToken: token, in: .systemBrowser(RecordingURLOpener(opens: false)))
            }
            #expect(failing?.code == .userAgentFailed)
        }
    }

    @Test("an answer whose redeem URL is not the companion's own route is refused, so the code goes nowhere else")
    func foreignRedeemURL() async throws {
        let companion = URL(string: "https://auth.example.com")!
        let answers = [
            #"{"handoffotp":"x","redeem_url":"https://evil.example/handoff/redeem?handoffotp=x"}"#,
            #"{"handoffotp":"x","redeem_url":"https://auth.example.com:8443/handoff/redeem?handoffotp=x"}"#,
            #"{"handoffotp":"x","redeem_url":"https://auth.example.com/elsewhere?handoffotp=x"}"#,
            #"{"handoffotp":"x","redeem_url":"https://user@auth.example.com/handoff/redeem?handoffotp=x"}"#,
            #"{"handoffotp":"x"}"#,
            #"not json"#,
        ]
        for answer in answers {
            let transport = StubTransport { _ in HTTPResponse(status: 201, headers: ["Content-Type": "application/json"], body: Data(answer.utf8))
            }
            let error = await #expect(throws: SwitchbackError.self) {
                try await SessionHandOff(companion: CompanionClient(companion, transport: transport)).redeemURL(
                    for: URL(string: "https://web.example.com/app")!, accessToken: "t")
            }
            #expect(error?.code == .handOffRefused, "\(answer)")
        }
    }
}
