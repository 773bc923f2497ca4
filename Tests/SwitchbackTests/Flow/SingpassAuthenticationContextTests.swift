import Foundation
import Testing
@testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// Singpass's `authentication_context_type` and `authentication_context_message` ("1. The authorization
/// request", Singpass-specific parameters): documented types only, a message of at most 100 allowed characters.
@Suite("Singpass authentication context")
struct SingpassAuthenticationContextTests {
    @Test("the preset sends Login's default context; another documented purpose and a message go as two parameters")
    func presetCarriesIt() async throws {
        let request = try await ProviderPreset.singpass.request(strategy: .systemBrowser)
        #expect(request.options.extraParameters.contains { $0 == ("authentication_context_type", "APP_AUTHENTICATION_DEFAULT") })
        #expect(!request.options.extraParameters.contains { $0.0 == "authentication_context_message" })
        let context = try SingpassAuthenticationContext(type: "BANK_CASA_OPENING", message: "Open a savings account (step 1)")
        let custom = try await ProviderPreset.singpass(context: context).request(strategy: .systemBrowser)
        #expect(custom.options.extraParameters.contains { $0 == ("authentication_context_type", "BANK_CASA_OPENING") })
        #expect(custom.options.extraParameters.contains { $0 == ("authentication_context_message", "Open a savings account (step 1)") })
        #expect(!custom.options.extraParameters.contains { $0 == ("authentication_context_type", "APP_AUTHENTICATION_DEFAULT") })
    }

    @Test(
        "refused, typed: an undocumented or lower-case type, an empty or 101-character message, a message with < or a newline, a message without a type, a repeated parameter",
        arguments: [
            [("authentication_context_type", "LOGIN")],
            [("authentication_context_type", "app_authentication_default")],
            [("authentication_context_type", "APP_AUTHENTICATION_DEFAULT"), ("authentication_context_message", "")],
            [("authentication_context_type", "APP_AUTHENTICATION_DEFAULT"), ("authentication_context_message", String(repeating: "a", count: 101))],
            [("authentication_context_type", "APP_AUTHENTICATION_DEFAULT"), ("authentication_context_message", "Pay <b>now</b>")],
            [("authentication_context_type", "APP_AUTHENTICATION_DEFAULT"), ("authentication_context_message", "two\nlines")],
            [("authentication_context_message", "Sign in")],
            [("authentication_context_type", "APP_PAYMENT_DEFAULT"), ("authentication_context_type", "APP_AUTHENTICATION_DEFAULT")],
        ]
    )
    func refusals(_ parameters: [(String, String)]) {
        expectCode(.invalidConfiguration) { try SingpassAuthenticationContext.check(parameters: parameters) }
    }

    @Test("accepted: every documented type, a message of exactly 100 characters of the allowed set, and requests without a context at all")
    func accepted() throws {
        #expect(SingpassAuthenticationContext.documentedTypes.count == 44)
        for type in SingpassAuthenticationContext.documentedTypes {
            #expect(try SingpassAuthenticationContext(type: type).parameters.count == 1)
        }
        let message = String("Sign in to Example Bank, O'Neil & co. (at @home) - ok!".filter { $0 != "&" }.prefix(100))
        let longest = String(repeating: "a", count: 100)
        for text in [message, longest] {
            #expect(try SingpassAuthenticationContext(type: "APP_AUTHENTICATION_DEFAULT", message: text).message == text)
        }
        try SingpassAuthenticationContext.check(parameters: [("acr_values", "x")])
    }
}
