import Crypto
package import Foundation
import Logging
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509
package import SwitchbackVerification
@_spi(SwitchbackInternals) package import Switchback

/// Issuer keys from the credential's own `x5c` chain, validated to one of the verifier's trust anchors
/// (SD-JWT VC §2.5): the chain must lead to an anchor under RFC 5280's rules at the verifier's clock; the
/// end-entity certificate must be for signing (digitalSignature, not a CA); and the credential's signed
/// `iss` must be an https URL whose host is a DNS name of that certificate (its subjectAltName). Without
/// that last rule any certificate under an anchor could issue in another issuer's name. The key is the
/// end-entity certificate's (P-256, P-384 or P-521).
package struct X509IssuerKeys: CredentialIssuerKeys {
    let anchors: [Certificate]
    let clock: any WallClock

    package init(anchorsPEM: String, clock: any WallClock) throws {
        anchors = try PEMDocument.parseMultiple(pemString: anchorsPEM).map { try Certificate(pemDocument: $0) }
        guard !anchors.isEmpty else { throw SwitchbackError(.invalidConfiguration, "no trust anchor in the PEM") }
        self.clock = clock
    }

    private static func refused(_ why: String) -> SwitchbackError {
        SwitchbackError(.presentationInvalid, "the presentation is refused: \(why)")
    }

    /// The anchors' key identifiers (their Subject Key Identifiers): the authorities an mdoc issued under one
    /// of them names (``authorities(on:)``).
    package var anchorAuthorities: Set<Data> {
        Set(anchors.compactMap { (try? $0.extensions.subjectKeyIdentifier)??.keyIdentifier }.map { Data($0) })
    }

    /// The certificates of a PEM file, DER, in its order (a chain as `x5c` carries it: leaf first).
    package static func certificates(pem: String) throws -> [Data] {
        try PEMDocument.parseMultiple(pemString: pem).map { Data($0.derBytes) }
    }

    package func keys(issuer: String?, certificates: [Data], keyID: String?) async throws -> JWKSCache {
        let chain = try await Self.validatedChain(certificates, anchors: anchors, now: clock.now())
        guard let host = Self.host(of: issuer) else {
            throw Self.refused("the credential's signed iss is not an https URL its certificate can name")
        }
        guard Self.dnsNames(of: chain[0]).contains(host) else { throw Self.refused("the issuer's host is not a DNS name of its certificate") }
        return try keySet(of: chain[0], keyID: keyID)
    }

    /// The keys of the Status List Token at `uri` (draft-ietf-oauth-status-list-20 §11.3). Signed by the
    /// issuer's own certificate (its leaf names the `iss` host), as ``keys(issuer:certificates:keyID:)`` takes
    /// it. Or by a Status Issuer of its own, §11.3's certificate way: its chain validated to an anchor as an
    /// issuer's is, no anchor inside it (HAIP 1.0 §6.1), its certificate issued by the same CA as the
    /// credential's (the certificate after the leaf on both validated paths, §11.3: "issued by the same
    /// Certificate Authority"), so that another CA under a shared root cannot sign lists for this issuer, and
    /// naming the host the list is served from (`uri`'s), which the credential's signed `status` chose: another
    /// issuer the same CA certified, able to serve bytes at that URL, still cannot sign the list. The extended
    /// key usage §11.3 names for a Status Issuer (id-kp-oauthStatusSigning) has no number yet (§14.9), so none
    /// is asked.
    package func statusListKeys(uri: String, issuer: String?, credentialChain: [Data], certificates: [Data], keyID: String?) async throws
        -> JWKSCache
    {
        if let host = Self.host(of: issuer), let first = certificates.first, let leaf = try? Certificate(derEncoded: Array(first)),
            Self.dnsNames(of: leaf).contains(host)
        {
            return try await keys(issuer: issuer, certificates: certificates, keyID: keyID)
        }
        let anchorsDER = Set(
            anchors.compactMap { anchor -> Data? in
                var serializer = DER.Serializer()
                guard (try? serializer.serialize(anchor)) != nil else { return nil }
                return Data(serializer.serializedBytes)
            })
        guard anchorsDER.isDisjoint(with: certificates) else { throw Self.refused("the status list's x5c carries a trust anchor (HAIP 1.0 §6.1)") }
        let list = try await Self.validatedChain(certificates, anchors: anchors, now: clock.now())
        let credential = try await Self.validatedChain(credentialChain, anchors: anchors, now: clock.now())
        guard list.count >= 2, credential.count >= 2, list[1] == credential[1] else {
            throw Self.refused("the status list is signed by a Status Issuer whose certificate another CA issued than the credential's")
        }
        guard let host = URL(string: uri)?.host?.lowercased(), Self.dnsNames(of: list[0]).contains(host) else {
            throw Self.refused("the status list is signed by a Status Issuer whose certificate does not name the list's host")
        }
        return try keySet(of: list[0], keyID: keyID)
    }

    /// `issuer`'s host, lowercased, when it is an https URL.
    private static func host(of issuer: String?) -> String? {
        guard let issuer, let url = URL(string: issuer), url.scheme?.lowercased() == "https", let host = url.host else { return nil }
        return host.lowercased()
    }

    /// The DNS names of `certificate`'s subjectAltName, lowercased.
    private static func dnsNames(of certificate: Certificate) -> [String] {
        (try? certificate.extensions.subjectAlternativeNames)??.compactMap { name -> String? in
            if case .dnsName(let dns) = name { return dns.lowercased() }
            return nil
        } ?? []
    }

    /// The key set of one certificate's EC key (P-256, P-384 or P-521), named `keyID` when given.
    private func keySet(of certificate: Certificate, keyID: String?) throws -> JWKSCache {
        let jwk: [String: JSONValue]
        if let key = P256.Signing.PublicKey(certificate.publicKey) {
            jwk = PublicJWK.ec(curve: "P-256", x963: key.x963Representation)
        } else if let key = P384.Signing.PublicKey(certificate.publicKey) {
            jwk = PublicJWK.ec(curve: "P-384", x963: key.x963Representation)
        } else if let key = P521.Signing.PublicKey(certificate.publicKey) {
            jwk = PublicJWK.ec(curve: "P-521", x963: key.x963Representation)
        } else {
            throw Self.refused("the issuer's certificate key is not an EC key this verifier takes")
        }
        var named = jwk
        // A kid beside x5c names this certificate's key; the key set must answer to it.
        if let keyID { named["kid"] = .string(keyID) }
        let document = JSONValue.object(["keys": .array([.object(named)])]).description
        return try JWKSCache(jwksJSON: Data(document.utf8), clock: clock, logger: Logger(label: "switchback.x5c"))
    }

    /// The key identifiers of the authorities that issued a credential whose chain is `certificates`: the
    /// Subject Key Identifiers of the issuing certificates on its validated path to an anchor (the anchor
    /// included), which a DCQL `trusted_authorities` query of type `aki` names (OpenID4VP 1.0 §6.1.1.1).
    /// Read from the path's issuers, never from the leaf's own Authority Key Identifier, which its issuer
    /// writes and nothing checks: another issuer under the same anchor could claim any authority's. Empty
    /// when the chain does not validate.
    package func authorities(of certificates: [Data]) async -> Set<Data> {
        guard let path = try? await Self.validatedChain(certificates, anchors: anchors, now: clock.now()) else { return [] }
        return Self.authorities(on: path)
    }

    /// The Subject Key Identifiers of a validated path's issuing certificates (all but the leaf).
    static func authorities(on path: [Certificate]) -> Set<Data> {
        Set(path.dropFirst().compactMap { (try? $0.extensions.subjectKeyIdentifier)??.keyIdentifier }.map { Data($0) })
    }

    /// The chain (`x5c` or `x5chain`, leaf first, DER) read, led to one of `anchors` under RFC 5280's rules
    /// at `now`, its leaf an end-entity certificate for signatures; returns the validated path, leaf first and
    /// the anchor last.
    /// With `purpose`, the leaf's extended key usage must name it, and the extension is then understood
    /// when critical (as ISO/IEC 18013-5 Annex B marks a document signer's); without, a critical extended
    /// key usage fails the chain, as RFC 5280 §4.2 has it for an extension the verifier does not act on.
    static func validatedChain(
        _ certificates: [Data], anchors: [Certificate], now: Date, purpose: ExtendedKeyUsage.Usage? = nil
    ) async throws -> [Certificate] {
        guard !certificates.isEmpty, certificates.count <= 8 else { throw Self.refused("the credential carries no x5c chain (or one longer than 8)") }
        let chain: [Certificate]
        do {
            chain = try certificates.map { try Certificate(derEncoded: Array($0)) }
        } catch {
            throw Self.refused("a certificate of the x5c chain cannot be read")
        }
        var verifier = Verifier(rootCertificates: CertificateStore(anchors)) {
            RFC5280Policy(fixedExpiryValidationTime: now)
            if let purpose { LeafPurpose(usage: purpose) }
        }
        guard case .validCertificate(let path) = await verifier.validate(leaf: chain[0], intermediates: CertificateStore(chain.dropFirst())) else {
            throw Self.refused("the x5c chain does not lead to a trust anchor, or a certificate is not valid now")
        }
        // Each certificate must certify the one before it (RFC 7515 §4.1.6, RFC 9360 §2): one the path does
        // not use would still be read for trusted_authorities, and would let a chain name any authority.
        guard Array(path.prefix(chain.count)) == chain else {
            throw Self.refused("the x5c chain carries a certificate that does not certify the one before it")
        }
        let leaf = chain[0]
        guard (try? leaf.extensions.keyUsage)??.digitalSignature == true,
            (try? leaf.extensions.basicConstraints).flatMap({ $0 }).map({ if case .isCertificateAuthority = $0 { false } else { true } }) ?? true
        else { throw Self.refused("the issuer's certificate is not an end-entity certificate for signatures") }
        return Array(path)
    }
}

/// The leaf's extended key usage must name `usage`; the extension is this policy's to verify when critical.
struct LeafPurpose: VerifierPolicy {
    let usage: ExtendedKeyUsage.Usage
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [.X509ExtensionID.extendedKeyUsage]

    mutating func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) async -> PolicyEvaluationResult {
        guard (try? chain.leaf.extensions.extendedKeyUsage)??.contains(usage) == true else {
            return .failsToMeetPolicy(reason: "the leaf's extended key usage does not name the purpose asked")
        }
        return .meetsPolicy
    }
}

/// mdoc document signers (ISO/IEC 18013-5 §9.3.3): the `x5chain` of an mdoc's `issuerAuth` must lead to one
/// of the verifier's mdoc trust anchors (the IACA roots of the issuers it accepts), kept apart from the
/// SD-JWT VC issuers' anchors: an mdoc names no issuer URL a certificate could be held to, so an anchor here
/// vouches for every document type. The signer's certificate must be for document signing (its extended
/// key usage names `1.0.18013.5.1.2`, id-mdl-kp-mdlDS, Annex B Table B.4) and, with ``revocation``, not be
/// on its IACA's revocation list.
///
/// The same anchors sign the status lists of the documents (`CredentialIssuerKeys`, for ``StatusListChecker``):
/// a status list token's `x5c` must be one certificate signed by an anchor, as a document signer's is; no
/// extended key usage is asked of it (none is defined for status lists).
package struct X509DocumentSigners: MDocIssuerKeys, CredentialIssuerKeys {
    /// The anchors and the clock, read as the SD-JWT VC issuers' are.
    private let trust: X509IssuerKeys
    /// The IACAs' revocation lists; nil checks none (a verifier without network, in tests and benchmarks).
    private let revocation: DocumentSignerRevocation?
    var anchors: [Certificate] { trust.anchors }
    var clock: any WallClock { trust.clock }

    /// id-mdl-kp-mdlDS (ISO/IEC 18013-5 Annex B, Table B.4; as spruceid/isomdl's Annex B checks name it).
    static let documentSigning = ExtendedKeyUsage.Usage(oid: [1, 0, 18013, 5, 1, 2])

    init(anchorsPEM: String, clock: any WallClock, revocation: DocumentSignerRevocation?) throws {
        trust = try X509IssuerKeys(anchorsPEM: anchorsPEM, clock: clock)
        self.revocation = revocation
    }

    /// Checks no revocation (a verifier without network: the benchmarks).
    package init(anchorsPEM: String, clock: any WallClock) throws {
        try self.init(anchorsPEM: anchorsPEM, clock: clock, revocation: nil)
    }

    package func keys(issuer: String?, certificates: [Data], keyID: String?) async throws -> JWKSCache {
        let signer = try await statusListSigner(certificates: certificates)
        // A JWT status list's signature is verified by the key set this returns, after: its signer's
        // revocation is checked here, before the key is given out.
        try await signer.confirm?()
        var jwk = PublicJWK.ec(curve: "P-256", x963: signer.key)
        if let keyID { jwk["kid"] = .string(keyID) }
        let document = JSONValue.object(["keys": .array([.object(jwk)])]).description
        return try JWKSCache(jwksJSON: Data(document.utf8), clock: clock, logger: Logger(label: "switchback.x5chain"))
    }

    /// Its key and the key identifier of the IACA that signed it (``X509IssuerKeys/authorities(on:)``), from
    /// one validation.
    package func documentSigner(certificates: [Data]) async throws -> MDocSigner {
        if let first = certificates.first, let leaf = try? Certificate(derEncoded: Array(first)),
            (try? leaf.extensions.extendedKeyUsage)??.contains(Self.documentSigning) != true
        {
            throw SwitchbackError(
                .presentationInvalid, "the mdoc is refused: its signer's certificate is not for document signing (extended key usage 1.0.18013.5.1.2)"
            )
        }
        return try await signedByRoot(certificates, purpose: Self.documentSigning)
    }

    /// A status list's signer: led to an anchor as a document signer is, and not revoked, with no extended
    /// key usage asked.
    package func statusListSigner(certificates: [Data]) async throws -> MDocSigner {
        try await signedByRoot(certificates)
    }

    /// A status or identifier list's signer under the certificate an mdoc's MSO names for its list (ISO/IEC
    /// 18013-5 second edition: the list's top certificate must be signed by it). The certificate is inside
    /// the MSO the document signer signed, so the issuer chose it; the list's chain is validated to it as to
    /// an anchor, at the verifier's clock, its signer an end-entity certificate for signatures with a P-256
    /// key. No revocation list is read for it (none is named for a trust point).
    package func statusListSigner(certificates: [Data], trustPoint: Data) async throws -> MDocSigner {
        guard let point = try? Certificate(derEncoded: Array(trustPoint)) else {
            throw SwitchbackError(.presentationInvalid, "the mdoc is refused: the certificate its status names cannot be read")
        }
        let chain = try await X509IssuerKeys.validatedChain(certificates, anchors: [point], now: clock.now())
        guard let key = P256.Signing.PublicKey(chain[0].publicKey) else {
            throw SwitchbackError(.presentationInvalid, "the mdoc is refused: its status list's signer key is not P-256")
        }
        return MDocSigner(key: key.x963Representation, authorities: X509IssuerKeys.authorities(on: chain))
    }

    /// The signer, its revocation left to ``MDocSigner/confirm`` (run once its signature verified).
    private func signedByRoot(_ certificates: [Data], purpose: ExtendedKeyUsage.Usage? = nil) async throws -> MDocSigner {
        // ISO/IEC 18013-5 Annex B: the IACA root signs the document signer certificate itself; an
        // intermediate would let a CA under the root (for another purpose) sign documents.
        guard certificates.count == 1 else {
            throw SwitchbackError(
                .presentationInvalid, "the mdoc is refused: its x5chain must be the document signer certificate alone, signed by the root")
        }
        let chain = try await X509IssuerKeys.validatedChain(certificates, anchors: anchors, now: clock.now(), purpose: purpose)
        guard let key = P256.Signing.PublicKey(chain[0].publicKey) else {
            throw SwitchbackError(.presentationInvalid, "the mdoc is refused: its document signer key is not P-256")
        }
        var confirm: (@Sendable () async throws -> Void)?
        if let revocation {
            let (leaf, root) = (chain[0], chain[chain.count - 1])
            confirm = { try await revocation.check(leaf, issuedBy: root) }
        }
        return MDocSigner(key: key.x963Representation, authorities: X509IssuerKeys.authorities(on: chain), confirm: confirm)
    }
}
