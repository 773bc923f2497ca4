import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The bankid-se profile: autostart link in both forms, `redirect=null` unless the client asks for an
/// allow-listed return, and the collect hintCode progression the broker's page polls.
@Suite("Emulator: bankid-se profile")
struct EmulatorBankIDSwedenTests {
    static func withEmulator(_ variants: [String] = [], clock: any WallClock = SystemClock(), _ body: (Emulator) async throws -> Void)
        async throws
    {
        try await EmulatorHarness.withEmulator(profile: try Profile.named("bankid-se", variants: variants).get(), clock: clock, body)
    }

    static func collect(_ emulator: Emulator, _ reference: String) async throws -> [String: JSONValue] {
        let response = try await URLSessionTransport().send(
            HTTPRequest(
                method: .get, url: try #require(URL(string: emulator.issuer + "/bankid/collect?txn=" + reference))
            ))
        guard case .object(let body) = try JSONDecoder().decode(JSONValue.self, from: response.body) else { return [:] }
        return body
    }

    @Test("autostart with redirect=null: collect goes outstandingTransaction → userSign → complete, then the broker returns the code")
    func autostart() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let (link, page) = try await browser.handOff(session.authorizationURL)
            #expect(link.absoluteString.hasPrefix("bankid:///?autostarttoken="))
            #expect(link.absoluteString.hasSuffix("&redirect=null"))
            #expect(page.contains("/bankid/collect?txn="))
            let launch = try AuthenticatorApp.parse(link)
            #expect(launch.successURL == nil)

            #expect(try await Self.collect(emulator, launch.reference)["hintCode"] == .string("outstandingTransaction"))
            let transport = URLSessionTransport()
            let opened = try await transport.send(
                .form(try #require(URL(string: emulator.issuer + "/authenticator/open")), [("txn", launch.reference)]))
            #expect(opened.status == 200)
            #expect(try await Self.collect(emulator, launch.reference)["hintCode"] == .string("userSign"))
            #expect(try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .approve()) == nil)
            #expect(try await Self.collect(emulator, launch.reference)["status"] == .string("complete"))

            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))),
                session: session
            )
            #expect(credential.idTokenClaims?.acr == BankIDSweden.loa3ACR)
        }
    }

    @Test("the https app link form with the return given as login_hint=appswitch:resumeUrl: (Idura's form); the app returns there")
    func appLinkWithRedirect() async throws {
        try await Self.withEmulator(["app-link"]) { emulator in
            let client = EmulatorHarness.client(emulator)
            let request = try await ProviderPreset.bankIDSweden.request(
                pattern: .universalLink, links: .init(universalLink: URL(string: "https://app.example.com/appswitch")))
            #expect(request.options.loginHint == "appswitch:resumeUrl:https://app.example.com/appswitch")
            #expect(!request.options.extraParameters.contains { $0.0 == "bankid_redirect" })
            let session = try await client.prepareAuthorization(request.options)
            let (link, _) = try await EmulatorBrowser().handOff(session.authorizationURL)
            #expect(link.absoluteString.hasPrefix("https://app.bankid.com/?autostarttoken="))
            #expect(link.absoluteString.hasSuffix("&redirect=https%3A%2F%2Fapp.example.com%2Fappswitch"))
            let back = try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .approve())
            #expect(back?.absoluteString == "https://app.example.com/appswitch")
        }
    }

    @Test("a declined order: collect reports failed/userCancel and the broker returns access_denied; an unlisted redirect is refused")
    func declineAndUnlisted() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let (link, page) = try await browser.handOff(session.authorizationURL)
            _ = try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .decline)
            let collected = try await Self.collect(emulator, try AuthenticatorApp.parse(link).reference)
            #expect(collected["status"] == .string("failed") && collected["hintCode"] == .string("userCancel"))
            let landing = try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))
            let error = await expectFailure("a declined order must not sign in") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session)
            }
            #expect(error?.oauthError?.error == "access_denied")
            #expect(error?.oauthError?.errorDescription?.hasPrefix("userCancel") == true)

            let unlisted = try await client.prepareAuthorization(AuthorizationOptions(loginHint: "appswitch:resumeUrl:https://evil.example/"))
            let refused = try await EmulatorBrowser().open(unlisted.authorizationURL)
            await expectCode(.authorizationError) {
                try await client.completeAuthorization(try EmulatorBrowser.callback(refused), session: unlisted)
            }
        }
    }

    @Test(
        "an order the app opened but nobody answers expires: collect reports failed/expiredTransaction and the broker ends with access_denied naming it"
    )
    func expiredOrder() async throws {
        // The provider's clock moves only when the test moves it, so a slow machine cannot let the order
        // fail to start before the app opens it.
        let clock = ManualClock(Date())
        try await Self.withEmulator(["short-order"], clock: clock) { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let (link, page) = try await browser.handOff(session.authorizationURL)
            let reference = try AuthenticatorApp.parse(link).reference
            // The app opens the order and the user walks away (an unopened order fails with startFailed,
            // EmulatorOtherPhoneTests.bankIDStartFailed).
            _ = try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .ignore)
            var collected = try await Self.collect(emulator, reference)
            #expect(collected["status"] == .string("pending") && collected["hintCode"] == .string("userSign"))
            // Pending (userSign) until the 2-second lifetime passes.
            clock.advance(by: 3)
            collected = try await Self.collect(emulator, reference)
            #expect(collected["status"] == .string("failed") && collected["hintCode"] == .string("expiredTransaction"))
            let landing = try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))
            let error = await expectFailure("an expired order must not sign in") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session)
            }
            #expect(error?.oauthError?.error == "access_denied")
            #expect(error?.oauthError?.errorDescription?.hasPrefix("expiredTransaction") == true)
        }
    }

    /// Also the start and end BankID's documentation shows for this token and secret at 0 seconds
    /// (`dc69358e…cdac9bf8`).
    static let pythonVector = "dc69358e712458a66a7525beef148ae8526b1c71610eff2c16cdffb4cdac9bf8"

    @Test(
        "secure start on another phone: the page shows the animated QR code, bankid.<token>.<seconds>.<HMAC-SHA256(secret, seconds)>, new each second"
    )
    func animatedQRCode() async throws {
        // The formula, against a value computed by Python's hmac module (an independent implementation):
        // hmac.new(b"d28db9a7-4cde-429e-a983-359be676944c", b"0", hashlib.sha256).hexdigest()
        #expect(
            BankIDSwedenOptions.qrCode(
                startToken: "67df3917-fa0d-44e5-b327-edcc928297f8", startSecret: "d28db9a7-4cde-429e-a983-359be676944c", seconds: 0)
                == "bankid.67df3917-fa0d-44e5-b327-edcc928297f8.0.\(Self.pythonVector)")
        try await Self.withEmulator { emulator in
            let session = try await EmulatorHarness.client(emulator).prepareAuthorization()
            let browser = EmulatorBrowser()
            let (link, page) = try await browser.handOff(session.authorizationURL)
            #expect(page.contains(#"<code id="qr">"#) && page.contains("/bankid/qr?txn="))
            let reference = try AuthenticatorApp.parse(link).reference
            let url = try #require(URL(string: emulator.issuer + "/bankid/qr?txn=" + reference))
            // Only the browser that started the order sees its code: whoever scans it signs in there.
            #expect(try await URLSessionTransport().send(HTTPRequest(method: .get, url: url)).status == 400)
            func current() async throws -> [String] {
                let body = try await browser.fetch(url).body
                guard case .object(let answer) = try JSONDecoder().decode(JSONValue.self, from: body), case .string(let qr)? = answer["qr"] else {
                    return []
                }
                return qr.split(separator: ".").map(String.init)
            }
            let first = try await current()
            #expect(first.count == 4 && first[0] == "bankid" && first[3].count == 64)
            try await Task.sleep(for: .milliseconds(1100))
            let second = try await current()
            #expect(second[1] == first[1], "the start token stays")
            #expect(Int(second[2])! > Int(first[2])!, "the seconds grow")
            #expect(second[3] != first[3], "the code changes with them")
        }
    }
}
