import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer

/// Norwegian BankID's environments pair as a whole: the companion refuses a test issuer beside the
/// production biometrics server, and the other way round, and takes either pair (and anything else).
@Suite("BankID Norway's environments")
struct BankIDNorwayEnvironmentTests {
    static func configuration(issuer: String, server: String) -> ServerConfiguration {
        ServerConfiguration(
            port: 0, provider: .init(issuer: issuer, clientID: "bankid-client", clientSecret: "s"),
            permission: .init(
                server: server, appCallbackURIs: ["https://app.example.com/appswitch"], type: "payment.v1",
                backendToken: "backend-token-0123456789abcdef0123456789"))
    }

    @Test("each issuer with its own environment's biometrics server validates; a mixed pair is an invalid configuration naming the right server")
    func pairs() throws {
        let test = "https://auth.current.bankid.no/auth/realms/current"
        let production = "https://auth.bankid.no/auth/realms/prod"
        try Self.configuration(issuer: test, server: "https://current.aletheia-test.idtech.no").validate()
        try Self.configuration(issuer: production, server: "https://app.bankid.no/").validate()
        // Another provider, or the emulator, is not BankID's: nothing to pair.
        try Self.configuration(issuer: "https://id.example.com", server: "https://app.bankid.no").validate()
        for (issuer, server, named) in [
            (test, "https://app.bankid.no", "https://current.aletheia-test.idtech.no"),
            (production, "https://current.aletheia-test.idtech.no", "https://app.bankid.no"),
        ] {
            let error = #expect(throws: SwitchbackError.self) { try Self.configuration(issuer: issuer, server: server).validate() }
            #expect(error?.code == .invalidConfiguration && error?.message.contains("use \(named)") == true, "\(error?.message ?? "")")
        }
    }
}
