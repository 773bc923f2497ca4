import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting

@Suite("PKCE")
struct PKCETests {
    @Test("RFC 7636 Appendix B: verifier gives the published S256 challenge")
    func rfc7636AppendixB() throws {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
    }

    @Test("a generated verifier carries 256 bits in 43 unreserved characters")
    func generatedVerifier() throws {
        let pkce = PKCE(entropy: SystemEntropy())
        #expect(pkce.verifier.count == 43)
        #expect(try PKCE(verifier: pkce.verifier) == pkce)
        #expect(PKCE(entropy: SystemEntropy()).verifier != pkce.verifier)
    }

    @Test(
        "verifiers that RFC 7636 §4.1 forbids are refused",
        arguments: [
            "short", String(repeating: "a", count: 129), String(repeating: "a", count: 42) + "!", String(repeating: "é", count: 43),
        ])
    func invalidVerifier(verifier: String) {
        #expect(throws: SwitchbackError.self) { try PKCE(verifier: verifier) }
    }

    @Test("the description shows the challenge, never the verifier")
    func descriptionRedactsVerifier() throws {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(!"\(pkce)".contains(pkce.verifier))
        #expect("\(pkce)".contains(pkce.challenge))
    }
}
