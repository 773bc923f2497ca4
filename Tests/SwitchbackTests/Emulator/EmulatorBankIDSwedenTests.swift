// The emulator needs macOS 14 (Hummingbird 2) while the package's floor is macOS 13, so these tests
// are compiled where CI runs them.
#if os(Linux)
import Foundation
import Testing
@testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting

/// The bankid-se profile: autostart link in both forms, `redirect=null` unless the client asks for an
/// allow-listed return, and the collect hintCode progression the broker's page polls.
@Suite("Emulator: bankid-se profile")
struct EmulatorBankIDSwedenTests {
    static func withEmulator(_ variants: [String] = [], _ body: (Emulator) async throws -> Void) async throws {
        try await EmulatorProviderTests.withEmulator(profile: try Profile.named("bankid-se", variants: variants).get(), body)
    }

    static func collect(_ emulator: Emulator, _ reference: String) async throws -> [String: JSONValue] {
        let response = try await URLSessionTransport().send(HTTPRequest(
            method: .get, url: try #require(URL(string: emulator.issuer + "/bankid/collect?txn=" + reference))
        ))
        guard case .object(let body) = try JSONDecoder().decode(JSONValue.self, from: response.body) else { return [:] }
        return body
    }

    @Test("autostart with redirect=null: collect goes outstandingTransaction → userSign → complete, then the broker returns the code")
    func autostart() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorProviderTests.client(emulator)
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
            let opened = try await transport.send(.form(try #require(URL(string: emulator.issuer + "/authenticator/open")), [("txn", launch.reference)]))
            #expect(opened.status == 200)
            #expect(try await Self.collect(emulator, launch.reference)["hintCode"] == .string("userSign"))
            #expect(try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .approve()) == nil)
            #expect(try await Self.collect(emulator, launch.reference)["status"] == .string("complete"))

            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))), session: session
            )
            #expect(credential.idTokenClaims?.acr == BankIDSweden.loa3ACR)
        }
    }

    @Test("the https app link form with an allow-listed redirect; the app returns there")
    func appLinkWithRedirect() async throws {
        try await Self.withEmulator(["app-link"]) { emulator in
            let client = EmulatorProviderTests.client(emulator)
            let session = try await client.prepareAuthorization(AuthorizationOptions(extraParameters: [("bankid_redirect", "https://app.example.com/appswitch")]))
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
            let client = EmulatorProviderTests.client(emulator)
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

            let unlisted = try await client.prepareAuthorization(AuthorizationOptions(extraParameters: [("bankid_redirect", "https://evil.example/")]))
            let refused = try await EmulatorBrowser().open(unlisted.authorizationURL)
            await expectCode(.authorizationError) { try await client.completeAuthorization(try EmulatorBrowser.callback(refused), session: unlisted) }
        }
    }
}
#endif
