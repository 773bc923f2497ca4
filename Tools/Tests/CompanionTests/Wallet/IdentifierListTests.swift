import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// ISO/IEC 18013-5 second edition's identifier list, and the `certificate` an mdoc's status may name: an
/// identifier listed is revoked, one not listed is valid; the list is held to the mdoc's own IACA, or to the
/// certificate its MSO names.
@Suite("mdoc identifier lists and the status certificate")
struct IdentifierListTests {
    typealias Serving = CWTStatusListTests.Serving

    static func reference(_ issuer: EmulatedIssuer, _ identifier: Data, trustPoint: Data? = nil, uri: String? = nil) -> StatusReference {
        var reference = StatusReference(
            uri: uri ?? issuer.identifierListURI, entry: .identifier(identifier), issuer: nil, authorities: [issuer.authority.rootKeyIdentifier])
        reference.trustPoint = trustPoint
        return reference
    }

    @Test("listed is INVALID, not listed VALID; another typ, sub or signer, an expired list, a changed byte are refused")
    func identifiers() async throws {
        let issuer = try EmulatedIssuer()
        let signers = try X509DocumentSigners(anchorsPEM: issuer.authority.rootPEM, clock: SystemClock())
        let revoked = Data("revoked".utf8)
        let hosting = StatusListHosting(issuer, revoked: [], revokedIdentifiers: [revoked], next: URLSessionTransport())
        let checker = StatusListChecker(transport: hosting, issuers: signers, cwtSigners: signers)
        #expect(try await checker.status(of: Self.reference(issuer, revoked)) == StatusList.invalid)
        #expect(try await checker.status(of: Self.reference(issuer, Data("valid".utf8))) == StatusList.valid)

        let token = try issuer.identifierListCWT(revoked: [revoked])
        var flipped = token
        flipped[flipped.count - 70] ^= 1
        let stranger = try EmulatedIssuer()
        let refusals: [(Data, StatusReference, String)] = [
            (try issuer.statusListCWT(revoked: [1]), Self.reference(issuer, revoked), "typ"),
            (token, Self.reference(issuer, revoked, uri: issuer.identifierListURI + "0"), "sub"),
            (try stranger.identifierListCWT(revoked: [revoked]), Self.reference(issuer, revoked), "anchor"),
            (try issuer.identifierListCWT(revoked: [revoked], issuedAt: Date() - 2 * 86400), Self.reference(issuer, revoked), "expired"),
            (flipped, Self.reference(issuer, revoked), "signature"),
        ]
        for (body, reference, reason) in refusals {
            let refusing = StatusListChecker(
                transport: Serving(contentType: "application/identifierlist+cwt", body: body), issuers: signers, cwtSigners: signers)
            let error = await #expect(throws: SwitchbackError.self, "\(reason)") { _ = try await refusing.status(of: reference) }
            #expect(error?.message.contains(reason) == true, "\(reason): \(error?.message ?? "")")
        }
    }

    @Test(
        "the status certificate the MSO names: a list signed under it is read; under it, the issuer's own IACA is not enough, and without it another CA is refused"
    )
    func trustPoint() async throws {
        let issuer = try EmulatedIssuer()
        let signers = try X509DocumentSigners(anchorsPEM: issuer.authority.rootPEM, clock: SystemClock())
        let lists = try EmulatedAuthority(name: "Revocation Service CA", dnsName: "revocation.example.com")
        let listSigner = try lists.issueSigner(name: "Revocation Service", dnsName: "lists.revocation.example.com")
        let revoked = Data("revoked".utf8)
        let underPoint = try issuer.identifierListCWT(revoked: [revoked], signer: listSigner.key, chain: [listSigner.certificate])
        func checker(_ body: Data) -> StatusListChecker {
            StatusListChecker(transport: Serving(contentType: "application/identifierlist+cwt", body: body), issuers: signers, cwtSigners: signers)
        }
        let point = try lists.root
        #expect(try await checker(underPoint).status(of: Self.reference(issuer, revoked, trustPoint: point)) == StatusList.invalid)
        #expect(try await checker(underPoint).status(of: Self.reference(issuer, Data("other".utf8), trustPoint: point)) == StatusList.valid)
        // With a certificate named, the list must lead to it, not to the IACA.
        await #expect(throws: SwitchbackError.self) {
            _ = try await checker(try issuer.identifierListCWT(revoked: [])).status(of: Self.reference(issuer, revoked, trustPoint: point))
        }
        // Without one, a CA the verifier does not trust signs nothing.
        await #expect(throws: SwitchbackError.self) { _ = try await checker(underPoint).status(of: Self.reference(issuer, revoked)) }
    }

    @Test("through the companion: the wallet's mdoc on the issuer's identifier list signs in; the revoked one is told revoked")
    func endToEnd() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer, mdocStatus: .identifierList)
        try await EmulatedWalletTests.with(issuer, query: EmulatedWalletMDocTests.query) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, _) = try await EmulatedWalletTests.present(rig, client, wallet)
            #expect(try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding).claims("mdl") != nil)
            let (revoked, steps) = try await EmulatedWalletTests.present(rig, client, wallet, fault: .revoked)
            #expect(
                steps.contains("the verifier refuses the answer (HTTP 400); the wallet shows \"\(CompanionService.Refusal.revoked.rawValue)\""),
                "\(steps)")
            await #expect(throws: SwitchbackError.self) {
                _ = try await client.redeemPresentation(responseCode: revoked, binding: CompanionRig.binding)
            }
        }
    }
}
