import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import SwitchbackVerification

/// A document signer checked against its IACA's revocation list (ISO/IEC 18013-5 Annex B: the signer's
/// certificate names the IACA's CRL distribution point; RFC 5280 §5 for the list). Each list here is one an
/// attacker on the path, a careless IACA or a stale cache could serve.
@Suite("Document signer revocation")
struct DocumentSignerRevocationTests {
    static let point = "http://iaca.example.com/iaca.crl"

    /// A document signer under its IACA, naming ``point``.
    static func authority() throws -> EmulatedAuthority {
        try EmulatedAuthority(name: "Test IACA", dnsName: "pid.example.com", documentSigning: true, revocationListURI: point)
    }

    /// `documentSigner` of `authority`'s signer with the list `serve` answers at the distribution point.
    static func check(
        _ authority: EmulatedAuthority, transport: StubTransport, clock: any WallClock = SystemClock()
    ) async throws -> MDocSigner {
        let signers = try X509DocumentSigners(
            anchorsPEM: authority.rootPEM, clock: clock, revocation: DocumentSignerRevocation(transport: transport, clock: clock))
        let signer = try await signers.documentSigner(certificates: [authority.leaf])
        try await signer.confirm?()
        return signer
    }

    static func serving(_ list: @escaping @Sendable () throws -> Data, status: Int = 200) -> StubTransport {
        StubTransport { request in
            guard request.url.absoluteString == point else { return HTTPResponse(status: 404) }
            return HTTPResponse(status: status, headers: ["Content-Type": "application/pkix-crl"], body: try list())
        }
    }

    static func refusal(_ authority: EmulatedAuthority, _ transport: StubTransport) async -> String {
        do {
            _ = try await check(authority, transport: transport)
            return "accepted"
        } catch let error as SwitchbackError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("a signer its IACA's current list does not name is taken; one it names is refused as revoked")
    func listedOrNot() async throws {
        let authority = try Self.authority()
        let clear = Self.serving { try authority.revocationList().der() }
        _ = try await Self.check(authority, transport: clear)
        #expect(clear.requests.count == 1 && clear.requests[0].headers["Accept"] == "application/pkix-crl")
        // Another certificate is revoked, not this one.
        let others = Self.serving {
            var list = authority.revocationList()
            list.revoked = [Certificate.SerialNumber(), Certificate.SerialNumber()]
            return try list.der()
        }
        _ = try await Self.check(authority, transport: others)
        let revoked = await Self.refusal(authority, Self.serving { try authority.revocationList(revokingLeaf: true).der() })
        #expect(revoked.contains("revoked by its IACA"), "\(revoked)")
    }

    @Test(
        "a list is believed only from its IACA, current, whole and with no critical extension it does not act on; otherwise nothing is known and the signer is refused"
    )
    func untrustedLists() async throws {
        let authority = try Self.authority()
        let stranger = try EmulatedAuthority(name: "Other IACA", dnsName: "x.example.com")
        let cases: [(String, @Sendable () throws -> Data, Int)] = [
            (
                "another key signed it",
                {
                    var list = authority.revocationList()
                    list.key = P256.Signing.PrivateKey()
                    return try list.der()
                }, 200
            ),
            ("another IACA's name", { try stranger.revocationList().der() }, 200),
            (
                "past its nextUpdate",
                {
                    var list = authority.revocationList()
                    (list.thisUpdate, list.nextUpdate) = (Date() - 3 * 86_400, Date() - 86_400)
                    return try list.der()
                }, 200
            ),
            (
                "no nextUpdate",
                {
                    var list = authority.revocationList()
                    list.nextUpdate = nil
                    return try list.der()
                }, 200
            ),
            (
                "dated in the future",
                {
                    var list = authority.revocationList()
                    list.thisUpdate = Date() + 86_400
                    return try list.der()
                }, 200
            ),
            (
                "a critical issuing distribution point",
                {
                    var list = authority.revocationList(revokingLeaf: false)
                    list.criticalIssuingDistributionPoint = true
                    return try list.der()
                }, 200
            ),
            (
                "a changed byte",
                {
                    var bytes = [UInt8](try authority.revocationList().der())
                    bytes[bytes.count / 2] ^= 0x01
                    return Data(bytes)
                }, 200
            ),
            ("cut short", { Data(try authority.revocationList().der().dropLast(10)) }, 200),
            ("not DER", { Data("<html>maintenance</html>".utf8) }, 200),
            ("too large", { Data(count: RevocationList.maximumBytes + 1) }, 200),
            ("a 503", { try authority.revocationList().der() }, 503),
        ]
        for (name, list, status) in cases {
            let refusal = await Self.refusal(authority, Self.serving(list, status: status))
            #expect(refusal.contains("revocation list could not be checked"), "\(name): \(refusal)")
        }
    }

    @Test(
        "a list is kept for its IACA until its nextUpdate: fetched once for many checks, again when due; another IACA at the same point fetches its own"
    )
    func cached() async throws {
        let clock = ManualClock(Date())
        let authority = try Self.authority()
        let transport = Self.serving {
            var list = authority.revocationList()
            (list.thisUpdate, list.nextUpdate) = (clock.now() - 60, clock.now() + 3600)
            return try list.der()
        }
        let signers = try X509DocumentSigners(
            anchorsPEM: authority.rootPEM, clock: clock, revocation: DocumentSignerRevocation(transport: transport, clock: clock))
        // Nothing is fetched until the signer's signature verified (`confirm`).
        let signer = try await signers.documentSigner(certificates: [authority.leaf])
        #expect(transport.requests.isEmpty, "a certificate copied into a forged answer costs no fetch")
        for _ in 0..<5 { try await signer.confirm?() }
        #expect(transport.requests.count == 1)
        clock.advance(by: 3601)
        try await signer.confirm?()
        #expect(transport.requests.count == 2, "fetched again past nextUpdate")

        // A second IACA whose signer names the same point: the first IACA's list is not taken for it.
        let second = try Self.authority()
        let both = StubTransport { _ in
            HTTPResponse(status: 200, body: try authority.revocationList().der())
        }
        let revocation = DocumentSignerRevocation(transport: both, clock: SystemClock())
        let first = try X509DocumentSigners(anchorsPEM: authority.rootPEM, clock: SystemClock(), revocation: revocation)
        try await first.documentSigner(certificates: [authority.leaf]).confirm?()
        let other = try X509DocumentSigners(anchorsPEM: second.rootPEM, clock: SystemClock(), revocation: revocation)
        await #expect(throws: SwitchbackError.self, "the first IACA's list for the second IACA's signer") {
            try await other.documentSigner(certificates: [second.leaf]).confirm?()
        }
        #expect(both.requests.count == 2)
    }

    @Test(
        "an older list than one already read is not believed (a replay hiding a revocation); a failure is remembered 30 s, not fetched again each time"
    )
    func rollbackAndFailures() async throws {
        let clock = ManualClock(Date())
        let authority = try Self.authority()
        let served = LockedValue<Data?>(nil)
        let transport = StubTransport { _ in
            guard let body = served.withLock({ $0 }) else { return HTTPResponse(status: 503) }
            return HTTPResponse(status: 200, body: body)
        }
        let signers = try X509DocumentSigners(
            anchorsPEM: authority.rootPEM, clock: clock, revocation: DocumentSignerRevocation(transport: transport, clock: clock))
        func list(issued: Date, next: Date, revoking: Bool = false) throws -> Data {
            var list = authority.revocationList(revokingLeaf: revoking)
            (list.thisUpdate, list.nextUpdate) = (issued, next)
            return try list.der()
        }
        served.withLock { $0 = try? list(issued: clock.now() - 60, next: clock.now() + 600) }
        try await signers.documentSigner(certificates: [authority.leaf]).confirm?()
        // Past nextUpdate, someone on the path serves a list issued before the one read, still current.
        clock.advance(by: 601)
        served.withLock { $0 = try? list(issued: clock.now() - 3600, next: clock.now() + 600) }
        let replayed = await #expect(throws: SwitchbackError.self) { try await signers.documentSigner(certificates: [authority.leaf]).confirm?() }
        #expect(replayed?.message.contains("older than one") == true, "\(String(describing: replayed))")

        // An unreachable point: one fetch, then the failure answers for 30 s.
        let down = try Self.authority()
        let unreachable = StubTransport { _ in HTTPResponse(status: 503) }
        let downSigners = try X509DocumentSigners(
            anchorsPEM: down.rootPEM, clock: clock, revocation: DocumentSignerRevocation(transport: unreachable, clock: clock))
        for _ in 0..<5 {
            await #expect(throws: SwitchbackError.self) { try await downSigners.documentSigner(certificates: [down.leaf]).confirm?() }
        }
        #expect(unreachable.requests.count == 1)
        clock.advance(by: 31)
        await #expect(throws: SwitchbackError.self) { try await downSigners.documentSigner(certificates: [down.leaf]).confirm?() }
        #expect(unreachable.requests.count == 2)
    }

    @Test("a signer whose certificate names no distribution point is taken without a fetch, as Apple's test signer's is")
    func noDistributionPoint() async throws {
        let authority = try EmulatedAuthority(name: "Test IACA", dnsName: "pid.example.com", documentSigning: true)
        let transport = StubTransport { _ in HTTPResponse(status: 500) }
        _ = try await Self.check(authority, transport: transport)
        #expect(transport.requests.isEmpty)
    }

    @Test(
        "the distribution points are read from the certificate, http(s) URIs only; a signer naming only points this verifier cannot fetch is refused")
    func distributionPoints() async throws {
        let authority = try Self.authority()
        #expect(try Certificate(derEncoded: Array(authority.leaf)).revocationListURIs() == [URL(string: Self.point)!])
        let ldap = try EmulatedAuthority(
            name: "IACA", dnsName: "x.example.com", documentSigning: true, revocationListURI: "ldap://directory.example.com/cn=crl")
        #expect(try Certificate(derEncoded: Array(ldap.leaf)).revocationListURIs() == [])
        let refusal = await Self.refusal(ldap, StubTransport { _ in HTTPResponse(status: 500) })
        #expect(refusal.contains("names no revocation list this verifier can fetch"), "\(refusal)")
        #expect(try Certificate(derEncoded: Array(try EmulatedAuthority(name: "IACA", dnsName: "x.example.com").leaf)).revocationListURIs() == nil)
    }
}
