import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// A status list signed by a Status Issuer other than the credential's issuer (draft-ietf-oauth-status-list-20
/// §11.3, the certificate way): taken when the Status Issuer's certificate comes from the credential's CA and
/// leads to a trust anchor without carrying it (HAIP 1.0 §6.1); refused otherwise.
@Suite("Status lists signed by a Status Issuer of their own")
struct StatusIssuerTests {
    /// Answers the issuer's status list URI with `token`, everything else as the issuer's hosting does.
    struct ListSignedBy: HTTPTransport {
        let issuer: EmulatedIssuer
        let token: String

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            guard request.url.absoluteString == issuer.statusListURI else {
                return try await StatusListHosting(issuer, revoked: [], next: URLSessionTransport()).send(request)
            }
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/statuslist+jwt"], body: Data(token.utf8))
        }
    }

    @Test("the issuer's own Status Issuer, certified by the same CA, signs the list: a valid credential signs in, a revoked one is told revoked")
    func sameCA() async throws {
        let issuer = try EmulatedIssuer(separateStatusIssuer: true)
        let wallet = try EmulatedWallet(issuer: issuer, statusIndex: 0)
        // The list's signer is not the issuer: its certificate names another host.
        let token = try issuer.statusListToken(revoked: [])
        #expect(token.contains(".") && issuer.statusIssuer != nil)
        try await EmulatedWalletTests.with(issuer) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, _) = try await EmulatedWalletTests.present(rig, client, wallet)
            #expect(try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding).claims("pid")?["given_name"] == "Erika")
            let (revoked, steps) = try await EmulatedWalletTests.present(rig, client, wallet, fault: .revoked)
            #expect(steps.contains("the verifier refuses the answer (HTTP 400); the wallet shows \"\(CompanionService.Refusal.revoked.rawValue)\""))
            await #expect(throws: SwitchbackError.self) {
                _ = try await client.redeemPresentation(responseCode: revoked, binding: CompanionRig.binding)
            }
        }
    }

    @Test(
        "refused, and the wallet told the status could not be checked: a Status Issuer another trusted CA certified, one whose x5c carries the anchor, one under no anchor, another issuer the same CA certified",
        arguments: 0..<4)
    func refused(_ index: Int) async throws {
        let issuer = try EmulatedIssuer()
        let other = try EmulatedAuthority(name: "Another Trusted CA", dnsName: "other.example.com")
        let stranger = try EmulatedAuthority(name: "Untrusted CA", dnsName: "stranger.example.com")
        let (signer, chain, reason): (EmulatedSigner, (EmulatedSigner) throws -> [Data], String) =
            switch index {
            case 0: (try other.issueSigner(name: "Other Status Issuer", dnsName: "status.other.example.com"), { [$0.certificate] }, "another CA")
            case 1:
                (
                    try issuer.authority.issueSigner(name: "Status Issuer", dnsName: "status.pid-issuer.example.com"),
                    { [$0.certificate, try issuer.authority.root] }, "carries a trust anchor"
                )
            case 2:
                (try stranger.issueSigner(name: "Stranger Status Issuer", dnsName: "status.stranger.example.com"), { [$0.certificate] }, "anchor")
            // Same CA, but its certificate names its own host, not the one the list is served from: an issuer
            // able to serve bytes at another's status URL cannot sign that issuer's list.
            default:
                (
                    try issuer.authority.issueSigner(name: "Another Issuer", dnsName: "rogue.example.com"), { [$0.certificate] },
                    "does not name the list's host"
                )
            }
        let token = try issuer.statusListToken(revoked: [], signer: signer.key, chain: try chain(signer))
        let wallet = try EmulatedWallet(issuer: issuer, statusIndex: 0)
        try await EmulatedWalletTests.with(
            trusting: issuer.authority.rootPEM + other.rootPEM, query: EmulatedWalletTests.query,
            transport: ListSignedBy(issuer: issuer, token: token)
        ) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, steps) = try await EmulatedWalletTests.present(rig, client, wallet)
            #expect(
                steps.contains("the verifier refuses the answer (HTTP 400); the wallet shows \"\(CompanionService.Refusal.statusUnknown.rawValue)\""))
            let refused = await #expect(throws: SwitchbackError.self) {
                _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            }
            #expect(refused?.code == .presentationInvalid)
            let line = rig.log.all.first { $0.contains("presentation refused") } ?? ""
            #expect(line.contains(reason), "\(index): \(line)")
        }
    }
}
