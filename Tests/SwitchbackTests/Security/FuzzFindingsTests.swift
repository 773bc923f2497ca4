import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// Inputs the fuzz targets (Fuzz/, Documentation/Fuzzing.md) found to crash or to break a property, kept as
/// tests of the core so that the fault cannot come back unnoticed by a run without the fuzzer.
@Suite("Fuzz findings in the core")
struct FuzzFindingsTests {
    @Test("a URL whose fragment has a pair without a name (`#=`, `#=x&a`) is described for a log, not a trap")
    func redactionOfNamelessFragmentPair() throws {
        for text in ["https://app.example.com/cb#=", "https://app.example.com/cb#=x&code=c", "https://app.example.com/cb#&&=", "x:#="] {
            let url = try #require(URL(string: text))
            let described = Redaction.describe(url)
            #expect(!described.contains("code=c"), "\(described)")
        }
        #expect(
            Redaction.describe(try #require(URL(string: "https://a.example/cb#iss=x&code=secret"))) == "https://a.example/cb#iss=x&code=‹redacted›")
    }

    @Test("the callback `#=` at the wrong place ends the sign-in with a typed error (the fuzzer's input, which trapped)")
    func namelessFragmentCallback() async throws {
        let issuer = "https://id.example.com"
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: try #require(URL(string: "https://app.example.com/oauth/callback"))),
            provider: .static(
                ProviderMetadata(
                    issuer: issuer, authorizationEndpoint: try #require(URL(string: "\(issuer)/authorize")),
                    tokenEndpoint: try #require(URL(string: "\(issuer)/token")), jwksURI: try #require(URL(string: "\(issuer)/jwks")))),
            transport: StubTransport { _ in HTTPResponse(status: 500, body: Data()) })
        let session = try await client.prepareAuthorization()
        await expectCode(.redirectURIMismatch) {
            _ = try await client.completeAuthorization(.redirect(try #require(URL(string: "#="))), session: session)
        }
    }
}
