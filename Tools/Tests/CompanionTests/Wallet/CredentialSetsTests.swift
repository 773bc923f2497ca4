import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// A choice among credentials (OpenID4VP 1.0 §6.2, §6.4.2): the companion asks for a PID or a mobile driving
/// licence, the emulated wallet answers with the one it holds, and the app learns which. A wallet holding
/// neither answers nothing and says so (`access_denied`, §8.5).
@Suite("A choice among credentials: credential_sets between the emulated wallet and the companion")
struct CredentialSetsTests {
    static let mdl = EmulatedWallet.mdlNameSpace
    /// The PID as an SD-JWT VC, or the mDL; a rewards card nobody holds, if there is one.
    static let query = DCQLQuery(
        credentials: [
            .init(id: "pid", vctValues: [EmulatedWallet.pidType], claims: [[.string("given_name")], [.string("birthdate")]]),
            .init(id: "mdl", doctype: EmulatedWallet.mdlDocType, claims: [(mdl, "given_name"), (mdl, "birth_date"), (mdl, "document_number")]),
            .init(id: "rewards", vctValues: ["https://company.example/company_rewards"], claims: [[.string("rewards_number")]]),
        ],
        credentialSets: [.init(options: [["pid"], ["mdl"]]), .init(options: [["rewards"]], required: false)])

    @Test(
        "the wallet answers the option it holds (the first when it holds both), the optional set it cannot is left out, and the app gets that credential alone",
        arguments: [[EmulatedWallet.Holding.pid], [.mdl], [.pid, .mdl]])
    func answersTheOptionHeld(_ holds: Set<EmulatedWallet.Holding>) async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer, holds: holds)
        try await EmulatedWalletTests.with(issuer, query: Self.query) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, steps) = try await EmulatedWalletTests.present(rig, client, wallet)
            let presentation = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            let chosen = holds.contains(.pid) ? "pid" : "mdl"
            #expect(steps.contains("the user picks \(chosen) among the credentials that would answer"), "\(steps)")
            #expect(Set(presentation.credentials.keys) == [chosen])
            if chosen == "pid" {
                #expect(presentation.claims("pid")?["given_name"] == "Erika" && presentation.claims("pid")?["birthdate"] == "1984-01-26")
            } else {
                let document = try #require(presentation.claims("mdl"))
                guard case .object(let elements)? = document[Self.mdl] else {
                    Issue.record("no \(Self.mdl) namespace in \(document)")
                    return
                }
                #expect(elements == ["given_name": "Erika", "birth_date": "1984-01-26", "document_number": "B072RRE2I55"])
            }
        }
    }

    @Test("a wallet that holds no option of a required set, or not every credential of a query without sets, sends access_denied and nothing else")
    func holdsNone() async throws {
        let issuer = try EmulatedIssuer()
        let pidOnly = DCQLQuery(credentials: [Self.query.credentials[0], Self.query.credentials[1]])
        for (holds, query) in [([EmulatedWallet.Holding](), Self.query), ([.mdl], pidOnly)] {
            let wallet = try EmulatedWallet(issuer: issuer, holds: Set(holds))
            try await EmulatedWalletTests.with(issuer, query: query) { rig in
                let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
                let (code, steps) = try await EmulatedWalletTests.present(rig, client, wallet)
                #expect(steps.contains { $0.hasPrefix("the wallet holds no credentials that answer the request") }, "\(steps)")
                let refused = await #expect(throws: SwitchbackError.self) {
                    _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
                }
                #expect(refused?.code == .authorizationError && refused?.oauthError?.error == "access_denied", "\(holds)")
            }
        }
    }

    @Test("the mDL's faults are refused as the PID's are: a revoked, an expired or a tampered licence gives the app invalid_presentation")
    func mdlFaults() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer, holds: [.mdl])
        try await EmulatedWalletTests.with(issuer, query: Self.query) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            for (fault, reason) in [
                (EmulatedWallet.Fault.revoked, "revoked"), (.expired, "expired"), (.tamperedDisclosure, "does not match its digest"),
            ] {
                let (code, _) = try await EmulatedWalletTests.present(rig, client, wallet, fault: fault)
                let refused = await #expect(throws: SwitchbackError.self) {
                    _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
                }
                #expect(refused?.code == .presentationInvalid, "\(fault)")
                #expect(rig.log.all.last { $0.contains("presentation refused") }?.lowercased().contains(reason) == true, "\(fault)")
            }
        }
    }
}
