// The emulator needs macOS 14 (Hummingbird 2) while the package's floor is macOS 13, so these tests
// are compiled where CI runs them.
#if os(Linux)
import Foundation
import Testing
@testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting

/// The bankid-no profile: hand-off to the BankID app, the https `app_callback_uri` allowed only with a
/// permission token registered upfront, and the sign-in continuing only in the browser that started it.
@Suite("Emulator: bankid-no profile")
struct EmulatorBankIDNorwayTests {
    static let callback = "https://app.example.com/bankid-return"

    static func withEmulator(_ body: (Emulator) async throws -> Void) async throws {
        try await EmulatorProviderTests.withEmulator(profile: .bankIDNorway, body)
    }

    /// The merchant's confidential client: it registers permissions and, here, also signs in (in an app
    /// its backend would redeem the code).
    static func merchant(_ emulator: Emulator) -> OIDCClient {
        EmulatorProviderTests.client(emulator, clientID: "backend", authentication: .clientSecretBasic(secret: "backend-secret"))
    }

    /// The merchant backend's call: the confidential client registers a permission.
    static func permission(_ emulator: Emulator, secret: String = "backend-secret") async throws -> (status: Int, token: String?) {
        let credentials = Data("backend:\(secret)".utf8).base64EncodedString()
        let response = try await URLSessionTransport().send(.form(
            try #require(URL(string: emulator.issuer + "/permissions")), [("purpose", "sign-in")], headers: ["Authorization": "Basic \(credentials)"]
        ))
        guard case .object(let body)? = try? JSONDecoder().decode(JSONValue.self, from: response.body), case .string(let token)? = body["permissionToken"] else {
            return (response.status, nil)
        }
        return (response.status, token)
    }

    static func options(loginHint: String? = nil, callback: String? = nil, permission: String? = nil) -> AuthorizationOptions {
        var options = AuthorizationOptions(loginHint: loginHint)
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
            let session = try await client.prepareAuthorization(Self.options(loginHint: "BIS", callback: Self.callback, permission: permission.token))
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
            let credential = try await client.completeAuthorization(try EmulatorBrowser.callback(try await browser.open(continued)), session: session)
            #expect(credential.idTokenClaims?.acr == BankIDNorway.bisACR)
        }
    }

    @Test("without app_callback_uri no permission is needed; the app returns nowhere and the user comes back by hand")
    func withoutCallback() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorProviderTests.client(emulator)
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

    @Test("app_callback_uri refused: without a permission, with a used or forged one, or when not https", arguments: [
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

    @Test("a permission token is single-use, and only a confidential client with the right secret gets one")
    func permissionTokens() async throws {
        try await Self.withEmulator { emulator in
            let token = try #require(try await Self.permission(emulator).token)
            let client = Self.merchant(emulator)
            let first = try await client.prepareAuthorization(Self.options(callback: Self.callback, permission: token))
            _ = try await EmulatorBrowser().handOff(first.authorizationURL)  // the first use is accepted
            let second = try await client.prepareAuthorization(Self.options(callback: Self.callback, permission: token))
            let landing = try await EmulatorBrowser().open(second.authorizationURL)
            await expectCode(.authorizationError) { try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: second) }
            #expect(try await Self.permission(emulator, secret: "wrong").status == 401)
        }
    }

    @Test("the user declines in the BankID app: access_denied")
    func decline() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorProviderTests.client(emulator)
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
#endif
