import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// The authenticator app on another phone than the one signing in, and Swedish BankID's hint codes:
/// what the provider's page offers (an animated or single-use QR code, an identifier form, a number to
/// match), what the app on the other phone may do with it, and how each failure reaches the client.
@Suite("Emulator: the authenticator on another phone, and BankID's hint codes")
struct EmulatorOtherPhoneTests {
    static func url(_ emulator: Emulator, _ path: String) throws -> URL {
        try #require(URL(string: emulator.issuer + path))
    }

    /// The content of the QR code the page shows, fetched from where its script fetches it.
    static func qrCode(_ emulator: Emulator, page: String, browser: EmulatorBrowser) async throws -> String {
        let source = try #require(WebPage(url: try url(emulator, "/"), html: page).qrCodeSource)
        // Only with the session cookie of the browser that started the sign-in.
        #expect(try await URLSessionTransport().send(HTTPRequest(method: .get, url: source)).status == 400)
        let body = try await browser.fetch(source).body
        guard case .object(let answer) = try JSONDecoder().decode(JSONValue.self, from: body), case .string(let qr)? = answer["qr"] else {
            throw EmulatorBrowser.UnexpectedLanding(description: "no QR code")
        }
        return qr
    }

    /// Posts the user's identifier from the page's other-device form, in `browser` (with its cookie).
    static func sendIdentifier(_ browser: EmulatorBrowser, page: String, emulator: Emulator, identifier: String = "alice") async throws
        -> EmulatorBrowser.Landing
    {
        let form = try #require(WebPage(url: try url(emulator, "/"), html: page).otherDeviceForm)
        return try await browser.post(form.action, form.fields + [("identifier", identifier)])
    }

    static func html(_ landing: EmulatorBrowser.Landing) throws -> String {
        switch landing {
        case .page(_, let html), .handOff(_, let html): return html
        case .redirect(let location): throw EmulatorBrowser.UnexpectedLanding(description: "a redirect to \(location)")
        }
    }

    @Test("BankID on another phone: scanning the current animated code opens the order (userSign); a forged or stale code does not")
    func bankIDQRCode() async throws {
        // The provider's clock moves only when the test moves it: a code fetched is exactly as old as the
        // test says when it is scanned, however slow the machine.
        let clock = ManualClock(Date())
        try await EmulatorBankIDSwedenTests.withEmulator(clock: clock) { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let (link, page) = try await browser.handOff(session.authorizationURL)
            let reference = try AuthenticatorApp.parse(link).reference
            let app = try EmulatorUAEPassTests.app(emulator)

            let current = try await Self.qrCode(emulator, page: page, browser: browser)
            var forged = current.split(separator: ".").map(String.init)
            forged[3] = String(repeating: "0", count: 64)
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 400)) { try await app.scan(forged.joined(separator: ".")) }
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, reference)["hintCode"] == .string("outstandingTransaction"))

            // A code more than two seconds old (copied from the screen and relayed) is refused.
            clock.advance(by: 3)
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 400)) { try await app.scan(current) }
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, reference)["hintCode"] == .string("outstandingTransaction"))

            let fresh = try await Self.qrCode(emulator, page: page, browser: browser)
            #expect(try await app.scan(fresh) == reference)
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, reference)["hintCode"] == .string("userSign"))
            try await app.decide(reference: reference, .approve())
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))),
                session: session
            )
            #expect(credential.idTokenClaims?.acr == BankIDSweden.loa3ACR)
        }
    }

    @Test(
        "only the app holding a request answers it, and an approval signs in its user: answering one no app opened, or as another user, or re-opening it as another user, is refused and the request keeps waiting"
    )
    func approvalBoundToHolder() async throws {
        var configuration = EmulatorConfiguration.defaults
        configuration.users.append(
            .init(username: "mallory", password: "Other-456", subject: "5c0ffee0-mallory", name: "Mallory Example", email: "mallory@example.com"))
        try await EmulatorHarness.withEmulator(profile: try Profile.named("bankid-se").get(), configuration: configuration) { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let (link, page) = try await browser.handOff(session.authorizationURL)
            let reference = try AuthenticatorApp.parse(link).reference
            let transport = URLSessionTransport()
            let approve = try Self.url(emulator, "/authenticator/approve")

            let unopened = try await transport.send(.form(approve, [("txn", reference), ("username", "mallory")]))
            #expect(unopened.status == 409 && String(decoding: unopened.body, as: UTF8.self).contains("not_opened"))
            #expect(
                try await transport.send(.form(try Self.url(emulator, "/authenticator/open"), [("txn", reference), ("username", "alice")])).status
                    == 200)
            let foreign = try await transport.send(.form(approve, [("txn", reference), ("username", "mallory")]))
            #expect(foreign.status == 403 && String(decoding: foreign.body, as: UTF8.self).contains("wrong_user"))
            // Another user's app cannot take the request over by opening it again, nor answer it by name.
            let reopened = try await transport.send(
                .form(try Self.url(emulator, "/authenticator/open"), [("txn", reference), ("username", "mallory")]))
            #expect(reopened.status == 403)
            #expect(try await transport.send(.form(approve, [("txn", reference), ("username", "mallory")])).status == 403)
            let decline = try await transport.send(
                .form(try Self.url(emulator, "/authenticator/decline"), [("txn", reference), ("username", "mallory")]))
            #expect(decline.status == 403)
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, reference)["status"] == .string("pending"), "the request keeps waiting")

            #expect(try await transport.send(.form(approve, [("txn", reference)])).status == 200, "alice's app approves as alice")
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))),
                session: session
            )
            #expect(credential.subject == "9b1f7c2e-alice")
        }
    }

    @Test(
        "collect's other hint codes: started (no usable BankID yet), certificateErr reported by the app, cancelled by a newer order for the same user"
    )
    func bankIDHintCodes() async throws {
        try await EmulatorBankIDSwedenTests.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let transport = URLSessionTransport()
            let open = try Self.url(emulator, "/authenticator/open")

            // started: the app opened the order but has found no usable BankID.
            let first = try await client.prepareAuthorization()
            let firstBrowser = EmulatorBrowser()
            let (firstLink, firstPage) = try await firstBrowser.handOff(first.authorizationURL)
            let firstReference = try AuthenticatorApp.parse(firstLink).reference
            #expect(try await transport.send(.form(open, [("txn", firstReference), ("username", "alice"), ("usable", "false")])).status == 200)
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, firstReference)["hintCode"] == .string("started"))

            // cancelled: a second order opened by the same user replaces the first.
            let second = try await client.prepareAuthorization()
            let (secondLink, _) = try await EmulatorBrowser().handOff(second.authorizationURL)
            let secondReference = try AuthenticatorApp.parse(secondLink).reference
            #expect(try await transport.send(.form(open, [("txn", secondReference), ("username", "alice")])).status == 200)
            let replaced = try await EmulatorBankIDSwedenTests.collect(emulator, firstReference)
            #expect(replaced["status"] == .string("failed") && replaced["hintCode"] == .string("cancelled"))
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, secondReference)["hintCode"] == .string("userSign"))
            let landing = try await firstBrowser.open(try EmulatorBankIDNorwayTests.continueURL(firstPage, base: emulator.issuer))
            let error = await expectFailure("a replaced order must not sign in") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: first)
            }
            #expect(error.flatMap(BankIDHintCode.init(failure:)) == .cancelled)

            // certificateErr: the app reports a blocked BankID; an unknown code is refused.
            let app = try EmulatorUAEPassTests.app(emulator)
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 400)) {
                try await app.decide(reference: secondReference, .fail(hintCode: "somethingElse"))
            }
            try await app.decide(reference: secondReference, .fail(hintCode: "certificateErr"))
            let failed = try await EmulatorBankIDSwedenTests.collect(emulator, secondReference)
            #expect(failed["status"] == .string("failed") && failed["hintCode"] == .string("certificateErr"))
        }
    }

    @Test("an order no app starts fails with startFailed; one opened but never answered with expiredTransaction")
    func bankIDStartFailed() async throws {
        // The provider's clock moves only when the test moves it: the second order is opened in time
        // however slow the machine.
        let clock = ManualClock(Date())
        try await EmulatorBankIDSwedenTests.withEmulator(["short-order"], clock: clock) { emulator in
            let client = EmulatorHarness.client(emulator)
            let unopened = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let (link, page) = try await browser.handOff(unopened.authorizationURL)
            let reference = try AuthenticatorApp.parse(link).reference
            let opened = try await client.prepareAuthorization()
            let (openedLink, _) = try await EmulatorBrowser().handOff(opened.authorizationURL)
            _ = try await EmulatorUAEPassTests.app(emulator).respond(to: openedLink, with: .ignore)
            let openedReference = try AuthenticatorApp.parse(openedLink).reference
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, reference)["hintCode"] == .string("outstandingTransaction"))
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, openedReference)["hintCode"] == .string("userSign"))
            // Past both 2-second lifetimes: the order no app opened failed to start, the other expired.
            clock.advance(by: 3)
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, reference)["hintCode"] == .string("startFailed"))
            #expect(try await EmulatorBankIDSwedenTests.collect(emulator, openedReference)["hintCode"] == .string("expiredTransaction"))
            let landing = try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))
            let error = await expectFailure("an order never started must not sign in") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: unopened)
            }
            let hint = try #require(error.flatMap(BankIDHintCode.init(failure:)))
            #expect(hint == .startFailed && hint.recommendedMessage(qrCode: true) == "RFA17B")
        }
    }

    @Test(
        "UAE Pass's web sign-in on another phone: the identifier needs the browser's session, the app offers three numbers, the wrong one refuses the request"
    )
    func uaePassNumberMatching() async throws {
        try await EmulatorUAEPassTests.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let app = try EmulatorUAEPassTests.app(emulator)

            // Wrong number: refused, and the sign-in ends access_denied.
            let refused = try await client.prepareAuthorization(AuthorizationOptions(acrValues: [UAEPassOptions.webACR]))
            let browser = EmulatorBrowser()
            let loginPage = try Self.html(try await browser.open(refused.authorizationURL))
            // Another browser (without the session cookie) cannot send the request to the user's phone.
            let stranger = try Self.html(try await Self.sendIdentifier(EmulatorBrowser(), page: loginPage, emulator: emulator))
            #expect(stranger.contains("Session expired"))
            #expect(try await app.inbox(of: "alice").isEmpty)
            let waiting = try Self.html(try await Self.sendIdentifier(browser, page: loginPage, emulator: emulator))
            let match = try #require(WebPage(url: try Self.url(emulator, "/otherdevice"), html: waiting).matchCode)
            let request = try #require(try await app.inbox(of: "alice").first)
            #expect(request.choices.count == 3 && request.choices.contains(match))
            let wrong = try #require(request.choices.first { $0 != match })
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 400)) {
                try await app.decide(reference: request.reference, .approve(), match: wrong)
            }
            let next = try #require(WebPage(url: try Self.url(emulator, "/otherdevice"), html: waiting).poll?.next)
            let error = await expectFailure("a wrong number must not sign in") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(try await browser.open(next)), session: refused)
            }
            #expect(error?.oauthError?.error == "access_denied")

            // The right number signs in, at the web sign-in's assurance.
            let session = try await client.prepareAuthorization(AuthorizationOptions(acrValues: [UAEPassOptions.webACR]))
            let secondBrowser = EmulatorBrowser()
            let page = try Self.html(try await secondBrowser.open(session.authorizationURL))
            let second = try Self.html(try await Self.sendIdentifier(secondBrowser, page: page, emulator: emulator))
            let shown = try #require(WebPage(url: try Self.url(emulator, "/otherdevice"), html: second).matchCode)
            try await OtherPhone(app: app, username: "alice").answerRequest(matching: shown)
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(
                    try await secondBrowser.open(try #require(WebPage(url: try Self.url(emulator, "/otherdevice"), html: second).poll?.next))),
                session: session
            )
            #expect(credential.idTokenClaims?.acr == UAEPassOptions.webACR)
        }
    }

    @Test("MitID on another device: the user ID first, then a single-use QR code the app scans before the user approves")
    func mitIDQRCode() async throws {
        try await EmulatorMitIDTests.withEmulator { emulator, client in
            let session = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let page = try Self.html(try await browser.open(session.authorizationURL))
            let unknown = try await Self.sendIdentifier(browser, page: page, emulator: emulator, identifier: "mallory")
            #expect(try Self.html(unknown).contains("Unknown user"))
            let waiting = try Self.html(try await Self.sendIdentifier(browser, page: page, emulator: emulator))
            let qr = try await Self.qrCode(emulator, page: waiting, browser: browser)
            let app = try EmulatorUAEPassTests.app(emulator)
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 400)) { try await app.scan(qr + "x") }
            let reference = try await app.scan(qr)
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 400), "a QR code opens its request once") {
                try await app.scan(qr)
            }
            try await app.decide(reference: reference, .approve())
            let next = try #require(WebPage(url: try Self.url(emulator, "/otherdevice"), html: waiting).poll?.next)
            let returnLink = try EmulatorMitIDTests.redirected(try await browser.open(next))
            let credential = try await client.completeAuthorization(.redirect(returnLink), session: session)
            #expect(credential.idTokenClaims?.acr == MitID.substantialACR)
        }
    }

    @Test(
        "MitID's code display: user ID, the current TOTP code and the password sign in from the browser that started; three wrong codes block the sign-in"
    )
    func mitIDCodeDisplay() async throws {
        try await EmulatorMitIDTests.withEmulator { emulator, client in
            let display = CodeDisplay(username: "alice", password: "Secret-123", secret: MitID.codeDisplaySecret(for: "alice"))
            func submit(_ browser: EmulatorBrowser, page: String, code: String) async throws -> EmulatorBrowser.Landing {
                let form = try #require(WebPage(url: try Self.url(emulator, "/"), html: page).codeDisplayForm)
                return try await browser.post(form.action, form.fields + [("identifier", "alice"), ("code", code), ("password", "Secret-123")])
            }

            let session = try await client.prepareAuthorization()
            let browser = EmulatorBrowser()
            let page = try Self.html(try await browser.open(session.authorizationURL))
            #expect(try Self.html(try await submit(EmulatorBrowser(), page: page, code: display.code())).contains("Session expired"))
            let wrong = String(format: "%06d", (Int(display.code())! + 1) % 1_000_000)
            #expect(try Self.html(try await submit(browser, page: page, code: wrong)).contains("Wrong code"))
            let returnLink = try EmulatorMitIDTests.redirected(try await submit(browser, page: page, code: display.code()))
            let credential = try await client.completeAuthorization(.redirect(returnLink), session: session)
            #expect(credential.idTokenClaims?.acr == MitID.substantialACR)

            let blocked = try await client.prepareAuthorization()
            let other = EmulatorBrowser()
            let second = try Self.html(try await other.open(blocked.authorizationURL))
            _ = try await submit(other, page: second, code: wrong)
            _ = try await submit(other, page: second, code: wrong)
            let third = try await submit(other, page: second, code: wrong)
            let error = await expectFailure("a blocked code display must not sign in") {
                try await client.completeAuthorization(.redirect(try EmulatorMitIDTests.redirected(third)), session: blocked)
            }
            #expect(error?.oauthError?.error == "access_denied")
            // Once blocked, not even the right code opens it.
            #expect(try Self.html(try await submit(other, page: second, code: display.code())).contains("Session expired"))
        }
    }

    @Test("BankIDHintCode reads the code a broker puts first in access_denied's description, and nothing else")
    func hintCodeParsing() {
        func error(_ code: String, _ description: String?) -> SwitchbackError {
            SwitchbackError(.authorizationError, "refused", oauthError: OAuthErrorResponse(error: code, errorDescription: description))
        }
        #expect(BankIDHintCode(failure: error("access_denied", "userCancel: the user cancelled")) == .userCancel)
        #expect(BankIDHintCode(failure: error("access_denied", "transactionRiskBlocked: blocked"))?.recommendedMessage() == "RFA22")
        #expect(BankIDHintCode(failure: error("access_denied", "the user declined")) == nil)
        #expect(BankIDHintCode(failure: error("access_denied", "not a code: x")) == nil)
        #expect(BankIDHintCode(failure: error("server_error", "userCancel: x")) == nil)
        #expect(BankIDHintCode(failure: error("access_denied", nil)) == nil)
        #expect(BankIDHintCode.startFailed.recommendedMessage() == "RFA17A")
    }
}
