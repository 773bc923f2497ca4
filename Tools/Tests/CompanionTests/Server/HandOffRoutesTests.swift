import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// Session hand-off over real HTTP: a Bearer access token buys a one-time code; its redemption sets the
/// session cookie and redirects only to an allow-listed destination.
@Suite("Companion session hand-off")
struct HandOffRoutesTests {
    static func issue(_ rig: CompanionRig, token: String, goto: String? = nil) async throws -> (response: HTTPResponse, json: [String: Any]) {
        var body: [String: Any] = [:]
        if let goto { body["goto"] = goto }
        return try await rig.post("/handoff", body, headers: ["Authorization": "Bearer \(token)"])
    }

    static func redeem(_ rig: CompanionRig, code: String, goto: String) async throws -> HTTPResponse {
        var components = URLComponents(url: rig.url("/handoff/redeem"), resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = "handoffotp=\(FormEncoding.escape(code))&goto=\(FormEncoding.escape(goto))"
        return try await rig.followRedeem(components.url!)
    }

    @Test("a valid token gets a code; its redemption sets a Secure, HttpOnly, SameSite cookie and lands on the web app signed in")
    func handOff() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            let issued = try await Self.issue(rig, token: token, goto: CompanionRig.webApp + "/orders?tab=open")
            #expect(issued.response.status == 201)
            let code = try #require(issued.json["handoffotp"] as? String)
            #expect(code.count == 43, "256 bits")
            #expect(issued.json["expires_in"] as? Int == 60)
            let redeemURL = try #require(issued.json["redeem_url"] as? String)
            let landing = try await rig.followRedeem(try #require(URL(string: redeemURL)))
            #expect(landing.status == 303)
            #expect(landing.headers["location"] == CompanionRig.webApp + "/orders?tab=open")
            let cookie = try #require(landing.headers["set-cookie"])
            #expect((3590...3600).contains(HandOffTokenTests.maxAge(cookie) ?? 0), "the session's hour, within the token's")
            for flag in ["Secure", "HttpOnly", "SameSite=Lax", "Path=/"] {
                #expect(cookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.contains(flag), "cookie flag \(flag)")
            }
            let pair = try #require(cookie.split(separator: ";").first)
            let whoami = try await rig.get(rig.url("/session"), headers: ["Cookie": String(pair)])
            #expect(whoami.status == 200)
            #expect(whoami.text.contains("9b1f7c2e-alice"))

            let reused = try await rig.followRedeem(try #require(URL(string: redeemURL)))
            #expect(reused.status == 400)
            #expect(reused.headers["location"] == nil)
            #expect(reused.headers["set-cookie"] == nil)
            #expect(reused.text.contains("expired or was already used"))
        }
    }

    /// The body is read by the token reader: a member named twice is refused (Foundation's decoder kept the
    /// first, which an allow-list check and a later reader could see differently), as is a goto of another type.
    @Test("a body naming goto twice, a goto that is not a string, or a body that is not an object gets invalid_request and no code")
    func malformedBodies() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            let goto = CompanionRig.webApp + "/orders"
            for body in [#"{"goto":"\#(goto)","goto":"https://evil.example/"}"#, #"{"goto":5}"#, #"["goto"]"#, #"{"goto":"\#(goto)""#] {
                let refused = try await rig.post("/handoff", body: Data(body.utf8), headers: ["Authorization": "Bearer \(token)"])
                #expect(refused.response.status == 400, "\(body)")
                #expect(refused.json["error"] as? String == "invalid_request", "\(body)")
                #expect(refused.json["handoffotp"] == nil)
            }
            let accepted = try await rig.post("/handoff", body: Data(#"{"goto":"\#(goto)"}"#.utf8), headers: ["Authorization": "Bearer \(token)"])
            #expect(accepted.response.status == 201)
            #expect((accepted.json["redeem_url"] as? String)?.contains("goto=") == true)
        }
    }

    @Test("an expired code is refused")
    func expired() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            let code = try #require(try await Self.issue(rig, token: token).json["handoffotp"] as? String)
            rig.clock.advance(by: 61)
            let late = try await Self.redeem(rig, code: code, goto: CompanionRig.webApp)
            #expect(late.status == 400)
            #expect(late.headers["location"] == nil)
        }
    }

    @Test(
        "a code whose access token expired before the redeem is refused: with no session here it is used up at once, in a browser with a session nothing is"
    )
    func tokenExpiredBeforeRedeem() async throws {
        try await CompanionRig.with(returns: .tokens, emulator: { $0.tokenLifetime = 60 }, change: { $0.handOff?.codeLifetime = 300 }) { rig in
            let token = try await rig.accessToken()
            // The emulator's clock is the real one; the companion's starts a little behind it.
            let drift = Date().timeIntervalSince(rig.clock.now()).rounded(.up)
            let bare = try #require(try await Self.issue(rig, token: token).json["handoffotp"] as? String)
            let withSession = try #require(try await Self.issue(rig, token: token).json["handoffotp"] as? String)
            let first = try #require(try await Self.issue(rig, token: token, goto: CompanionRig.webApp).json["redeem_url"] as? String)
            let landing = try await rig.followRedeem(try #require(URL(string: first)))
            let cookie = String(try #require(landing.headers["set-cookie"]?.split(separator: ";").first))
            rig.clock.advance(by: 62 + drift)

            let refused = try await Self.redeem(rig, code: bare, goto: CompanionRig.webApp)
            #expect(refused.status == 400 && refused.text.contains("access token behind this link has expired"))
            #expect(try await Self.redeem(rig, code: bare, goto: CompanionRig.webApp).text.contains("expired or was already used"), "used up")

            var components = URLComponents(url: rig.url("/handoff/redeem"), resolvingAgainstBaseURL: false)!
            components.percentEncodedQuery = "handoffotp=\(FormEncoding.escape(withSession))&goto=\(FormEncoding.escape(CompanionRig.webApp))"
            for _ in 0..<2 {
                let kept = try await rig.followRedeem(components.url!, cookie: cookie)
                #expect(
                    kept.status == 400 && kept.text.contains("access token behind this link has expired"), "nothing used up: \(kept.text.prefix(120))"
                )
            }
        }
    }

    @Test("missing, malformed, forged and expired Bearer tokens get 401 and no code")
    func bearerRefusals() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let none = try await rig.post("/handoff", [:])
            #expect(none.response.status == 401)
            let basic = try await rig.post("/handoff", [:], headers: ["Authorization": "Basic YWxpY2U6c2VjcmV0"])
            #expect(basic.response.status == 401)
            let forged = try await Self.issue(rig, token: "forged-access-token-0123456789")
            #expect(forged.response.status == 401)
            #expect(forged.json["error"] as? String == "invalid_token")
            #expect(forged.json["handoffotp"] == nil)
            let token = try await rig.accessToken()
            rig.clock.advance(by: 7200)
            let expired = try await Self.issue(rig, token: token)
            #expect(expired.response.status == 401, "the introspected exp is in the past on the server's clock")
        }
    }

    @Test("JWT validation: the provider's RFC 9068 access token gets a code; a foreign-key, wrong-audience, opaque or expired one gets 401")
    func jwtValidation() async throws {
        let audience = "https://api.example.com"
        try await CompanionRig.with(
            returns: .tokens, emulator: { $0.accessTokenAudience = audience },
            change: {
                $0.handOff = .init(validation: .jwt, audience: audience, allowedRedirects: [CompanionRig.webApp])
            }
        ) { rig in
            let token = try await rig.accessToken()
            #expect(token.split(separator: ".").count == 3, "the emulator issued a JWT access token")
            let issued = try await Self.issue(rig, token: token, goto: CompanionRig.webApp)
            #expect(issued.response.status == 201)
            let redeemURL = try #require(issued.json["redeem_url"] as? String)
            #expect(try await rig.followRedeem(try #require(URL(string: redeemURL))).status == 303)

            let foreign = try await TestTokenSigner(.es256, keyID: "foreign")
            let now = Date().timeIntervalSince1970.rounded(.down)
            let claims: [String: JSONValue] = [
                "iss": .string(rig.emulator.issuer), "sub": .string("9b1f7c2e-alice"), "aud": .string(audience), "client_id": .string("backend"),
                "iat": .number(now), "exp": .number(now + 600), "jti": .string("j1"),
            ]
            let forged = try await foreign.sign(claims, type: "at+jwt")
            #expect(try await Self.issue(rig, token: forged).response.status == 401, "signed by a key the provider does not publish")

            try await CompanionRig.with(
                returns: .tokens, emulator: { $0.accessTokenAudience = "https://another-api.example.com" },
                change: {
                    $0.handOff = .init(validation: .jwt, audience: audience, allowedRedirects: [CompanionRig.webApp])
                }
            ) { other in
                let otherAudience = try await Self.issue(other, token: try await other.accessToken())
                #expect(otherAudience.response.status == 401, "a token for another resource server")
                #expect(otherAudience.json["handoffotp"] == nil)

                let opaque = try await Self.issue(rig, token: "opaque-access-token-0123456789")
                #expect(opaque.response.status == 401)
                rig.clock.advance(by: 2 * 3600)
                let expired = try await Self.issue(rig, token: token)
                #expect(expired.response.status == 401, "past the token's exp on the server's clock")
                #expect(expired.json["error"] as? String == "invalid_token")
            }
        }
    }

    @Test(
        "backend exchange as private_key_jwt, the key in a file or given as text: the server's assertions are accepted; a key the provider does not hold is refused",
        arguments: [false, true])
    func privateKeyJWT(asText: Bool) async throws {
        let keys = try await EmulatorHarness.clientKeys(kid: "backend-key")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-pkjwt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem")
        let registered: (inout EmulatorConfiguration) -> Void = {
            $0.clients.append(
                .init(clientID: "backend-jwt", authentication: .privateKeyJWT, redirectURIs: [CompanionRig.appRedirect], jwks: keys.jwks))
        }
        // As a deployment gives it: a path to a mounted file, or the PEM itself from a secret.
        func useKey(_ pem: String) throws -> (inout ServerConfiguration) -> Void {
            if asText {
                return {
                    $0.provider = .init(
                        issuer: $0.provider!.issuer, clientID: "backend-jwt", privateKey: pem, keyAlgorithm: "ES256", keyID: "backend-key")
                }
            }
            try pem.write(to: keyFile, atomically: true, encoding: .utf8)
            return {
                $0.provider = .init(
                    issuer: $0.provider!.issuer, clientID: "backend-jwt", privateKeyFile: keyFile.path, keyAlgorithm: "ES256", keyID: "backend-key")
            }
        }
        try await CompanionRig.with(returns: .tokens, emulator: registered, change: try useKey(keys.pem)) { rig in
            #expect(!(try await rig.accessToken()).isEmpty)

            let stranger = try await EmulatorHarness.clientKeys(kid: "backend-key")
            try await CompanionRig.with(returns: .tokens, emulator: registered, change: try useKey(stranger.pem)) { refusedRig in
                let refused = try await refusedRig.post(
                    "/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
                #expect(refused.response.status == 502)
                #expect(refused.json["error"] as? String == "provider_error")
                #expect(!refusedRig.log.text.contains(stranger.pem.split(separator: "\n")[1]))
            }
        }
    }

    @Test("a goto off the allow-list is refused before the code is used, with an error page and no redirect")
    func openRedirects() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            let code = try #require(try await Self.issue(rig, token: token).json["handoffotp"] as? String)
            let hostile = [
                "//evil.example/app", "https://evil.example/app", "https://web.example.com.evil.example/app",
                "https://web.example.com@evil.example/app",
                "https://web.example.com\\@evil.example/app", "https:/\\evil.example", "javascript:alert(1)", "https://web.example.com:8443/app",
                "https://web.example.com/application", "https://web.example.com/app/../admin", "https://web.example.com/app%2f..%2fadmin",
                "https://wеb.example.com/app", "http://web.example.com/app", "data:text/html,hi", "https://web.example.com/ap",
                " https://web.example.com/app", "https://web.example.com/app\n",
            ]
            #expect(hostile.count >= 15)
            for goto in hostile {
                let refused = try await Self.redeem(rig, code: code, goto: goto)
                #expect(refused.status == 400, "\(goto.debugDescription)")
                #expect(refused.headers["location"] == nil, "\(goto.debugDescription)")
                #expect(refused.headers["set-cookie"] == nil)
            }
            let issuedWithHostile = try await Self.issue(rig, token: token, goto: "https://evil.example/app")
            #expect(issuedWithHostile.response.status == 400)
            let fine = try await Self.redeem(rig, code: code, goto: CompanionRig.webApp + "/home")
            #expect(fine.status == 303, "the refused attempts did not use the code up")
        }
    }

    @Test("200 concurrent confirmations of one code over HTTP, on two instances: exactly one redirect", arguments: StoreKind.available)
    func concurrentRedeem(kind: StoreKind) async throws {
        try await kind.with { store, second in
            let rig = try await CompanionRig.start(store: store, returns: .tokens)
            // A second server instance on the same store (PostgreSQL: its own pool), behind the same "load balancer".
            let other = try await Companion.start(
                CompanionRig.configuration(issuer: rig.emulator.issuer, returns: .tokens), store: try await second(),
                logger: Logger(label: "second") { _ in SwiftLogNoOpLogHandler() }
            )
            do {
                let token = try await rig.accessToken()
                let code = try #require(try await Self.issue(rig, token: token).json["handoffotp"] as? String)
                // Each instance's page offers the same form; 200 users tap Continue at once, half on each instance.
                let fields = [("handoffotp", code), ("goto", CompanionRig.webApp)]
                let targets = [
                    (rig.url("/handoff/redeem"), rig.origin),
                    (URL(string: other.baseURL.absoluteString + "/handoff/redeem")!, CompanionRig.origin(of: other)),
                ]
                let transport = rig.transport
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<200 {
                        let (target, origin) = targets[index % 2]
                        group.addTask { try await transport.send(.form(target, fields, headers: ["Origin": origin])).status }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.filter { $0 == 303 }.count == 1)
                #expect(statuses.filter { $0 == 400 }.count == 199)
                await other.stop()
                await rig.stop()
            } catch {
                await other.stop()
                await rig.stop()
                throw error
            }
        }
    }

    @Test("the captured log of exchange, hand-off, bridge and completion holds no token, code, state, session or secret")
    func logsHoldNoSecrets() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            var secrets: [String] = ["backend-secret"]
            let started = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
            secrets.append(try #require(started.json["state"] as? String))
            let authorizationURL = try #require(started.json["authorization_url"] as? String)
            guard case .redirect(let callback) = try await rig.signIn(authorizationURL) else { return }
            let callbackItems = URLComponents(string: callback)?.queryItems ?? []
            secrets += callbackItems.filter { $0.name == "code" }.compactMap(\.value)
            let exchanged = try await rig.post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
            let token = try #require(exchanged.json["access_token"] as? String)
            secrets += [token, try #require(exchanged.json["id_token"] as? String)]
            if let refresh = exchanged.json["refresh_token"] as? String { secrets.append(refresh) }
            let issued = try await Self.issue(rig, token: token, goto: CompanionRig.webApp)
            let code = try #require(issued.json["handoffotp"] as? String)
            secrets.append(code)
            let redeemURL = try #require(issued.json["redeem_url"] as? String)
            let landing = try await rig.followRedeem(try #require(URL(string: redeemURL)))
            let cookie = try #require(landing.headers["set-cookie"])
            secrets.append(String(try #require(cookie.split(separator: ";").first).split(separator: "=")[1]))
            _ = try await Self.redeem(rig, code: code, goto: CompanionRig.webApp)
            _ = try await Self.issue(rig, token: "forged-access-token-0123456789")

            let bridge = try await rig.post(
                "/bridge/start", ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789", "response_mode": "query"])
            secrets.append("webview-session-0123456789")
            let bridgeURL = try #require(bridge.json["authorization_url"] as? String)
            if case .redirect(let location) = try await rig.signIn(bridgeURL) {
                secrets += (URLComponents(string: location)?.queryItems ?? []).filter { ["code", "state"].contains($0.name) }.compactMap(\.value)
                let answer = try await rig.get(try #require(URL(string: location)))
                let link = try #require(answer.headers["location"])
                let bridgeCode = try #require(URLComponents(string: link)?.queryItems?.first?.value)
                secrets.append(bridgeCode)
                _ = try await rig.post("/bridge/redeem", ["handoffotp": bridgeCode, "binding": "webview-session-0123456789"])
                _ = try await rig.get(try #require(URL(string: location)))
            }
            let log = rig.log.text
            #expect(log.contains("hand-off code redeemed"), "the log was captured")
            #expect(log.contains("/handoff/redeem"))
            for secret in secrets where secret.count >= 8 {
                #expect(!log.contains(secret), "a secret (\(secret.prefix(4))…) is in the log")
            }
        }
    }
}
