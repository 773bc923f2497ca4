public import Foundation
public import Crypto
@_spi(SwitchbackInternals) import Switchback
import SwiftASN1
public import X509

/// A credential issuer and a verifier's certificate for the emulated wallet ecosystem: an authority (a
/// self-signed root) over an end-entity signing certificate, as SD-JWT VC §2.5 (`x5c`) and OpenID4VP 1.0
/// §5.9.3 (`x509_hash`) expect. The companion trusts the issuer's root and signs its requests with the
/// verifier's key and chain.
public struct EmulatedAuthority: Sendable {
    /// The root certificate, PEM: the trust anchor to configure.
    public let rootPEM: String
    /// The end-entity key.
    public let key: P256.Signing.PrivateKey
    /// The end-entity certificate, DER (the `x5c` of what the key signs).
    public let leaf: Data
    /// The root's key identifier: its Subject Key Identifier, and the leaf's Authority Key Identifier (what
    /// a DCQL `trusted_authorities` query of type `aki` names).
    public let rootKeyIdentifier: Data
    /// The root's name and key, which sign its revocation list (``revocationList(revokingLeaf:)``).
    public let rootName: DistinguishedName
    let rootKey: P256.Signing.PrivateKey
    /// The end-entity certificate's serial number.
    public let leafSerial: Certificate.SerialNumber

    /// A root named `name` over an end-entity certificate for `dnsName`, valid from a day before `now` for
    /// `days`; for signatures, or (`signing: false`) for key agreement only, as a TLS certificate may be.
    /// `claimingAuthority` writes another key identifier into the end-entity certificate's Authority Key
    /// Identifier than its root's, as a hostile issuer under a shared anchor might. `documentSigning`
    /// makes the end-entity certificate an mdoc document signer's as ISO/IEC 18013-5 Annex B (Table B.4)
    /// profiles it: extended key usage id-mdl-kp-mdlDS (1.0.18013.5.1.2, critical), and the IACA's CRL
    /// distribution point `revocationListURI`. A certificate that signs SD-JWT VCs as well writes the extended
    /// key usage non-critical (`documentSigningCritical: false`, as Apple's test document signer does): a
    /// critical one would restrict the key to mdocs (RFC 5280 §4.2.1.12).
    public init(
        name: String, dnsName: String, now: Date = Date(), validFor days: Double = 365, signing: Bool = true, claimingAuthority: Data? = nil,
        documentSigning: Bool = false, documentSigningCritical: Bool = true, revocationListURI: String? = nil
    ) throws {
        let rootKey = P256.Signing.PrivateKey()
        let identifier = Data(SHA256.hash(data: rootKey.publicKey.x963Representation).prefix(20))
        rootKeyIdentifier = identifier
        let rootName = try DistinguishedName { CommonName(name + " Root") }
        let root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: now - 86400,
            notValidAfter: now + 3650 * 86400, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(keyIdentifier: ArraySlice(identifier))
            }, issuerPrivateKey: .init(rootKey))
        key = P256.Signing.PrivateKey()
        let serial = Certificate.SerialNumber()
        let certificate = try Certificate(
            version: .v3, serialNumber: serial, publicKey: .init(key.publicKey), notValidBefore: now - 86400, notValidAfter: now + days * 86400,
            issuer: rootName, subject: try DistinguishedName { CommonName(name) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(signing ? KeyUsage(digitalSignature: true) : KeyUsage(keyAgreement: true))
                SubjectAlternativeNames([.dnsName(dnsName)])
                AuthorityKeyIdentifier(keyIdentifier: ArraySlice(claimingAuthority ?? identifier))
                if documentSigning {
                    if documentSigningCritical {
                        Critical(try ExtendedKeyUsage([.init(oid: [1, 0, 18013, 5, 1, 2])]))
                    } else {
                        try ExtendedKeyUsage([.init(oid: [1, 0, 18013, 5, 1, 2])])
                    }
                }
                if let revocationListURI { Self.distributionPoint(revocationListURI) }
            }, issuerPrivateKey: .init(rootKey))
        self.rootName = rootName
        self.rootKey = rootKey
        leafSerial = serial
        rootPEM = try root.serializeAsPEM().pemString
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        leaf = Data(serializer.serializedBytes)
    }

    /// Another end-entity certificate for signatures under the same root, for `dnsName`: a party the same CA
    /// certifies, such as a Status Issuer (draft-ietf-oauth-status-list-20 §11.3).
    public func issueSigner(name: String, dnsName: String, now: Date = Date()) throws -> EmulatedSigner {
        let key = P256.Signing.PrivateKey()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: now - 86400, notValidAfter: now + 365 * 86400,
            issuer: rootName, subject: try DistinguishedName { CommonName(name) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(KeyUsage(digitalSignature: true))
                SubjectAlternativeNames([.dnsName(dnsName)])
                AuthorityKeyIdentifier(keyIdentifier: ArraySlice(rootKeyIdentifier))
            }, issuerPrivateKey: .init(rootKey))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return EmulatedSigner(key: key, certificate: Data(serializer.serializedBytes))
    }

    /// The root certificate, DER.
    public var root: Data {
        get throws { Data(try PEMDocument(pemString: rootPEM).derBytes) }
    }

    /// The root's revocation list, listing the end-entity certificate when `revokingLeaf`.
    public func revocationList(revokingLeaf: Bool = false) -> EmulatedRevocationList {
        EmulatedRevocationList(issuer: rootName, key: rootKey, revoked: revokingLeaf ? [leafSerial] : [])
    }

    /// A CRL distribution points extension (RFC 5280 §4.2.1.13) naming `uri` as the point's full name.
    static func distributionPoint(_ uri: String) -> Certificate.Extension {
        var serializer = DER.Serializer()
        serializer.appendConstructedNode(identifier: .sequence) { points in
            points.appendConstructedNode(identifier: .sequence) { point in
                point.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { name in
                    name.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { fullName in
                        fullName.appendPrimitiveNode(identifier: ASN1Identifier(tagWithNumber: 6, tagClass: .contextSpecific)) {
                            $0.append(contentsOf: Array(uri.utf8))
                        }
                    }
                }
            }
        }
        return Certificate.Extension(oid: [2, 5, 29, 31], critical: false, value: serializer.serializedBytes[...])
    }

    /// The end-entity certificate, PEM (a verifier's chain file).
    public var leafPEM: String {
        get throws { try Certificate(derEncoded: Array(leaf)).serializeAsPEM().pemString }
    }
}

/// A key and its certificate (DER), which sign for someone other than the issuer.
public struct EmulatedSigner: Sendable {
    public let key: P256.Signing.PrivateKey
    public let certificate: Data
}

/// An SD-JWT VC issuer (SD-JWT VC §2, RFC 9901 §4): signs credentials with its end-entity key, its chain in
/// `x5c`, every claim selectively disclosable, bound to the holder's key (`cnf.jwk`).
public struct EmulatedIssuer: Sendable {
    /// The issuer identifier, an https URL on the certificate's DNS name (SD-JWT VC §2.5).
    public let issuer: String
    public let authority: EmulatedAuthority
    /// The Status Issuer that signs the issuer's status list when it is not the issuer itself
    /// (draft-ietf-oauth-status-list-20 §11.3, the certificate way): its certificate from the issuer's CA.
    public let statusIssuer: EmulatedSigner?

    /// Its certificate signs SD-JWT VCs and mdocs alike, so it is also profiled as an mdoc document
    /// signer's (``EmulatedAuthority``'s `documentSigning`), naming ``revocationListURI``. With
    /// `separateStatusIssuer`, a Status Issuer of its own (`status.<host>`, under the same root) signs the
    /// SD-JWT VCs' status list.
    public init(host: String = "pid-issuer.example.com", now: Date = Date(), separateStatusIssuer: Bool = false) throws {
        issuer = "https://" + host
        authority = try EmulatedAuthority(
            name: "Emulated PID Issuer", dnsName: host, now: now, documentSigning: true, documentSigningCritical: false,
            revocationListURI: "https://" + host + "/iaca.crl")
        statusIssuer = separateStatusIssuer ? try authority.issueSigner(name: "Emulated Status Issuer", dnsName: "status." + host, now: now) : nil
    }

    /// Where the issuer's root publishes its revocation list (the document signer's CRL distribution point).
    public var revocationListURI: String { issuer + "/iaca.crl" }

    /// A credential the wallet holds: the issuer-signed JWT and one disclosure per claim.
    public struct Credential: Sendable {
        public let vct: String
        /// The issuer-signed JWT.
        public let jwt: String
        /// The disclosure of each claim, by name.
        public let disclosures: [String: String]
    }

    /// Issues a credential of type `vct` with `claims`, for the holder's public key, valid until `expiresAt`;
    /// two decoy digests are mixed in (RFC 9901 §4.2.5).
    /// With `statusIndex`, the credential refers to its entry in the issuer's status list (``statusListURI``).
    public func issue(
        vct: String, claims: [String: String], holder: P256.Signing.PublicKey, issuedAt: Date = Date(), expiresAt: Date, statusIndex: Int? = nil
    ) throws -> Credential {
        var disclosures: [String: String] = [:]
        for (name, value) in claims {
            let salt = Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: 0...255) }))
            disclosures[name] = Base64URL.encode(Data(JSONValue.array([.string(salt), .string(name), .string(value)]).description.utf8))
        }
        let decoys = (0..<2).map { _ in Base64URL.encode(SHA256.hash(data: Data((0..<32).map { _ in UInt8.random(in: 0...255) }))) }
        let digests = disclosures.values.map { Base64URL.encode(SHA256.hash(data: Data($0.utf8))) } + decoys
        let point = holder.x963Representation.dropFirst()
        var payload: [String: JSONValue] = [
            "iss": .string(issuer), "vct": .string(vct), "_sd_alg": "sha-256", "iat": .number(issuedAt.timeIntervalSince1970.rounded(.down)),
            "exp": .number(expiresAt.timeIntervalSince1970.rounded(.down)), "_sd": .array(digests.sorted().map(JSONValue.string)),
            "cnf": .object([
                "jwk": .object([
                    "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point.prefix(32))), "y": .string(Base64URL.encode(point.suffix(32))),
                ])
            ]),
        ]
        if let statusIndex {
            payload["status"] = .object(["status_list": .object(["idx": .number(Double(statusIndex)), "uri": .string(statusListURI)])])
        }
        let header: [String: JSONValue] = ["alg": "ES256", "typ": "dc+sd-jwt", "x5c": .array([.string(authority.leaf.base64EncodedString())])]
        return Credential(vct: vct, jwt: try JWS.sign(header, payload, with: authority.key), disclosures: disclosures)
    }
}

/// Compact JWS with ES256, for the emulated issuer and wallet.
enum JWS {
    static func sign(_ header: [String: JSONValue], _ payload: [String: JSONValue], with key: P256.Signing.PrivateKey) throws -> String {
        let input =
            Base64URL.encode(Data(JSONValue.object(header).description.utf8)) + "."
            + Base64URL.encode(Data(JSONValue.object(payload).description.utf8))
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }
}
