import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The bankid-no profile: hand-off to the BankID app, the https `app_callback_uri` allowed only with a
/// permission token registered upfront, and the sign-in continuing only in the browser that started it.
@Suite("Emulator: bankid-no profile")
struct EmulatorBankIDNorwayTests {
    static let callback = "https://app.example.com/bankid-return"

    static func withEmulator(_ body: (Emulator) async throws -> Void) async throws {
        var configuration = EmulatorConfiguration.defaults
        for index in configuration.clients.indices where configuration.clients[index].clientID == "backend" {
            configuration.clients[index].appReturnURLs = [callback]
        }
        try await EmulatorHarness.withEmulator(profile: .bankIDNorway, configuration: configuration, body)
    }

    /// The merchant's confidential client: it registers permissions and, here, also signs in (in an app
    /// its backend would redeem the code).
    static func merchant(_ emulator: Emulator) -> OIDCClient {
        EmulatorHarness.client(emulator, clientID: "backend", authentication: .clientSecretBasic(secret: "backend-secret"))
    }

    /// The merchant backend's calls, in the shape BankID documents for upfront permissions: a
    /// client-credentials token with scope `openid permissions/client`, the biometrics server's discovery
    /// document, and the permission posted as JSON to its `permissions_endpoint` with that token.
    /// A permission as BankID's examples post it (`Permission.cs`): type, iat, exp, and the statement with
    /// its own `nonce` and `id`.
    static func registration(callback: String, issuedAt: Date = Date(), statement: JSONValue? = nil) -> JSONValue {
        let iat = issuedAt.timeIntervalSince1970.rounded(.down)
        let statement =
            statement
            ?? .object([
                "nonce": .string(UUID().uuidString), "id": .string(UUID().uuidString),
                "payments": .array([.object(["paymentId": .string("1"), "amount": .string("10.00")])]),
            ])
        return .object([
            "type": .string("payment.v1"), "iat": .number(iat), "exp": .number(iat + 600),
            "permission": .string(Base64URL.encode(Data(statement.description.utf8))), "app_callback_uri": .string(callback),
        ])
    }

    static func permission(
        _ emulator: Emulator, secret: String = "backend-secret", callback: String = callback, body: JSONValue? = nil
    ) async throws -> (status: Int, token: String?) {
        let transport = URLSessionTransport()
        let credentials = Data("backend:\(secret)".utf8).base64EncodedString()
        let tokenAnswer = try await transport.send(
            .form(
                try #require(URL(string: emulator.issuer + "/token")),
                [("grant_type", "client_credentials"), ("scope", "openid permissions/client")],
                headers: ["Authorization": "Basic \(credentials)"]
            ))
        guard case .object(let tokens)? = try? JSONDecoder().decode(JSONValue.self, from: tokenAnswer.body),
            case .string(let accessToken)? = tokens["access_token"]
        else {
            return (tokenAnswer.status, nil)
        }
        let discovery = try await transport.send(
            HTTPRequest(method: .get, url: try #require(URL(string: emulator.issuer + "/biometrics/.well-known/openid-configuration"))))
        guard case .object(let document)? = try? JSONDecoder().decode(JSONValue.self, from: discovery.body),
            case .string(let endpoint)? = document["permissions_endpoint"]
        else {
            return (discovery.status, nil)
        }
        let response = try await transport.send(
            HTTPRequest(
                method: .post, url: try #require(URL(string: endpoint)),
                headers: ["Authorization": "Bearer \(accessToken)", "Content-Type": "application/json"],
                body: Data((body ?? Self.registration(callback: callback)).description.utf8)
            ))
        guard case .object(let body)? = try? JSONDecoder().decode(JSONValue.self, from: response.body),
            case .string(let token)? = body["permissionToken"]
        else {
            return (response.status, nil)
        }
        return (response.status, token)
    }

    static func options(acr: String? = nil, loginHint: String? = nil, callback: String? = nil, permission: String? = nil) -> AuthorizationOptions {
        var options = AuthorizationOptions(acrValues: acr.map { [$0] } ?? [], loginHint: loginHint)
        if let callback { options.extraParameters.append(("app_callback_uri", callback)) }
        if let permission { options.extraParameters.append(("permission_token", permission)) }
        return options
    }

    /// The link the browser page's script moves to once the app has answered.
    static func continueURL(_ html: String, base: String) throws -> URL {
        let marker = try #require(html.range(of: "id=\"continue\" href=\""))
        let end = try #require(html[marker.upperBound...].firstIndex(of: "\""))
        return try #require(URL(string: base + EmulatorBrowser.unescape(String(html[marker.upperBound..<end]))))
    }

    @Test("with an upfront permission: BankID app hand-off, return by the https app_callback_uri, the same browser session finishes")
    func appCallback() async throws {
        try await Self.withEmulator { emulator in
            let permission = try await Self.permission(emulator)
            #expect(permission.status == 201)
            let client = Self.merchant(emulator)
            let session = try await client.prepareAuthorization(
                Self.options(acr: BankIDNorway.bidRequest, callback: Self.callback, permission: permission.token))
            let browser = EmulatorBrowser()
            // Page script opens the app; the page itself stays, polling.
            let (link, html) = try await browser.handOff(session.authorizationURL)
            #expect(link.scheme == "bankid-no")
            let next = try await AuthenticatorApp(issuer: try #require(URL(string: emulator.issuer))).respond(to: link, with: .approve())
            #expect(next?.absoluteString == Self.callback)

            let continued = try Self.continueURL(html, base: emulator.issuer)
            // Another browser (Safari, when the app reopened the wrong one) cannot finish it.
            guard case .page(403, _) = try await EmulatorBrowser().open(continued) else {
                Issue.record("the sign-in must continue only in the browser session that started it")
                return
            }
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(continued)), session: session)
            #expect(credential.idTokenClaims?.acr == BankIDNorway.bidACR)
        }
    }

    @Test(
        "acr_values=urn:bankid:bis (or the legacy login_hint BIS) off iOS: BankID with biometrics completes in the browser with a passkey, no app switch",
        arguments: [
            (BankIDNorway.bisRequest as String?, nil as String?), (nil, "BIS"),
        ])
    func biometricsInBrowser(acr: String?, loginHint: String?) async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.options(acr: acr, loginHint: loginHint))
            let browser = EmulatorBrowser(userAgent: Self.android)
            guard case .page(200, let html) = try await browser.open(session.authorizationURL) else {
                Issue.record("BankID with biometrics must show its passkey page")
                return
            }
            let page = WebPage(url: try #require(URL(string: emulator.issuer)), html: html)
            let confirm = try #require(page.confirmForm)
            #expect(confirm.label == "Use passkey")
            #expect(!html.contains("bankid-no://"), "no app switch")
            let landing = try await browser.post(confirm.action, confirm.fields)
            let credential = try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session)
            #expect(credential.idTokenClaims?.acr == BankIDNorway.bisACR)
        }
    }

    /// Chrome on Android, where a Custom Tab uses the biometrics key itself.
    static let android =
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36"

    @Test(
        "on iOS BankID with biometrics opens the BankID app (its key is the app's), which returns by the https app_callback_uri; acr urn:bankid:bis;LOA=3"
    )
    func biometricsOnIOS() async throws {
        try await Self.withEmulator { emulator in
            let permission = try await Self.permission(emulator)
            let client = Self.merchant(emulator)
            let session = try await client.prepareAuthorization(
                Self.options(acr: BankIDNorway.bisRequest, callback: Self.callback, permission: permission.token))
            let browser = EmulatorBrowser()
            let (link, html) = try await browser.handOff(session.authorizationURL)
            #expect(link.scheme == "bankid-no" && !html.contains("Use passkey"))
            let next = try await AuthenticatorApp(issuer: try #require(URL(string: emulator.issuer))).respond(to: link, with: .approve())
            #expect(next?.absoluteString == Self.callback, "the BankID app returns by app_callback_uri after biometrics")
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(try Self.continueURL(html, base: emulator.issuer))), session: session)
            #expect(credential.idTokenClaims?.acr == BankIDNorway.bisACR)
        }
    }

    @Test("without app_callback_uri no permission is needed; the app returns nowhere and the user comes back by hand")
    func withoutCallback() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.options())
            let browser = EmulatorBrowser()
            let (link, html) = try await browser.handOff(session.authorizationURL)
            #expect(try await AuthenticatorApp(issuer: try #require(URL(string: emulator.issuer))).respond(to: link, with: .approve()) == nil)
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(try Self.continueURL(html, base: emulator.issuer))), session: session
            )
            #expect(credential.idTokenClaims?.acr == BankIDNorway.bidACR)
        }
    }

    @Test(
        "app_callback_uri refused: without a permission, with a used or forged one, or when not https",
        arguments: [
            ("no permission", "https://app.example.com/bankid-return", false),
            ("forged permission", "https://app.example.com/bankid-return", true),
            ("custom scheme", "com.example.app:/bankid-return", true),
        ])
    func refused(reason: String, callback: String, withForgedOrValidPermission: Bool) async throws {
        try await Self.withEmulator { emulator in
            let client = Self.merchant(emulator)
            var permission: String?
            if withForgedOrValidPermission {
                permission = callback.hasPrefix("https://") ? "forged-token" : try await Self.permission(emulator).token
            }
            let session = try await client.prepareAuthorization(Self.options(callback: callback, permission: permission))
            let landing = try await EmulatorBrowser().open(session.authorizationURL)
            let error = await expectFailure("\(reason) must be refused") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session)
            }
            #expect(error?.code == .authorizationError, "\(reason)")
            #expect(error?.oauthError?.error == "invalid_request", "\(reason)")
        }
    }

    @Test(
        "a permission token is single-use and for its own app_callback_uri; only a confidential client with the right secret, and a callback registered for it, gets one"
    )
    func permissionTokens() async throws {
        try await Self.withEmulator { emulator in
            let other = try #require(try await Self.permission(emulator).token)
            let merchant = Self.merchant(emulator)
            let elsewhere = try await merchant.prepareAuthorization(Self.options(callback: "https://app.example.com/other", permission: other))
            let refused = try await EmulatorBrowser().open(elsewhere.authorizationURL)
            await expectCode(.authorizationError) {
                try await merchant.completeAuthorization(try EmulatorBrowser.callback(refused), session: elsewhere)
            }
            #expect(try await Self.permission(emulator, callback: "https://evil.example/return").status == 400)
            let token = try #require(try await Self.permission(emulator).token)
            let client = Self.merchant(emulator)
            let first = try await client.prepareAuthorization(Self.options(callback: Self.callback, permission: token))
            _ = try await EmulatorBrowser().handOff(first.authorizationURL)  // the first use is accepted
            let second = try await client.prepareAuthorization(Self.options(callback: Self.callback, permission: token))
            let landing = try await EmulatorBrowser().open(second.authorizationURL)
            await expectCode(.authorizationError) {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: second)
            }
            #expect(try await Self.permission(emulator, secret: "wrong").status == 401)
            // The body this project used to post, and registrations missing what BankID's examples carry.
            var stale = Self.registration(callback: Self.callback, issuedAt: Date().addingTimeInterval(-3600))
            if case .object(var fields) = stale {
                fields["exp"] = .number(Date().timeIntervalSince1970 - 3000)
                stale = .object(fields)
            }
            for refused: JSONValue in [
                .object(["type": .string("app_callback"), "app_callback_uri": .string(Self.callback)]), stale,
                .object([
                    "type": .string("payment.v1"), "iat": .number(Date().timeIntervalSince1970.rounded(.down)),
                    "exp": .number(Date().timeIntervalSince1970.rounded(.down) + 600), "permission": .string("not base64url JSON"),
                ]),
                // One statement for every user, without the nonce and id each permission carries.
                Self.registration(callback: Self.callback, statement: .object(["payments": .array([.object(["paymentId": .string("1")])])])),
            ] {
                #expect(try await Self.permission(emulator, body: refused).status == 400, "\(refused)")
            }
        }
    }

    @Test("the user declines in the BankID app: access_denied")
    func decline() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.options())
            let browser = EmulatorBrowser()
            let (link, html) = try await browser.handOff(session.authorizationURL)
            _ = try await AuthenticatorApp(issuer: try #require(URL(string: emulator.issuer))).respond(to: link, with: .decline)
            let landing = try await browser.open(try Self.continueURL(html, base: emulator.issuer))
            let error = await expectFailure("a declined sign-in must not complete") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session)
            }
            #expect(error?.oauthError?.error == "access_denied")
        }
    }
}
