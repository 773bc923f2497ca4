import Foundation
import Crypto
@_spi(SwitchbackInternals) public import Switchback
import SwitchbackVerification

/// The wallet's mdoc presentation (OpenID4VP 1.0 §B.2.5, ISO/IEC 18013-5 §8.3.2.1.2.2): a `DeviceResponse`
/// with one document, the asked elements' `IssuerSignedItemBytes` as issued, and a device signature over
/// `DeviceAuthentication` for this request.
extension EmulatedWallet {
    /// `[null, null, ["OpenID4VPHandover", SHA-256([client_id, nonce, jwkThumbprint, response_uri])]]` (§B.2.6.1),
    /// the thumbprint being RFC 7638's of the key the answer is encrypted to. Written here from the
    /// specification, not taken from the verifier's code.
    static func sessionTranscript(clientID: String, nonce: String, encryptionKey: [String: JSONValue], responseURI: String) -> CBOR {
        var thumbprint: CBOR = .null
        if case .string(let crv)? = encryptionKey["crv"], case .string(let kty)? = encryptionKey["kty"], case .string(let x)? = encryptionKey["x"],
            case .string(let y)? = encryptionKey["y"]
        {
            let members = #"{"crv":"\#(crv)","kty":"\#(kty)","x":"\#(x)","y":"\#(y)"}"#
            thumbprint = .bytes(Data(SHA256.hash(data: Data(members.utf8))))
        }
        let info = CBOR.array([.text(clientID), .text(nonce), thumbprint, .text(responseURI)])
        return .array([.null, .null, .array(["OpenID4VPHandover", .bytes(Data(SHA256.hash(data: info.encoded)))])])
    }

    /// The base64url `DeviceResponse` disclosing `elements` of `held`; with `tampered`, the first element's
    /// value is changed after issuance, so that its digest no longer matches.
    func presentMDoc(_ held: EmulatedIssuer.MDocCredential, elements: [String], transcript: CBOR, tampered: Bool = false) throws -> String {
        var items = elements.compactMap { held.items[$0] }
        if tampered, let first = items.first?.embedded, case .map(var pairs) = try CBOR.decode(first),
            let index = pairs.firstIndex(where: { $0.key == "elementValue" })
        {
            pairs[index].value = "Mallory"
            items[0] = .tagged(24, .bytes(CBOR.map(pairs).encoded))
        }
        let deviceNameSpaces = CBOR.tagged(24, .bytes(CBOR.map([]).encoded))
        let deviceAuthentication = CBOR.array(["DeviceAuthentication", transcript, .text(held.docType), deviceNameSpaces])
        let signature = try COSE.sign1(payload: CBOR.tagged(24, .bytes(deviceAuthentication.encoded)).encoded, detached: true, with: holder)
        let document = CBOR.map([
            .init("docType", .text(held.docType)),
            .init(
                "issuerSigned",
                .map([.init("nameSpaces", .map([.init(.text(held.nameSpace), .array(items))])), .init("issuerAuth", held.issuerAuth)])),
            .init("deviceSigned", .map([.init("nameSpaces", deviceNameSpaces), .init("deviceAuth", .map([.init("deviceSignature", signature)]))])),
        ])
        let response = CBOR.map([.init("version", "1.0"), .init("documents", .array([document])), .init("status", .unsigned(0))])
        return Base64URL.encode(response.encoded)
    }

    /// The PID mdoc disclosing `elements`, signed for a request of `clientID` and `nonce` whose answer is
    /// encrypted to `encryptionKey` and posted to `responseURI`.
    public func mdocPresentation(
        disclosing elements: [String], clientID: String, nonce: String, encryptionKey: [String: JSONValue], responseURI: String
    )
        throws -> String
    {
        try presentMDoc(
            mdoc, elements: elements,
            transcript: Self.sessionTranscript(clientID: clientID, nonce: nonce, encryptionKey: encryptionKey, responseURI: responseURI))
    }
}
