import Crypto
import Foundation
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// Apple's Verify with Wallet with the companion as the server that decrypts and verifies (Apple's
/// "Verifying Wallet identity requests"): the app starts a request bound to its secret and gets a nonce;
/// it asks Wallet with `PKIdentityAuthorizationController` and sends the `encryptedData` it gets back here,
/// where it is decrypted with the merchant's Identity Access key and verified as an ISO/IEC 18013-5 response
/// to this request's session transcript (``AppleIdentityEnvelope``, ``MDocVerifier``). The claims go back to
/// that app only, once.
extension CompanionService {
    static let appleIdentityLifetime: TimeInterval = 300
    /// Wallet's answer holds an mDL with its portrait: more than a start's body.
    static let maximumAppleIdentityBody = 384 * 1024

    /// What verifying needs, made once from the configuration.
    struct AppleIdentityVerifier: Sendable {
        let envelope: AppleIdentityEnvelope
        let documents: MDocVerifier
        let documentTypes: Set<String>
        let merchantIdentifier: String

        init(_ section: ServerConfiguration.AppleIdentity, transport: any HTTPTransport, clock: any WallClock) throws {
            func read(_ path: String) throws -> String {
                do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
                    throw SwitchbackError(.invalidConfiguration, "appleIdentity: \(path) cannot be read")
                }
            }
            guard let key = try? P256.KeyAgreement.PrivateKey(pemRepresentation: try read(section.encryptionKeyFile)) else {
                throw SwitchbackError(.invalidConfiguration, "appleIdentity.encryptionKeyFile is not a P-256 private key in PEM")
            }
            envelope = AppleIdentityEnvelope(key: key, merchantID: section.merchantIdentifier, teamID: section.teamIdentifier)
            let signers = try X509DocumentSigners(
                anchorsPEM: try read(section.issuerTrustAnchorsFile), clock: clock,
                revocation: DocumentSignerRevocation(transport: transport, clock: clock))
            documents = MDocVerifier(
                issuers: signers, clock: clock,
                statusLists: StatusListChecker(transport: transport, issuers: signers, cwtSigners: signers, clock: clock))
            documentTypes = Set(section.documentTypes)
            merchantIdentifier = section.merchantIdentifier
        }
    }

    /// A started request: the app's secret (digest), the nonce Wallet must answer, the attested key.
    struct AppleIdentityRecord: Codable, Sendable {
        let bindingDigest: String
        let nonce: Data
        let attestedKey: String?
    }

    func requireAppleIdentity() throws -> AppleIdentityVerifier {
        guard let appleIdentity else { throw CompanionError(.notConfigured, "Verify with Wallet is off") }
        return appleIdentity
    }

    /// `POST /wallet/apple/start` `{"binding": …}`: a request ID, and the nonce and merchant for `PKIdentityRequest`.
    func startAppleIdentity(_ request: Request) async throws -> Response {
        let verifier = try requireAppleIdentity()
        let body = try await decode(CompanionAPI.WalletStart.self, from: request)
        try Self.requireBinding(body.binding)
        let nonce = Data(entropy.randomBytes(count: 32))
        let record = AppleIdentityRecord(bindingDigest: Secrets.digest(body.binding), nonce: nonce, attestedKey: Self.assertingKey)
        let id = try await store.issue(
            .appleIdentityRequest, record, expiresAt: clock.now().addingTimeInterval(Self.appleIdentityLifetime), entropy: entropy)
        return Replies.json(
            CompanionAPI.AppleIdentityStarted(
                requestID: id, nonce: Base64URL.encode(nonce), merchantIdentifier: verifier.merchantIdentifier,
                expiresIn: Int(Self.appleIdentityLifetime)))
    }

    /// `POST /wallet/apple/verify` `{"request_id", "binding", "encrypted_data"}`: the verified claims,
    /// `{"credentials": {"identity": [{namespace: {element: value}}]}}`. With App Attest, only the key that
    /// started the request may send its answer (checked before the request is used up); a wrong binding uses
    /// it up; so does an answer that does not verify, which the app learns as `invalid_presentation` and the
    /// log by its reason.
    func verifyAppleIdentity(_ request: Request) async throws -> Response {
        let verifier = try requireAppleIdentity()
        let body = try await decode(CompanionAPI.AppleIdentityVerify.self, from: request, limit: Self.maximumAppleIdentityBody)
        let unknown = CompanionError(.invalidGrant, "this Verify with Wallet request has expired or was already answered")
        guard Secrets.isIssued(body.requestID),
            let pending = try await store.lookUp(.appleIdentityRequest, secret: body.requestID, as: AppleIdentityRecord.self, now: clock.now())
        else { throw unknown }
        try requireAssertion(by: pending.attestedKey)
        guard let record = try await store.redeem(.appleIdentityRequest, secret: body.requestID, as: AppleIdentityRecord.self, now: clock.now())
        else { throw unknown }
        guard ConstantTime.equals(record.bindingDigest, Secrets.digest(body.binding)) else {
            logger.warning("a Verify with Wallet answer sent with another binding; the request is used up")
            throw CompanionError(.invalidGrant, "this request belongs to another session")
        }
        do {
            guard let encrypted = Base64URL.decode(body.encryptedData) else {
                throw SwitchbackError(.presentationInvalid, "the Wallet identity response is not base64url")
            }
            let (response, transcript) = try verifier.envelope.open(encrypted, nonce: record.nonce)
            let verified = try await verifier.documents.verify(deviceResponse: response, sessionTranscript: transcript)
            guard let type = verified.type, verifier.documentTypes.contains(type) else {
                throw SwitchbackError(.presentationInvalid, "the document is of a type not accepted (\(verified.type?.prefix(60) ?? "none"))")
            }
            metrics.record(.presentationVerified)
            return Replies.json(CompanionAPI.WalletPresented(credentials: ["identity": [verified.claims]]))
        } catch let error as SwitchbackError {
            logger.notice("presentation refused", metadata: ["reason": "\(Self.loggable(error.message))"])
            metrics.record(.presentationRefused)
            throw CompanionError(.invalidPresentation, "Wallet's answer was refused; the reason is in the companion's log")
        }
    }
}
