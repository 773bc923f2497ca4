import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback

/// The companion's wire format, which the app's client and the server share: the names on the wire are
/// the documented snake_case ones, and what one side writes the other reads back unchanged.
@Suite("Companion API: the wire format")
struct CompanionAPITests {
    static func object(_ value: some Encodable) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: JSONEncoder().encode(value)) as? [String: Any])
    }

    @Test("requests carry the wire names; absent options are left out rather than sent as null")
    func requestNames() throws {
        let start = CompanionAPI.ExchangeStart(
            redirectURI: "com.example.app:/cb", binding: "b", acrValues: ["urn:a"], loginHint: "h", uiLocales: ["ar"], parameters: ["prompt": "login"]
        )
        #expect(Set(try Self.object(start).keys) == ["redirect_uri", "binding", "acr_values", "login_hint", "ui_locales", "parameters"])
        #expect(Set(try Self.object(CompanionAPI.ExchangeStart(redirectURI: "x", binding: "b")).keys) == ["redirect_uri", "binding"])
        #expect(
            Set(try Self.object(CompanionAPI.CompletionStart(flowID: "f", responseMode: .formPost)).keys) == ["flow_id", "response_mode"])
        #expect(try Self.object(CompanionAPI.CompletionStart(flowID: "f", responseMode: .formPost))["response_mode"] as? String == "form_post")
        #expect(
            Set(try Self.object(CompanionAPI.Exchange(code: "c", codeVerifier: "v", redirectURI: "r", nonce: "n")).keys) == [
                "code", "code_verifier", "redirect_uri", "nonce",
            ])
        #expect(Set(try Self.object(CompanionAPI.Exchange(callbackURL: "u", binding: "b")).keys) == ["callback_url", "binding"])
        #expect(Set(try Self.object(CompanionAPI.CompletionStatus(flowID: "f", wait: 5)).keys) == ["flow_id", "wait"])
        #expect(
            Set(try Self.object(CompanionAPI.PermissionRequest(appCallbackURI: "u", statementID: "s")).keys) == ["app_callback_uri", "statement_id"])
    }

    @Test("a tokens answer and a session answer read back as they were written; an unknown status survives")
    func answers() throws {
        let tokens = TokenResponse(accessToken: "at", tokenType: "DPoP", expiresIn: 300, refreshToken: "rt", idToken: "id")
        let written = CompanionAPI.SignInAnswer(subject: "alice", acr: "urn:x", session: nil, tokens: tokens, expiresIn: 300)
        let read = try JSONDecoder().decode(CompanionAPI.SignInAnswer.self, from: JSONEncoder().encode(written))
        #expect(read == written)
        #expect(read.tokens == tokens)
        #expect(Set(try Self.object(written).keys) == ["sub", "acr", "expires_in", "access_token", "token_type", "id_token", "refresh_token"])

        let session = try JSONDecoder().decode(
            CompanionAPI.SignInAnswer.self, from: Data(#"{"sub":"bob","session":"s","expires_in":60,"status":"completed"}"#.utf8))
        #expect(session.status == .completed && session.session == "s" && session.tokens == nil)

        let later = try JSONDecoder().decode(CompanionAPI.SignInAnswer.self, from: Data(#"{"status":"queued"}"#.utf8))
        #expect(later.status?.rawValue == "queued")

        // RFC 6749 §5.1 requires token_type: an access token without one is not taken for a Bearer token.
        let untyped = try JSONDecoder().decode(CompanionAPI.SignInAnswer.self, from: Data(#"{"sub":"bob","access_token":"at"}"#.utf8))
        #expect(untyped.accessToken == "at" && untyped.tokens == nil)
    }

    @Test(
        "descriptions, dumps and mirrors never show a secret: bindings, flow IDs, codes, verifiers, nonces, sessions, tokens and one-time values")
    func descriptionsRedact() {
        let secret = "SECRET-7f3a9c1e2b4d6f80"
        let url = "https://id.example.test/authorize?request_uri=\(secret)&state=\(secret)"
        let bodies: [any CustomStringConvertible] = [
            CompanionAPI.ExchangeStart(redirectURI: "com.example.app:/cb", binding: secret, loginHint: secret),
            CompanionAPI.CompletionStart(flowID: secret, loginHint: secret),
            CompanionAPI.BridgeStart(scheme: "myapp", path: "/home", binding: secret),
            CompanionAPI.AuthorizationStarted(authorizationURL: url, state: secret, returnURL: "com.example.app:/done?result=\(secret)"),
            CompanionAPI.Exchange(callbackURL: "com.example.app:/cb?code=\(secret)&state=\(secret)", binding: secret),
            CompanionAPI.Exchange(code: secret, codeVerifier: secret, redirectURI: "com.example.app:/cb", nonce: secret),
            CompanionAPI.CompletionStatus(flowID: secret, result: secret),
            CompanionAPI.SignInAnswer(
                subject: "alice", acr: nil, session: secret,
                tokens: TokenResponse(accessToken: secret, tokenType: "DPoP", expiresIn: 60, refreshToken: secret, idToken: secret), expiresIn: 60),
            CompanionAPI.BridgeRedeem(handoffotp: secret, binding: secret),
            CompanionAPI.PermissionGranted(permissionToken: secret),
            CompanionAPI.HandOffIssued(handoffotp: secret, expiresIn: 60, redeemURL: "https://web.example.com/redeem?handoffotp=\(secret)"),
        ]
        for body in bodies {
            var dumped = ""
            dump(body, to: &dumped)
            let mirrored = Mirror(reflecting: body).children.map { "\($0.label ?? ""): \($0.value)" }.joined()
            for shown in [body.description, String(describing: body), String(reflecting: body), "\(body)", dumped, mirrored] {
                #expect(!shown.contains("SECRET"), "\(type(of: body)): \(shown)")
            }
        }
        // What is not secret is still there to read.
        #expect(bodies[2].description.contains("/home") && bodies[7].description.contains("alice") && bodies[7].description.contains("DPoP"))
    }

    @Test("a route's URL keeps a path prefix of the companion's base URL")
    func routeURLs() {
        let base = URL(string: "https://example.com/auth")!
        #expect(CompanionAPI.url(CompanionAPI.Path.exchangeStart, below: base).absoluteString == "https://example.com/auth/exchange/start")
        #expect(
            CompanionAPI.url(CompanionAPI.Path.handOff, below: URL(string: "https://example.com")!).absoluteString == "https://example.com/handoff")
    }
}
