public import Foundation
public import Crypto
@_spi(SwitchbackInternals) public import Switchback
import SwitchbackVerification

/// Apple Wallet holding a driver's license, as Verify with Wallet answers an app (Apple's "Verifying Wallet
/// identity requests"): the requested elements of an ISO/IEC 18013-5 mDL, device-signed over the session
/// transcript `[null, null, ["AppleIdentityPresentment_1.0", nonce, merchantID, teamID, pkRHash]]`, wrapped in
/// `{"identity": DeviceResponse}` and encrypted with HPKE (P-256, HKDF-SHA256, AES-128-GCM) to the merchant's
/// Identity Access key, in the `APPLE-HPKE-v1` envelope. Written here from Apple's description, and checked
/// against Apple's own sample data by the companion's tests.
public struct EmulatedAppleWallet: IdentityDocumentProvider {
    /// The mDL's document type and namespace (ISO/IEC 18013-5 §7.1).
    public static let docType = "org.iso.18013.5.1.mDL"
    public static let nameSpace = "org.iso.18013.5.1"

    /// What the user does with the sheet.
    public enum Decision: Sendable {
        case share
        case decline
    }

    let wallet: EmulatedWallet
    let license: EmulatedIssuer.MDocCredential
    /// The merchant's Identity Access key as Apple registered it, and the app's team.
    let merchantKey: P256.KeyAgreement.PublicKey
    let teamID: String
    let decision: Decision

    /// A Wallet with a license from `issuer`, answering apps of `teamID` whose merchant registered `merchantKey`;
    /// `portrait` is the license's photo (a real one is tens of kilobytes).
    public init(
        issuer: EmulatedIssuer, merchantKey: P256.KeyAgreement.PublicKey, teamID: String, decision: Decision = .share,
        portrait: Data = Data([0xFF, 0xD8, 0xFF, 0xD9]), now: Date = Date()
    ) throws {
        wallet = try EmulatedWallet(issuer: issuer, now: now)
        license = try issuer.issueMDoc(
            docType: Self.docType, nameSpace: Self.nameSpace,
            elements: [
                "given_name": "Erika", "family_name": "Mustermann", "birth_date": .tagged(1004, "1984-01-26"), "age_over_21": .bool(true),
                "age_in_years": .unsigned(42), "document_number": "D1234567", "issuing_authority": "Emulated DMV", "issuing_country": "US",
                "sex": .unsigned(2),
                "portrait": .bytes(portrait),
            ], holder: wallet.holder.publicKey, validFrom: now - 86400, validUntil: now + 365 * 86400)
        self.merchantKey = merchantKey
        self.teamID = teamID
        self.decision = decision
    }

    /// The ISO 18013-5 elements a PassKit element comes back as, from the table on Apple's
    /// `PKIdentityDriversLicenseDescriptor` page (developer.apple.com/documentation/passkit/pkidentitydriverslicensedescriptor;
    /// its AAMVA-namespace elements are not held here). `sex` (iOS 17.2) is not in that table; ISO 18013-5
    /// names the element `sex`.
    static func identifiers(_ element: IdentityDocumentRequest.Element) -> [String] {
        switch element {
        case .givenName: ["given_name"]
        case .familyName: ["family_name"]
        case .portrait: ["portrait"]
        case .address: ["resident_address", "resident_city", "resident_country", "resident_postal_code"]
        case .dateOfBirth: ["birth_date"]
        case .documentNumber: ["document_number"]
        case .documentIssueDate: ["document_issue_date"]
        case .documentExpirationDate: ["expiry_date"]
        case .drivingPrivileges: ["driving_privileges"]
        case .issuingAuthority: ["issuing_authority", "issuing_jurisdiction", "issuing_country", "un_distinguishing_sign"]
        case .age: ["age_in_years"]
        case .ageAtLeast(let years): ["age_over_\(years)"]
        case .sex: ["sex"]
        }
    }

    /// What the license discloses for `element`: the elements it holds of those above; for `ageAtLeast(NN)`
    /// without an `age_over_NN`, `age_in_years`, as Apple's page says the framework falls back.
    func disclosed(_ element: IdentityDocumentRequest.Element) -> [String] {
        let held = Self.identifiers(element).filter { license.items[$0] != nil }
        if case .ageAtLeast = element, held.isEmpty { return Self.identifiers(.age).filter { license.items[$0] != nil } }
        return held
    }

    public func requestDocument(_ request: IdentityDocumentRequest, merchantIdentifier: String, nonce: Data) async throws -> Data {
        guard request.document == .driversLicense else { throw IdentityDocumentFailure.notSupported.error }
        guard nonce.count <= 64 else { throw IdentityDocumentFailure.invalidNonce.error }
        guard decision == .share else { throw IdentityDocumentFailure.cancelled.error }
        let pkRHash = Data(SHA256.hash(data: merchantKey.x963Representation))
        let transcript = CBOR.array([
            .null, .null, .array(["AppleIdentityPresentment_1.0", .bytes(nonce), .text(merchantIdentifier), .text(teamID), .bytes(pkRHash)]),
        ])
        let elements = request.fields.flatMap { disclosed($0.element) }
        guard let encoded = Base64URL.decode(try wallet.presentMDoc(license, elements: elements, transcript: transcript)) else {
            throw IdentityDocumentFailure.unknown.error
        }
        let plaintext = CBOR.map([.init("identity", try CBOR.decode(encoded))]).encoded
        let info = transcript.encoded
        var sender = try HPKE.Sender(
            recipientKey: merchantKey, ciphersuite: HPKE.Ciphersuite(kem: .P256_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128), info: info)
        let ciphertext = try sender.seal(plaintext, authenticating: Data())
        return CBOR.map([
            .init("algorithm", "APPLE-HPKE-v1"),
            .init(
                "params",
                .map([
                    .init("mode", .unsigned(0)), .init("pkEm", .bytes(sender.encapsulatedKey)), .init("pkRHash", .bytes(pkRHash)),
                    .init("infoHash", .bytes(Data(SHA256.hash(data: info)))),
                ])),
            .init("data", .bytes(ciphertext)),
        ]).encoded
    }
}
