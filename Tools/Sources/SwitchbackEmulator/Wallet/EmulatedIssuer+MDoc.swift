package import Foundation
package import Crypto
@_spi(SwitchbackInternals) import Switchback
package import SwitchbackVerification

/// The same issuer as an ISO/IEC 18013-5 mdoc issuer: a Mobile Security Object signed with its end-entity
/// key as document signer (COSE_Sign1, ES256, the certificate in `x5chain`, §9.1.2.4), holding the digest of
/// every data element (§9.1.2.5) and the holder's device key.
extension EmulatedIssuer {
    /// An mdoc the wallet holds: the `issuerAuth` and one `IssuerSignedItemBytes` per data element.
    public struct MDocCredential: Sendable {
        public let docType: String
        public let nameSpace: String
        /// COSE_Sign1 over the tag-24 MSO.
        package let issuerAuth: CBOR
        /// `#6.24(bstr .cbor IssuerSignedItem)` by element identifier.
        package let items: [String: CBOR]
    }

    /// Issues an mdoc of `docType` with `elements` in `nameSpace`, for the holder's device key, valid from
    /// `validFrom` until `validUntil`; with `statusIndex`, its MSO refers to its entry in the status list, with
    /// `identifier` to its identifier in the identifier list (ISO/IEC 18013-5 second edition), and with
    /// `statusCertificate` names that certificate (DER) as the one the list's signer leads to.
    package func issueMDoc(
        docType: String, nameSpace: String, elements: [String: CBOR], holder: P256.Signing.PublicKey, validFrom: Date = Date(),
        validUntil: Date, statusIndex: Int? = nil, identifier: Data? = nil, statusCertificate: Data? = nil
    ) throws -> MDocCredential {
        var items: [String: CBOR] = [:]
        var digests: [CBOR.Pair] = []
        // Digest IDs in another order than the elements', as issuers shuffle them (§9.1.2.5).
        for (digestID, name) in elements.keys.shuffled().enumerated() {
            let item = CBOR.map([
                .init("digestID", .unsigned(UInt64(digestID))), .init("random", .bytes(Data((0..<24).map { _ in UInt8.random(in: 0...255) }))),
                .init("elementIdentifier", .text(name)), .init("elementValue", elements[name] ?? .null),
            ])
            let wrapped = CBOR.tagged(24, .bytes(item.encoded))
            items[name] = wrapped
            digests.append(.init(.unsigned(UInt64(digestID)), .bytes(Data(SHA256.hash(data: wrapped.encoded)))))
        }
        let point = holder.x963Representation.dropFirst()
        var mso = CBOR.map([
            .init("version", "1.0"), .init("digestAlgorithm", "SHA-256"), .init("valueDigests", .map([.init(.text(nameSpace), .map(digests))])),
            .init(
                "deviceKeyInfo",
                .map([
                    .init(
                        "deviceKey",
                        .map([
                            .init(.int(1), .int(2)), .init(.int(-1), .int(1)), .init(.int(-2), .bytes(point.prefix(32))),
                            .init(.int(-3), .bytes(point.suffix(32))),
                        ]))
                ])),
            .init("docType", .text(docType)),
            .init(
                "validityInfo",
                .map([.init("signed", Self.tdate(validFrom)), .init("validFrom", Self.tdate(validFrom)), .init("validUntil", Self.tdate(validUntil))])
            ),
        ])
        // ISO/IEC 18013-5 second edition's status: the same status list, by index and URI; or the identifier list.
        let certificate = statusCertificate.map { [CBOR.Pair("certificate", .bytes($0))] } ?? []
        var status: CBOR?
        if let statusIndex {
            status = .map([
                .init("status_list", .map([.init("idx", .unsigned(UInt64(statusIndex))), .init("uri", .text(statusListURI))] + certificate))
            ])
        } else if let identifier {
            status = .map([.init("identifier_list", .map([.init("id", .bytes(identifier)), .init("uri", .text(identifierListURI))] + certificate))])
        }
        if let status, case .map(var pairs) = mso {
            pairs.append(.init("status", status))
            mso = .map(pairs)
        }
        let payload = CBOR.tagged(24, .bytes(mso.encoded)).encoded
        return MDocCredential(
            docType: docType, nameSpace: nameSpace,
            issuerAuth: try COSE.sign1(payload: payload, unprotected: [.init(.int(33), .bytes(authority.leaf))], with: authority.key), items: items)
    }

    /// A `tdate` (tag 0, RFC 3339 in UTC, whole seconds).
    package static func tdate(_ date: Date) -> CBOR {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return .tagged(0, .text(formatter.string(from: date)))
    }
}

/// COSE_Sign1 with ES256 (RFC 9052 §4.2, §4.4), for the emulated issuer and wallet.
enum COSE {
    /// `[protected {1: -7}, unprotected, payload, r‖s]`; a nil `payload` in the structure when `detached`.
    static func sign1(
        payload: Data, protected extra: [CBOR.Pair] = [], unprotected: [CBOR.Pair] = [], detached: Bool = false, with key: P256.Signing.PrivateKey
    ) throws -> CBOR {
        let protected = CBOR.map([.init(.int(1), .int(-7))] + extra).encoded
        let structure = CBOR.array([.text("Signature1"), .bytes(protected), .bytes(Data()), .bytes(payload)]).encoded
        let signature = try key.signature(for: structure).rawRepresentation
        return .array([.bytes(protected), .map(unprotected), detached ? .null : .bytes(payload), .bytes(signature)])
    }
}
