public import Foundation
import Crypto

/// Apple's App Attest service, as the library uses it: the three calls of DeviceCheck's
/// `DCAppAttestService`. SwitchbackApple's `DeviceCheckAppAttest` is the real one; a test gives its own.
public protocol AppAttestService: Sendable {
    /// False where App Attest cannot run: the simulator, a Mac, an old device.
    var isSupported: Bool { get }
    /// A new Secure Enclave key; its ID (base64 of the public key's SHA-256).
    func generateKey() async throws -> String
    /// Apple's attestation of the key over `clientDataHash`. A key is attested once.
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion by the key over `clientDataHash`. Throw ``SwitchbackError/Code/appAttestKeyInvalid``
    /// when the system no longer knows the key.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

/// Where the attested key's ID is kept between launches (the Keychain, or a file in the app's container).
public protocol AttestedKeyStore: Sendable {
    func attestedKeyID() async throws -> String?
    func setAttestedKeyID(_ keyID: String?) async throws
}

/// Signs the companion's start requests, and the requests for a started sign-in's result, with an App
/// Attest key (``CompanionClient`` with `attestation:`): the first request makes a key, has Apple attest it
/// over the companion's challenge and registers it (`POST /attest/register`); each request then carries an
/// assertion over a fresh challenge, its route and its body (`CompanionAPI.attestedClientData`). The
/// companion hands a sign-in's result (`POST /exchange`, `POST /completion/status`) only to an assertion by
/// the key that started it.
///
/// Where App Attest is not supported nothing is added, and a companion that requires it refuses the start
/// (`attestation_required`): the app cannot claim what the device cannot prove.
public actor AppAttestation {
    private let service: any AppAttestService
    private let keys: any AttestedKeyStore
    /// The attestation under way, shared by concurrent first requests so that one key is made.
    private var attesting: Task<String, any Error>?

    public init(service: any AppAttestService, keys: any AttestedKeyStore) {
        self.service = service
        self.keys = keys
    }

    /// Drops the stored key, so that the next request attests a new one.
    func forgetKey() async {
        try? await keys.setAttestedKeyID(nil)
    }

    /// The `Switchback-App-Attestation` header value for a request, or nil where App Attest is unsupported.
    /// `challenged`: over a fresh challenge (a start), or over ``CompanionAPI/unchallenged`` (a result request).
    func header(method: String, path: String, body: Data, challenged: Bool, companion: CompanionClient) async throws -> String? {
        guard service.isSupported else { return nil }
        do {
            return try await assert(method: method, path: path, body: body, challenged: challenged, companion: companion)
        } catch let error as SwitchbackError where error.code == .appAttestKeyInvalid {
            // The system no longer knows the key (a restored backup, say): attest a new one, once.
            try await keys.setAttestedKeyID(nil)
            return try await assert(method: method, path: path, body: body, challenged: challenged, companion: companion)
        }
    }

    private func assert(method: String, path: String, body: Data, challenged: Bool, companion: CompanionClient) async throws -> String {
        let keyID = try await attestedKey(companion)
        guard let rawKeyID = Data(base64Encoded: keyID) else { throw SwitchbackError(.appAttestKeyInvalid, "the key ID is not base64") }
        let challenge = challenged ? try await companion.attestationChallenge() : CompanionAPI.unchallenged
        let clientData = CompanionAPI.attestedClientData(challenge: challenge, method: method, path: path, body: body)
        let assertion = try await service.generateAssertion(keyID, clientDataHash: Data(SHA256.hash(data: clientData)))
        return "\(Base64URL.encode(rawKeyID)) \(challenge) \(Base64URL.encode(assertion))"
    }

    private func attestedKey(_ companion: CompanionClient) async throws -> String {
        if let stored = try await keys.attestedKeyID() { return stored }
        if let attesting { return try await attesting.value }
        let service = self.service
        let keys = self.keys
        let task = Task {
            let keyID = try await service.generateKey()
            guard let rawKeyID = Data(base64Encoded: keyID) else { throw SwitchbackError(.appAttestKeyInvalid, "the key ID is not base64") }
            let challenge = try await companion.attestationChallenge()
            let object = try await service.attestKey(keyID, clientDataHash: Data(SHA256.hash(data: Data(challenge.utf8))))
            try await companion.registerAttestation(
                CompanionAPI.AttestationRegistration(
                    keyID: Base64URL.encode(rawKeyID), attestation: Base64URL.encode(object), challenge: challenge))
            try await keys.setAttestedKeyID(keyID)
            return keyID
        }
        attesting = task
        defer { attesting = nil }
        return try await task.value
    }
}

/// The attested key's ID in a file, such as one in the app's Application Support folder. The ID is no
/// secret: it names a key that never leaves the Secure Enclave.
public struct FileAttestedKeyStore: AttestedKeyStore {
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    public func attestedKeyID() async throws -> String? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            let text = try String(contentsOf: url, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        } catch {
            throw SwitchbackError(.storeFailed, "the attested key's ID could not be read", underlying: error)
        }
    }

    public func setAttestedKeyID(_ keyID: String?) async throws {
        do {
            guard let keyID else {
                if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
                return
            }
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(keyID.utf8).write(to: url, options: .atomic)
        } catch {
            throw SwitchbackError(.storeFailed, "the attested key's ID could not be saved", underlying: error)
        }
    }
}
