import Crypto
import Foundation
import SwiftASN1
import SwitchbackEmulator
import SwitchbackTesting
import Testing
import X509
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackVerification

/// An SD-JWT VC whose issuer key comes from its own `x5c` chain (SD-JWT VC §2.5), validated to the
/// verifier's trust anchor with swift-certificates.
@Suite("Issuer keys from an x5c chain to a trust anchor")
struct X509IssuerKeysTests {
    /// A root and an issuer certificate for `dnsName`, valid from a day before `now` for `days` (the
    /// emulator's authority, which the emulated issuer signs with too).
    struct Authority {
        let authority: EmulatedAuthority
        var rootPEM: String { authority.rootPEM }
        var issuerKey: P256.Signing.PrivateKey { authority.key }
        var chain: [Data] { [authority.leaf] }

        init(dnsName: String = "issuer.example.com", now: Date, days: Double = 365, signing: Bool = true) throws {
            authority = try EmulatedAuthority(name: "Test PID Issuer", dnsName: dnsName, now: now, validFor: days, signing: signing)
        }

        /// A credential of `issuer` signed with the issuer key, its chain in `x5c`, presented without disclosures.
        func presentation(issuer: String? = "https://issuer.example.com", x5c: Bool = true, kid: String? = nil) throws -> String {
            var header: [String: JSONValue] = ["alg": .string("ES256"), "typ": .string("dc+sd-jwt")]
            if x5c { header["x5c"] = .array(chain.map { .string($0.base64EncodedString()) }) }
            if let kid { header["kid"] = .string(kid) }
            var payload: [String: JSONValue] = ["vct": .string("urn:eudi:pid:1")]
            if let issuer { payload["iss"] = .string(issuer) }
            let input =
                Base64URL.encode(Data(JSONValue.object(header).description.utf8)) + "."
                + Base64URL.encode(Data(JSONValue.object(payload).description.utf8))
            return input + "." + Base64URL.encode(try issuerKey.signature(for: Data(input.utf8)).rawRepresentation) + "~"
        }
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func verify(_ presentation: String, trusting rootPEM: String, at time: Date = now) async throws -> VerifiedPresentation {
        let clock = ManualClock(time)
        return try await SDJWTVerifier(issuers: try X509IssuerKeys(anchorsPEM: rootPEM, clock: clock), clock: clock)
            .verify(presentation, keyBinding: nil)
    }

    @Test("a chain to the anchor verifies; another authority's, an expired certificate, an issuer not named by it, or no x5c is refused")
    func chains() async throws {
        let authority = try Authority(now: Self.now)
        let verified = try await Self.verify(try authority.presentation(), trusting: authority.rootPEM)
        #expect(verified.claims["vct"] == .string("urn:eudi:pid:1"))

        let stranger = try Authority(now: Self.now)
        await #expect(throws: SwitchbackError.self, "another authority's chain") {
            _ = try await Self.verify(try stranger.presentation(), trusting: authority.rootPEM)
        }
        await #expect(throws: SwitchbackError.self, "expired") {
            _ = try await Self.verify(try authority.presentation(), trusting: authority.rootPEM, at: Self.now + 400 * 86400)
        }
        let misnamed = await #expect(throws: SwitchbackError.self, "an issuer the certificate does not name") {
            _ = try await Self.verify(try authority.presentation(issuer: "https://other.example.com"), trusting: authority.rootPEM)
        }
        #expect(misnamed?.message.contains("DNS name") == true)
        await #expect(throws: SwitchbackError.self, "no x5c") {
            _ = try await Self.verify(try authority.presentation(x5c: false), trusting: authority.rootPEM)
        }
        // Any certificate under the anchor could otherwise issue in any name: the signed iss must be https and named by it.
        for issuer in [nil, "http://issuer.example.com", "urn:issuer.example.com"] as [String?] {
            await #expect(throws: SwitchbackError.self, "iss \(issuer ?? "absent")") {
                _ = try await Self.verify(try authority.presentation(issuer: issuer), trusting: authority.rootPEM)
            }
        }
        _ = try await Self.verify(try authority.presentation(issuer: "HTTPS://Issuer.Example.com"), trusting: authority.rootPEM)
        _ = try await Self.verify(try authority.presentation(kid: "key-1"), trusting: authority.rootPEM)
        let tls = try Authority(now: Self.now, signing: false)
        let notForSigning = await #expect(throws: SwitchbackError.self, "a certificate not for signatures") {
            _ = try await Self.verify(try tls.presentation(), trusting: tls.rootPEM)
        }
        #expect(notForSigning?.message.contains("end-entity") == true)
        // A chain that leads to the anchor but a signature by another key: the certificate's key is the one used.
        var forged = try authority.presentation().split(separator: ".").map(String.init)
        forged[2] = Base64URL.encode(try P256.Signing.PrivateKey().signature(for: Data((forged[0] + "." + forged[1]).utf8)).rawRepresentation) + "~"
        await #expect(throws: SwitchbackError.self, "signed by another key") {
            _ = try await Self.verify(forged.joined(separator: "."), trusting: authority.rootPEM)
        }
    }

    @Test("mdoc document signers: the certificate alone, signed by an anchor; an intermediate, another root or a CA certificate is refused")
    func documentSigners() async throws {
        let issuer = try EmulatedAuthority(name: "IACA", dnsName: "pid.example.com", documentSigning: true)
        let signers = try X509DocumentSigners(anchorsPEM: issuer.rootPEM, clock: SystemClock())
        let signer = try await signers.documentSigner(certificates: [issuer.leaf])
        #expect(signer.key == issuer.key.publicKey.x963Representation && signer.authorities == [issuer.rootKeyIdentifier])
        let chained = await #expect(throws: SwitchbackError.self) {
            _ = try await signers.documentSigner(certificates: [issuer.leaf, issuer.leaf])
        }
        #expect(chained?.message.contains("alone") == true)
        let stranger = try EmulatedAuthority(name: "Another IACA", dnsName: "pid.example.com", documentSigning: true)
        await #expect(throws: SwitchbackError.self) { _ = try await signers.documentSigner(certificates: [stranger.leaf]) }
    }

    @Test("a document signer's certificate names id-mdl-kp-mdlDS (ISO/IEC 18013-5 Annex B), critical or not; one without it signs no mdoc")
    func documentSigningPurpose() async throws {
        // Critical, as Annex B writes it: understood, not refused as an unknown critical extension.
        let critical = try EmulatedAuthority(name: "IACA", dnsName: "pid.example.com", documentSigning: true)
        _ = try await X509DocumentSigners(anchorsPEM: critical.rootPEM, clock: SystemClock()).documentSigner(certificates: [critical.leaf])
        // Not critical, as Apple's test document signer writes it.
        let plain = try EmulatedAuthority(name: "IACA", dnsName: "pid.example.com", documentSigning: true, documentSigningCritical: false)
        _ = try await X509DocumentSigners(anchorsPEM: plain.rootPEM, clock: SystemClock()).documentSigner(certificates: [plain.leaf])
        // Any other certificate under the IACA (one for TLS, say) signs no mdoc; it may still sign status lists.
        let other = try EmulatedAuthority(name: "IACA", dnsName: "pid.example.com")
        let signers = try X509DocumentSigners(anchorsPEM: other.rootPEM, clock: SystemClock())
        let refused = await #expect(throws: SwitchbackError.self) { _ = try await signers.documentSigner(certificates: [other.leaf]) }
        #expect(refused?.message.contains("not for document signing") == true, "\(String(describing: refused))")
        _ = try await signers.statusListSigner(certificates: [other.leaf])
        // An SD-JWT VC issuer's certificate restricted to mdocs by a critical extended key usage is refused there.
        await #expect(throws: SwitchbackError.self) {
            _ = try await X509IssuerKeys.validatedChain([critical.leaf], anchors: [try Certificate(pemEncoded: critical.rootPEM)], now: Date())
        }
    }

    @Test("a chain carrying a certificate that certifies nothing in it is refused: it would name an authority for trusted_authorities")
    func unusedCertificates() async throws {
        let issuer = try EmulatedAuthority(name: "Issuer", dnsName: "pid.example.com")
        let stranger = try EmulatedAuthority(name: "Wanted Authority", dnsName: "wanted.example.com")
        let anchors = [try Certificate(pemEncoded: issuer.rootPEM)]
        _ = try await X509IssuerKeys.validatedChain([issuer.leaf], anchors: anchors, now: Date())
        let padded = await #expect(throws: SwitchbackError.self) {
            _ = try await X509IssuerKeys.validatedChain([issuer.leaf, stranger.leaf], anchors: anchors, now: Date())
        }
        #expect(padded?.message.contains("does not certify") == true)
        // The authorities are the path's issuers, the anchor's key identifier; nothing from an invalid chain.
        let keys = try X509IssuerKeys(anchorsPEM: issuer.rootPEM, clock: SystemClock())
        #expect(await keys.authorities(of: [issuer.leaf]) == [issuer.rootKeyIdentifier])
        #expect(await keys.authorities(of: [stranger.leaf]).isEmpty)
        // An issuer under a shared anchor whose certificate claims another authority's key identifier: the
        // authority is the one that signed it, not the one it claims.
        let claiming = try EmulatedAuthority(name: "Claiming Issuer", dnsName: "pid.example.com", claimingAuthority: stranger.rootKeyIdentifier)
        let shared = try X509IssuerKeys(anchorsPEM: claiming.rootPEM + stranger.rootPEM, clock: SystemClock())
        #expect(await shared.authorities(of: [claiming.leaf]) == [claiming.rootKeyIdentifier])
    }
}
