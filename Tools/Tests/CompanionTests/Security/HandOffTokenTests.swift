import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// Which of the app's access tokens buy a web session at `POST /handoff`, and for how long: the token must
/// be meant for this server (audience) or granted the hand-off scope, the session ends when the token does,
/// and a server may take only DPoP-bound tokens.
@Suite("Hand-off: which tokens buy a session, and until when")
struct HandOffTokenTests {
    static func handOff(_ rig: CompanionRig, token: String) async throws -> (response: HTTPResponse, json: [String: Any]) {
        try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: ["Authorization": "Bearer \(token)"])
    }

    /// The resource server's name in the JWT access tokens the emulator issues when the rig validates them
    /// itself.
    static let api = "https://api.example.com"

    /// With `.jwt`, the emulator issues RFC 9068 access tokens meant for ``api``, which the hand-off names
    /// as its audience; with `.introspection`, opaque tokens the companion asks the provider about.
    static func emulator(_ validation: ServerConfiguration.TokenValidation) -> (inout EmulatorConfiguration) -> Void {
        { if validation == .jwt { $0.accessTokenAudience = api } }
    }

    static func validating(_ validation: ServerConfiguration.TokenValidation, _ configuration: inout ServerConfiguration) {
        configuration.handOff?.validation = validation
        if validation == .jwt { configuration.handOff?.audience = api }
    }

    /// A rig whose hand-off takes `native-rs`'s tokens and checks them by `validation`, then `change`.
    static func withNativeClient(
        _ validation: ServerConfiguration.TokenValidation, change: @escaping (inout ServerConfiguration) -> Void = { _ in },
        _ body: (CompanionRig) async throws -> Void
    ) async throws {
        try await CompanionRig.with(
            returns: .tokens, emulator: emulator(validation),
            change: {
                $0.handOff?.acceptedClients = ["native-rs"]
                validating(validation, &$0)
                change(&$0)
            }, body)
    }

    static func maxAge(_ cookie: String) -> Int? {
        cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.hasPrefix("Max-Age=") }
            .flatMap { Int($0.dropFirst("Max-Age=".count)) }
    }

    @Test("a hand-off that names neither an audience nor a scope is refused at start, naming both keys")
    func configurationNeedsAudienceOrScope() throws {
        var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
        try configuration.validate()
        configuration.handOff?.requiredScope = nil
        let error = #expect(throws: (any Error).self) { try configuration.validate() }
        let message = String(describing: error)
        #expect(message.contains("audience") && message.contains("requiredScope"), "\(message)")
        configuration.handOff?.audience = "https://api.example.com"
        try configuration.validate()
        configuration.handOff?.requiredScope = "web session"
        #expect(throws: (any Error).self) { try configuration.validate() }
    }

    @Test(
        "requiredScope: the app's token without the hand-off scope buys nothing; with it, a code",
        arguments: [ServerConfiguration.TokenValidation.introspection, .jwt])
    func scopeRequired(validation: ServerConfiguration.TokenValidation) async throws {
        try await Self.withNativeClient(validation) { rig in
            let plain = OIDCClient(
                configuration: ClientConfiguration(clientID: "native-rs", redirectURI: URL(string: CompanionRig.appRedirect)!),
                provider: .discovery(issuer: rig.emulator.issuer))
            let session = try await plain.prepareAuthorization()
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                Issue.record("no redirect")
                return
            }
            let openidOnly = try await plain.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
            #expect((openidOnly.accessToken.split(separator: ".").count == 3) == (validation == .jwt), "a JWT access token exactly with .jwt")
            let refused = try await Self.handOff(rig, token: openidOnly.accessToken)
            #expect(refused.response.status == 401)
            #expect(refused.json["handoffotp"] == nil)
            #expect((refused.json["error_description"] as? String)?.contains("web-session") == true)

            let granted = try await Attack.credential(rig, clientID: "native-rs")
            #expect(try await Self.handOff(rig, token: granted.accessToken).response.status == 201)
        }
    }

    @Test("introspection with audience: an answer naming this server is accepted; one naming another, or none, is refused")
    func introspectedAudience() async throws {
        let audience = "https://api.example.com"
        let requireAudience: (inout ServerConfiguration) -> Void = {
            $0.handOff = .init(validation: .introspection, audience: audience, allowedRedirects: [CompanionRig.webApp])
        }
        try await CompanionRig.with(returns: .tokens, emulator: { $0.accessTokenAudience = audience }, change: requireAudience) { rig in
            let accepted = try await Self.handOff(rig, token: try await rig.accessToken())
            #expect(accepted.response.status == 201)
        }
        try await CompanionRig.with(
            returns: .tokens, emulator: { $0.accessTokenAudience = "https://other-api.example.com" }, change: requireAudience
        ) { rig in
            let refused = try await Self.handOff(rig, token: try await rig.accessToken())
            #expect(refused.response.status == 401)
            #expect((refused.json["error_description"] as? String)?.contains("not meant for this server") == true)
        }
        // An opaque token whose introspection names no audience says nothing about whom it is for.
        try await CompanionRig.with(returns: .tokens, change: requireAudience) { rig in
            let refused = try await Self.handOff(rig, token: try await rig.accessToken())
            #expect(refused.response.status == 401)
            #expect(refused.json["handoffotp"] == nil)
        }
    }

    @Test(
        "the web session ends when the access token does: cookie Max-Age, /session and the store agree",
        arguments: [ServerConfiguration.TokenValidation.introspection, .jwt])
    func sessionCappedAtTokenExpiry(validation: ServerConfiguration.TokenValidation) async throws {
        try await CompanionRig.with(
            returns: .tokens,
            emulator: {
                $0.tokenLifetime = 600
                Self.emulator(validation)(&$0)
            }, change: { Self.validating(validation, &$0) }
        ) { rig in
            let token = try await rig.accessToken()
            // The emulator's clock runs; the companion's stands where the rig started it.
            let drift = Int(Date().timeIntervalSince(rig.clock.now()).rounded(.up))
            let issued = try await Self.handOff(rig, token: token)
            let redeemURL = try #require(issued.json["redeem_url"] as? String)
            let landing = try await rig.followRedeem(try #require(URL(string: redeemURL)))
            #expect(landing.status == 303)
            let cookie = try #require(landing.headers["set-cookie"])
            let age = try #require(Self.maxAge(cookie))
            #expect(age <= 601 + drift && age >= 590, "the token's 600 s, not the session's 3600 s: \(age)")
            let pair = String(try #require(cookie.split(separator: ";").first))
            let whoami = try await rig.get(rig.url("/session"), headers: ["Cookie": pair])
            let expiresIn = try #require((try JSONSerialization.jsonObject(with: whoami.body) as? [String: Any])?["expires_in"] as? Int)
            #expect(expiresIn <= 601 + drift && expiresIn >= 590)
            rig.clock.advance(by: TimeInterval(602 + drift))
            #expect(try await rig.get(rig.url("/session"), headers: ["Cookie": pair]).status == 401, "the session ended with the token")
        }
    }

    @Test("a code whose token expired before it was redeemed signs nothing in and leaves the browser's session alone")
    func tokenExpiredBeforeRedeem() async throws {
        try await CompanionRig.with(returns: .tokens, emulator: { $0.tokenLifetime = 60 }, change: { $0.handOff?.codeLifetime = 300 }) { rig in
            let token = try await rig.accessToken()
            let drift = Date().timeIntervalSince(rig.clock.now()).rounded(.up)
            let issued = try await Self.handOff(rig, token: token)
            let redeemLink = try #require(issued.json["redeem_url"] as? String)
            let redeemURL = try #require(URL(string: redeemLink))
            rig.clock.advance(by: 62 + drift)
            let late = try await rig.followRedeem(redeemURL)
            #expect(late.status == 400)
            #expect(late.headers["set-cookie"] == nil)
            #expect(late.headers["location"] == nil)
            #expect(late.text.contains("expired"))
        }
    }

    @Test(
        "dpopBoundOnly: a Bearer token is refused even when everything else is right; a DPoP-bound one is accepted",
        arguments: [ServerConfiguration.TokenValidation.introspection, .jwt])
    func dpopOnly(validation: ServerConfiguration.TokenValidation) async throws {
        try await Self.withNativeClient(validation, change: { $0.handOff?.dpopBoundOnly = true }) { rig in
            let bearer = try await Attack.credential(rig, clientID: "native-rs")
            let refused = try await Self.handOff(rig, token: bearer.accessToken)
            #expect(refused.response.status == 401)
            #expect((refused.json["error_description"] as? String)?.contains("only DPoP-bound") == true)

            let bound = try await Attack.credential(rig, clientID: "native-rs", dpop: .perSignIn)
            let key = try #require(bound.dpopKey)
            let handOff = SessionHandOff(companion: CompanionClient(rig.companion.baseURL, transport: rig.transport), dpop: key)
            let url = try await handOff.redeemURL(for: try #require(URL(string: CompanionRig.webApp)), accessToken: bound.accessToken)
            #expect(try await rig.followRedeem(url).status == 303)
        }
    }
}
