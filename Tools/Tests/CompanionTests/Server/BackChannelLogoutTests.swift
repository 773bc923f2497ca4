import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// OpenID Connect Back-Channel Logout 1.0 at the companion, over real HTTP: the emulator signs the logout
/// tokens as the provider would post them, the companion's sessions for their `sub` or `sid` end, and every
/// token that fails §2.6 (or is replayed) is refused with 400 and ends nothing.
@Suite("Companion: Back-Channel Logout")
struct BackChannelLogoutTests {
    static let alice = "9b1f7c2e-alice"

    /// A session from a backend exchange (alice signs in at the emulator).
    static func session(_ rig: CompanionRig) async throws -> String {
        let binding = "binding-\(UUID().uuidString)"
        let started = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": binding])
        guard case .redirect(let callback) = try await rig.signIn(try #require(started.json["authorization_url"] as? String)) else {
            throw RigFailure("the provider did not redirect to the app")
        }
        let exchanged = try await rig.post("/exchange", ["callback_url": callback, "binding": binding])
        return try #require(exchanged.json["session"] as? String)
    }

    static func alive(_ rig: CompanionRig, _ session: String) async throws -> Bool {
        try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(session)"]).status == 200
    }

    static func post(_ rig: CompanionRig, _ token: String) async throws -> (response: HTTPResponse, json: [String: Any]) {
        try await rig.post(
            CompanionAPI.Path.backChannelLogout, body: Data(FormEncoding.encode([("logout_token", token)]).utf8),
            contentType: "application/x-www-form-urlencoded")
    }

    @Test(
        "a hand-off web session is ended by a logout of its subject on the provider's clock (the access token's iat), even with the companion's clock three minutes ahead"
    )
    func handOffSessionByProviderTime() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            // The companion's clock runs three minutes ahead of the provider's: compared with its own, the session
            // would look begun after the logout and would live on.
            rig.clock.advance(by: 180)
            let token = try await rig.accessToken()
            let issued = try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: ["Authorization": "Bearer \(token)"])
            let landing = try await rig.followRedeem(try #require(URL(string: issued.json["redeem_url"] as? String ?? "")))
            let session = try #require(landing.headers["set-cookie"]?.split(separator: ";").first?.split(separator: "=").last.map(String.init))
            #expect(try await Self.alive(rig, session))
            try await Task.sleep(nanoseconds: 1_100_000_000)
            let answer = try await Self.post(rig, try await rig.emulator.logoutToken(forClient: "backend", subject: Self.alice))
            #expect(answer.response.status == 200)
            #expect(try await !Self.alive(rig, session), "the hand-off session outlived its subject's logout")
        }
    }

    @Test("a logout token for the user ends every session made before it, once; a replay is refused; a later sign-in lives")
    func bySubject() async throws {
        try await CompanionRig.with { rig in
            let first = try await Self.session(rig)
            let second = try await Self.session(rig)
            let token = try await rig.emulator.logoutToken(forClient: "backend", subject: Self.alice)
            let answer = try await Self.post(rig, token)
            #expect(answer.response.status == 200)
            #expect(answer.response.headers["cache-control"] == "no-store")
            #expect(try await !Self.alive(rig, first))
            #expect(try await !Self.alive(rig, second))

            let replay = try await Self.post(rig, token)
            #expect(replay.response.status == 400)
            #expect(replay.json["error"] as? String == "invalid_request")
            #expect(replay.response.headers["cache-control"] == "no-store")

            // Times are the provider's, in whole seconds: a sign-in in the logout's second is ended with it.
            try await Task.sleep(nanoseconds: 1_100_000_000)
            let later = try await Self.session(rig)
            #expect(try await Self.alive(rig, later), "a session begun after the logout is not ended by it")
        }
    }

    @Test("a logout token for one provider session (sid) ends that sign-in's session only")
    func bySessionID() async throws {
        try await CompanionRig.with(
            emulator: { configuration in
                for index in configuration.clients.indices where configuration.clients[index].clientID == "backend" {
                    configuration.clients[index].backChannelLogoutSession = true
                }
            }
        ) { rig in
            let first = try await Self.session(rig)
            let firstSID = try #require(await rig.emulator.sessionIDs(of: Self.alice).first)
            let second = try await Self.session(rig)
            #expect(await rig.emulator.sessionIDs(of: Self.alice).count == 2)
            let answer = try await Self.post(rig, try await rig.emulator.logoutToken(forClient: "backend", subject: nil, sessionID: firstSID))
            #expect(answer.response.status == 200)
            #expect(try await !Self.alive(rig, first))
            #expect(try await Self.alive(rig, second))
        }
    }

    /// Tokens §2.6 refuses (and the conformance list: alg none, no events, a nonce, wrong alg/aud/iss).
    static let refusals: [(String, @Sendable (inout [String: JSONValue]) -> Void)] = [
        ("no events", { $0["events"] = nil }),
        ("another event", { $0["events"] = .object(["http://schemas.openid.net/event/other": .object([:])]) }),
        ("a nonce", { $0["nonce"] = .string("n-1") }),
        ("another audience", { $0["aud"] = .string("another-client") }),
        ("several audiences without azp", { $0["aud"] = .array([.string("backend"), .string("another-client")]) }),
        ("another issuer", { $0["iss"] = .string("https://evil.example") }),
        ("neither sub nor sid", { $0["sub"] = nil }),
        ("no jti", { $0["jti"] = nil }),
        ("expired", { $0["exp"] = .number(Date().timeIntervalSince1970 - 600) }),
        ("issued long ago", { $0["iat"] = .number(Date().timeIntervalSince1970 - 3600) }),
        ("issued in the future", { $0["iat"] = .number(Date().timeIntervalSince1970 + 3600) }),
    ]

    @Test("malformed, unsigned, re-signed or foreign tokens are refused with 400 and end nothing")
    func refused() async throws {
        try await CompanionRig.with { rig in
            let session = try await Self.session(rig)
            for (name, change) in Self.refusals {
                let token = try await rig.emulator.logoutToken(forClient: "backend", subject: Self.alice, change: change)
                let answer = try await Self.post(rig, token)
                #expect(answer.response.status == 400, "\(name)")
                #expect(answer.json["error"] as? String == "invalid_request", "\(name)")
            }
            let valid = try await rig.emulator.logoutToken(forClient: "backend", subject: "someone-else")
            let parts = valid.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let aliceClaims = try await rig.emulator.logoutToken(forClient: "backend", subject: Self.alice)
                .split(separator: ".", omittingEmptySubsequences: false).map(String.init)[1]
            let forged = [
                // alg none, unsigned.
                Base64URL.encode(Data(#"{"alg":"none","typ":"logout+jwt"}"#.utf8)) + "." + aliceClaims + ".",
                // Another user's signature over alice's claims.
                parts[0] + "." + aliceClaims + "." + parts[2],
                // Not a JWT at all.
                "not-a-token",
            ]
            for token in forged {
                #expect(try await Self.post(rig, token).response.status == 400)
            }
            // No logout_token, or two.
            #expect(
                try await rig.post(CompanionAPI.Path.backChannelLogout, body: Data(), contentType: "application/x-www-form-urlencoded").response
                    .status == 400)
            let twice = FormEncoding.encode([("logout_token", valid), ("logout_token", valid)])
            #expect(
                try await rig.post(CompanionAPI.Path.backChannelLogout, body: Data(twice.utf8), contentType: "application/x-www-form-urlencoded")
                    .response.status == 400)
            #expect(try await Self.alive(rig, session), "nothing refused ended the session")
            #expect(!rig.log.all.contains { $0.contains("back-channel logout") && !$0.contains("refused") }, "no logout was carried out")
        }
    }
}

/// The app's side of ending a companion session at sign-out.
@Suite("CompanionClient.endSession")
struct CompanionEndSessionTests {
    @Test("ends the session it names (the companion then answers 401 for it), and ending it again is not an error")
    func endSession() async throws {
        try await CompanionRig.with { rig in
            let session = try await BackChannelLogoutTests.session(rig)
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            try await client.endSession(session)
            #expect(try await !BackChannelLogoutTests.alive(rig, session))
            try await client.endSession(session)
        }
    }
}
