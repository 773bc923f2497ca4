import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// The companion's routes over real HTTP against the emulator: backend exchange, permission proxy,
/// native-callback bridge and backend completion.
@Suite("Companion routes")
struct CompanionRoutesTests {
    @Test("backend exchange: the server starts the sign-in, redeems the app's callback once and returns a session")
    func exchangeSession() async throws {
        try await CompanionRig.with { rig in
            let started = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
            #expect(started.response.status == 200)
            let authorizationURL = try #require(started.json["authorization_url"] as? String)
            #expect(authorizationURL.contains("request_uri="), "pushed with PAR, so the verifier never leaves the server")
            guard case .redirect(let callback) = try await rig.signIn(authorizationURL) else {
                Issue.record("the provider did not redirect to the app")
                return
            }
            let exchanged = try await rig.post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
            #expect(exchanged.response.status == 200)
            #expect(exchanged.json["sub"] as? String == "9b1f7c2e-alice")
            #expect(exchanged.json["access_token"] == nil, "session mode keeps the provider's tokens on the server")
            let session = try #require(exchanged.json["session"] as? String)
            let whoami = try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(session)"])
            #expect(whoami.status == 200)
            #expect(whoami.text.contains("9b1f7c2e-alice"))

            let replay = try await rig.post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
            #expect(replay.response.status == 400)
            #expect(replay.json["error"] as? String == "invalid_state")
        }
    }

    @Test("backend exchange in tokens mode returns the provider's tokens")
    func exchangeTokens() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            #expect(!token.isEmpty)
        }
    }

    @Test("backend exchange, app-started: the app hands over code, verifier and nonce; the server redeems once and checks the nonce")
    func exchangeAppStarted() async throws {
        try await CompanionRig.with { rig in
            // The app runs the authorization with the server's client ID and no secret, checks state itself.
            let app = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "backend", redirectURI: URL(string: CompanionRig.appRedirect)!, pushedAuthorization: .never),
                provider: .discovery(issuer: rig.emulator.issuer), transport: rig.transport
            )
            let session = try await app.prepareAuthorization()
            guard case .redirect(let callback) = try await rig.signIn(session.authorizationURL.absoluteString) else {
                Issue.record("the provider did not redirect to the app")
                return
            }
            let parameters = try #require(URLComponents(string: callback)?.queryItems)
            #expect(parameters.first { $0.name == "state" }?.value == session.state)
            let code = try #require(parameters.first { $0.name == "code" }?.value)
            let fields: [String: Any] = [
                "code": code, "code_verifier": session.pkce.verifier, "redirect_uri": CompanionRig.appRedirect, "nonce": session.nonce,
            ]

            var wrongNonce = fields
            wrongNonce["nonce"] = String(repeating: "n", count: 32)
            let refused = try await rig.post("/exchange", wrongNonce)
            #expect(refused.response.status == 502, "an ID token for another request's nonce is not accepted")
            #expect((refused.json["error_description"] as? String)?.contains("nonce") == true)

            // The refused attempt used the code up at the provider (its tokens are revoked): start again.
            let second = try await app.prepareAuthorization()
            guard case .redirect(let secondCallback) = try await rig.signIn(second.authorizationURL.absoluteString) else {
                Issue.record("the provider did not redirect to the app")
                return
            }
            let secondCode = try #require(URLComponents(string: secondCallback)?.queryItems?.first { $0.name == "code" }?.value)
            let good: [String: Any] = [
                "code": secondCode, "code_verifier": second.pkce.verifier, "redirect_uri": CompanionRig.appRedirect, "nonce": second.nonce,
            ]
            let exchanged = try await rig.post("/exchange", good)
            #expect(exchanged.response.status == 200)
            #expect(exchanged.json["sub"] as? String == "9b1f7c2e-alice")
            #expect(exchanged.json["session"] is String)

            let replay = try await rig.post("/exchange", good)
            #expect(replay.response.status == 400)
            #expect(replay.json["error"] as? String == "invalid_grant")

            var wrongVerifier = good
            wrongVerifier["code_verifier"] = "short"
            #expect(try await rig.post("/exchange", wrongVerifier).json["error"] as? String == "invalid_request")
            var foreign = good
            foreign["redirect_uri"] = "https://evil.example/cb"
            #expect(try await rig.post("/exchange", foreign).json["error"] as? String == "not_allowed")
            var both = good
            both["callback_url"] = secondCallback
            #expect(try await rig.post("/exchange", both).json["error"] as? String == "invalid_request")
            #expect(!rig.log.text.contains(secondCode) && !rig.log.text.contains(second.pkce.verifier))
        }
    }

    @Test("bad bodies: malformed JSON, a missing field, an oversized body and a foreign redirect_uri are refused with typed errors")
    func badBodies() async throws {
        try await CompanionRig.with { rig in
            let malformed = try await rig.post("/exchange/start", body: Data("{\"redirect_uri\":".utf8))
            #expect(malformed.response.status == 400)
            #expect(malformed.json["error"] as? String == "invalid_request")
            let missing = try await rig.post("/exchange/start", ["login_hint": "x"])
            #expect(missing.response.status == 400)
            #expect((missing.json["error_description"] as? String)?.contains("redirect_uri") == true)
            let huge = try await rig.post("/exchange", ["callback_url": String(repeating: "a", count: 40_000)])
            #expect(huge.response.status == 413)
            let foreign = try await rig.post("/exchange/start", ["redirect_uri": "https://evil.example/cb", "binding": CompanionRig.binding])
            #expect(foreign.response.status == 400)
            #expect(foreign.json["error"] as? String == "not_allowed")
            let notJSON = try await rig.post("/bridge/redeem", body: Data([0xFF, 0xFE, 0x00]))
            #expect(notJSON.response.status == 400)
        }
    }

    @Test(
        "permission proxy: each permission is one statement the backend registered, with a fresh nonce and id (which the emulator requires), taken once by the app; the app cannot register or choose one"
    )
    func permission() async throws {
        try await CompanionRig.with(profile: .bankIDNorway) { rig in
            let backend = ["Authorization": "Bearer \(CompanionRig.backendToken)"]
            let order: [String: Any] = ["statement": ["payments": [["paymentId": "order-1", "amount": "100.00", "currency": "NOK"]]]]
            let first = try await rig.post("/permission/statement", order, headers: backend)
            let second = try await rig.post("/permission/statement", order, headers: backend)
            #expect(first.response.status == 201 && second.response.status == 201)
            let statementID = try #require(first.json["statement_id"] as? String)
            // The same order twice: two statements, each with its own nonce and id.
            #expect(first.json["nonce"] as? String != second.json["nonce"] as? String)
            #expect(first.json["id"] as? String != second.json["id"] as? String)
            #expect((first.json["nonce"] as? String)?.count == 43 && first.json["expires_in"] as? Int == 600)
            // A backend's own id is kept.
            let named = try await rig.post(
                "/permission/statement", ["statement": ["id": "basket-7", "payments": [[String: String]]()]], headers: backend)
            #expect(named.json["id"] as? String == "basket-7")

            let body = ["app_callback_uri": "https://app.example.com/appswitch", "statement_id": statementID]
            let granted = try await rig.post("/permission", body)
            #expect(granted.response.status == 201, "\(granted.json)")
            #expect((granted.json["permission_token"] as? String)?.isEmpty == false)
            #expect((granted.json["binding_message"] as? String)?.isEmpty == false)
            let again = try await rig.post("/permission", body)
            #expect(again.response.status == 400 && again.json["error"] as? String == "invalid_grant", "a statement works once")
            let unknown = try await rig.post(
                "/permission", ["app_callback_uri": "https://app.example.com/appswitch", "statement_id": "made-up-0123456789abcdef"])
            #expect(unknown.response.status == 400)

            // Only the backend registers: no token, another token, or a statement that is no object.
            #expect(try await rig.post("/permission/statement", order).response.status == 401)
            #expect(try await rig.post("/permission/statement", order, headers: ["Authorization": "Bearer not-the-token"]).response.status == 401)
            #expect(try await rig.post("/permission/statement", ["statement": "pay me"], headers: backend).response.status == 400)
            // A statement or type in the app's body is not the app's to set: the body is refused, not merged.
            let chosen = try await rig.post(
                "/permission",
                ["app_callback_uri": "https://app.example.com/appswitch", "statement_id": statementID, "type": "payment.v1", "permission": "e30"])
            #expect(chosen.response.status == 400, "\(chosen.json)")
            let fresh = try #require(try await rig.post("/permission/statement", order, headers: backend).json["statement_id"] as? String)
            let refused = try await rig.post("/permission", ["app_callback_uri": "https://evil.example/appswitch", "statement_id": fresh])
            #expect(refused.response.status == 400)
            #expect(refused.json["error"] as? String == "not_allowed")
        }
    }

    @Test("a configuration with one statement for every permission is refused by name")
    func fixedStatementRefused() throws {
        let json =
            #"{"server": "https://app.bankid.no", "appCallbackURIs": ["https://app.example.com/appswitch"], "type": "payment.v1", "statement": {"id": "1"}}"#
        let error = #expect(throws: DecodingError.self) { try JSONDecoder().decode(ServerConfiguration.Permission.self, from: Data(json.utf8)) }
        #expect("\(String(describing: error))".contains("POST /permission/statement"))
    }

    @Test(
        "forwarded idp_params carry MitID's app switch alone (no level of assurance, hint or text of the caller's); idp_values set by the server may be repeated, not changed"
    )
    func forwardedIDPParams() async throws {
        try await CompanionRig.with(change: {
            $0.provider?.forwardedParameters = ["idp_params"]
            $0.provider?.authorizationParameters = ["idp_values": "mitid"]
        }) { rig in
            func start(_ parameters: [String: String]) async throws -> (response: HTTPResponse, json: [String: Any]) {
                try await rig.post(
                    "/completion/start", ["flow_id": Base64URL.encode(SystemEntropy().randomBytes(count: 32)), "parameters": parameters])
            }
            let appSwitch = #"{"mitid":{"enable_app_switch":true,"app_switch_os":"ios","app_switch_url":"https://app.example.com/appswitch"}}"#
            let accepted = try await start(["idp_params": appSwitch, "idp_values": "mitid"])
            #expect(accepted.response.status == 200, "\(accepted.json)")
            for refused in [
                #"{"mitid":{"loa_value":"low"}}"#, #"{"mitid":{"enable_app_switch":true,"reference_text":"UmVmdW5k"}}"#,
                #"{"mitid":{"cpr_hint":"0101011234"}}"#, #"{"nemid":{}}"#, #"{"mitid":{"app_switch_url":"javascript:alert(1)"}}"#, "not json",
            ] {
                let answer = try await start(["idp_params": refused])
                #expect(answer.response.status == 400 && answer.json["error"] as? String == "invalid_request", "\(refused): \(answer.json)")
            }
            let otherProvider = try await start(["idp_values": "nemid"])
            #expect(otherProvider.response.status == 400 && otherProvider.json["error"] as? String == "not_allowed")
        }
    }

    @Test("a provider's binding message reaches the app without control or bidirectional-formatting characters, at most 256 bytes")
    func displayableBindingMessage() {
        #expect(CompanionService.displayable("Pay 100 NOK\u{202E}KON 001\u{0007}\n") == "Pay 100 NOKKON 001")
        let long = CompanionService.displayable(String(repeating: "ø", count: 200))
        #expect(long.utf8.count <= 256 && long.count == 128, "cut at a character, by bytes")
    }

    /// Starts a bridge sign-in and returns the provider's landing.
    static func bridge(_ rig: CompanionRig, mode: String, binding: String = "webview-session-0123456789") async throws -> EmulatorBrowser.Landing {
        let started = try await rig.post("/bridge/start", ["scheme": "myapp", "path": "/home", "binding": binding, "response_mode": mode])
        let url = try #require(started.json["authorization_url"] as? String, "\(started.response.status) \(started.json)")
        return try await rig.signIn(url)
    }

    /// The deep link the bridge answers with.
    static func deepLink(_ response: HTTPResponse) throws -> URLComponents {
        #expect(response.status == 302)
        let location = try #require(response.headers["location"])
        return try #require(URLComponents(string: location))
    }

    @Test("bridge, code in the query: the browser goes to myapp://oauth/home with a one-time code, redeemed once with its binding")
    func bridgeQuery() async throws {
        try await CompanionRig.with { rig in
            guard case .redirect(let location) = try await Self.bridge(rig, mode: "query") else {
                Issue.record("no redirect to the bridge")
                return
            }
            let answer = try await rig.get(try #require(URL(string: location)))
            let link = try Self.deepLink(answer)
            #expect(link.scheme == "myapp")
            #expect(link.host == "oauth")
            #expect(link.path == "/home")
            #expect(link.queryItems?.map(\.name) == ["handoffotp"], "a one-time code only, never a token")
            let code = try #require(link.queryItems?.first?.value)

            let wrongBinding = try await rig.post("/bridge/redeem", ["handoffotp": code, "binding": "another-webview-session-000"])
            #expect(wrongBinding.response.status == 400)
            #expect(wrongBinding.json["error"] as? String == "invalid_grant")
            let used = try await rig.post("/bridge/redeem", ["handoffotp": code, "binding": "webview-session-0123456789"])
            #expect(used.response.status == 400, "a code presented with a foreign binding is used up")

            guard case .redirect(let second) = try await Self.bridge(rig, mode: "query") else { return }
            let secondURL = try #require(URL(string: second))
            let secondLink = try Self.deepLink(try await rig.get(secondURL))
            let code2 = try #require(secondLink.queryItems?.first?.value)
            let redeemed = try await rig.post("/bridge/redeem", ["handoffotp": code2, "binding": "webview-session-0123456789"])
            #expect(redeemed.response.status == 200)
            #expect(redeemed.json["sub"] as? String == "9b1f7c2e-alice")
            #expect(redeemed.json["session"] is String)
            let again = try await rig.post("/bridge/redeem", ["handoffotp": code2, "binding": "webview-session-0123456789"])
            #expect(again.response.status == 400)
        }
    }

    @Test("bridge, code in the fragment: a page forwards the fragment, then the same deep link")
    func bridgeFragment() async throws {
        try await CompanionRig.with { rig in
            guard case .redirect(let location) = try await Self.bridge(rig, mode: "fragment") else {
                Issue.record("no redirect to the bridge")
                return
            }
            let target = try #require(URLComponents(string: location))
            let fragment = try #require(target.percentEncodedFragment)
            // A browser does not send the fragment: the server sees the bare path and answers with the page.
            let page = try await rig.get(rig.url("/bridge/callback"))
            #expect(page.status == 200)
            #expect(page.text.contains("action=\"\(rig.companion.baseURL.absoluteString)/bridge/fragment\""))
            #expect(page.text.contains("window.location.hash"))
            // What the page's script posts.
            let forwarded = try await rig.transport.send(.form(rig.url("/bridge/fragment"), [("fragment", fragment)]))
            let link = try Self.deepLink(forwarded)
            let code = try #require(link.queryItems?.first?.value)
            let redeemed = try await rig.post("/bridge/redeem", ["handoffotp": code, "binding": "webview-session-0123456789"])
            #expect(redeemed.json["sub"] as? String == "9b1f7c2e-alice")
        }
    }

    @Test("bridge, form_post: the provider's auto-submitting form posts to the bridge, then the same deep link")
    func bridgeFormPost() async throws {
        try await CompanionRig.with { rig in
            guard case .page(200, let html) = try await Self.bridge(rig, mode: "form_post"), let post = EmulatorBrowser.formPost(html) else {
                Issue.record("no form_post page")
                return
            }
            #expect(post.action.path == "/bridge/callback")
            let answer = try await rig.transport.send(
                HTTPRequest(
                    method: .post, url: rig.url("/bridge/callback"), headers: ["Content-Type": "application/x-www-form-urlencoded"], body: post.body))
            let answerLink = try Self.deepLink(answer)
            let code = try #require(answerLink.queryItems?.first?.value)
            let redeemed = try await rig.post("/bridge/redeem", ["handoffotp": code, "binding": "webview-session-0123456789"])
            #expect(redeemed.json["sub"] as? String == "9b1f7c2e-alice")
        }
    }

    @Test("bridge: a scheme off the allow-list, an unsafe path, a replayed answer and a forged state are refused without a redirect")
    func bridgeRefusals() async throws {
        try await CompanionRig.with { rig in
            for scheme in ["evil", "https", "javascript"] {
                let refused = try await rig.post("/bridge/start", ["scheme": scheme, "path": "/home", "binding": "webview-session-0123456789"])
                #expect(refused.json["error"] as? String == "not_allowed", "scheme \(scheme)")
            }
            for path in ["home", "/../x", "//evil.example", "/a?b=c", "/a#b"] {
                let refused = try await rig.post("/bridge/start", ["scheme": "myapp", "path": path, "binding": "webview-session-0123456789"])
                #expect(refused.response.status == 400, "path \(path)")
            }
            guard case .redirect(let location) = try await Self.bridge(rig, mode: "query") else { return }
            let first = try await rig.get(try #require(URL(string: location)))
            #expect(first.status == 302)
            let replay = try await rig.get(try #require(URL(string: location)))
            #expect(replay.status == 400)
            #expect(replay.headers["location"] == nil)
            #expect(replay.text.contains("already used"))
            var forged = try #require(URLComponents(string: location))
            forged.queryItems = forged.queryItems?.map {
                $0.name == "state" ? URLQueryItem(name: "state", value: "forged-state-0123456789abcdef") : $0
            }
            let forgedAnswer = try await rig.get(try #require(forged.url))
            #expect(forgedAnswer.status == 400)
            #expect(forgedAnswer.headers["location"] == nil)
        }
    }

    @Test("backend completion: the final page offers the app link and the app's status request gets the result once")
    func completion() async throws {
        try await CompanionRig.with { rig in
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 16))
            let started = try await rig.post("/completion/start", ["flow_id": flowID])
            let url = try #require(started.json["authorization_url"] as? String)
            let duplicate = try await rig.post("/completion/start", ["flow_id": flowID])
            #expect(duplicate.response.status == 400, "a flow ID is registered once")

            let pending = try await rig.post("/completion/status", ["flow_id": flowID, "wait": 0.2])
            #expect(pending.response.status == 202)
            #expect(pending.json["status"] as? String == "pending")

            // The app waits while the user signs in in the browser; the wait ends as soon as the provider
            // answers, and is long enough for a loaded machine.
            async let waiting = rig.post("/completion/status", ["flow_id": flowID, "wait": 30])
            guard case .redirect(let location) = try await rig.signIn(url) else {
                Issue.record("no redirect to the server")
                return
            }
            let page = try await rig.get(try #require(URL(string: location)))
            #expect(page.status == 200)
            #expect(page.text.contains("id=\"return\" href=\"\(CompanionRig.appLink)?result="))
            // The waiting request learns the provider answered, but not who signed in: that needs the link's value.
            let woken = try await waiting
            #expect(woken.response.status == 202)
            #expect(woken.json["status"] as? String == "awaiting_return")
            #expect(woken.json["sub"] == nil && woken.json["session"] == nil)
            let link = try #require(WebPage(url: rig.url("/complete"), html: page.text).returnLink)
            let returned = try #require(CompanionAuthorization.returnValue(in: link))
            let result = try await rig.post("/completion/status", ["flow_id": flowID, "result": returned, "wait": 0])
            #expect(result.response.status == 200)
            #expect(result.json["status"] as? String == "completed")
            #expect(result.json["sub"] as? String == "9b1f7c2e-alice")
            let again = try await rig.post("/completion/status", ["flow_id": flowID, "result": returned, "wait": 0])
            #expect(again.response.status == 404, "answered once")
            let unknown = try await rig.post("/completion/status", ["flow_id": "unknown-flow-0123456789abc", "wait": 0])
            #expect(unknown.response.status == 404)
        }
    }

    @Test("backend completion: an answer for no started sign-in gets an error page and no redirect")
    func completionUnknownState() async throws {
        try await CompanionRig.with { rig in
            let page = try await rig.get(rig.url("/complete?error=access_denied&state=not-a-started-state-0123"))
            #expect(page.status == 400)
            #expect(page.headers["location"] == nil)
            #expect(page.text.contains("already used") || page.text.contains("unknown"))
        }
    }
}
