import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback

/// Attested apps on the start routes.
/// - Apple App Attest: an app attests a Secure Enclave key once (`POST /attest/challenge`, then
///   `POST /attest/register`), and signs each start request with it (``CompanionAPI/attestationHeader``).
/// - Google Play Integrity: an Android app asks Google Play for a verdict whose nonce covers a challenge and
///   the request (``CompanionAPI/playIntegrityHeader``).
///
/// A malicious app can show the genuine provider page under the real app's scheme, but it can make neither
/// an assertion with a key attested for the real app's ID nor a verdict for the real app's package, so it
/// cannot start the companion's sign-ins.
extension CompanionService {
    static let challengeLifetime: TimeInterval = 300

    /// What a refused attestation, assertion or verdict is answered: the reason goes to the log and the
    /// metrics only, so that someone tuning a modified app or device is not told which check to defeat.
    static let refusedAttestation = "the attestation is refused; the server's log names the reason"

    /// What a request's attestation proved.
    enum Attested: Sendable, Equatable {
        /// An App Attest assertion by this key (its ID, base64url), over a fresh challenge or without one
        /// (``CompanionAPI/unchallenged``, which only a result request may send).
        case appAttest(keyID: String, challenged: Bool)
        /// A Play Integrity verdict for this package.
        case playIntegrity(packageName: String)
    }

    /// Where a route stands with attestation.
    enum AttestedRoute: Sendable {
        case none
        /// A start: refused without an attestation when one is required.
        case start
        /// A request about a started sign-in: an attestation is checked when sent, and the handler decides
        /// (the result goes only to the App Attest key that started the sign-in).
        case result
    }

    /// What the request being answered proved, if anything: a start keeps an App Attest key with the sign-in,
    /// and the sign-in's result is handed over only to an assertion by the same key.
    @TaskLocal static var attested: Attested?

    /// The App Attest key of the request being answered.
    static var assertingKey: String? {
        if case .appAttest(let key, _)? = attested { key } else { nil }
    }

    /// True when a start must be attested: either section says `required`.
    var attestationRequired: Bool { configuration.appAttest?.required == true || configuration.playIntegrity?.required == true }

    /// Refuses what a start refuses, for `POST /exchange` with an app-started code, which is where such a
    /// sign-in begins at the companion: an unattested request where attestation is required, and an
    /// assertion without a fresh challenge (the route takes those for its other use, a result request).
    func requireAttestedStart() throws {
        if case .appAttest(_, challenged: false)? = Self.attested {
            throw CompanionError(
                .attestationInvalid,
                "an app-started exchange begins a sign-in here: its assertion must cover a fresh challenge from /attest/challenge")
        }
        guard attestationRequired, Self.attested == nil else { return }
        throw CompanionError(.attestationRequired, "this server takes sign-ins only from an attested app (App Attest or Play Integrity)")
    }

    /// What the companion keeps of an attested key, until it expires.
    struct AttestedKeyRecord: Codable, Sendable {
        var key: AppAttestVerifier.AttestedKey
        let expiresAt: Date
    }

    /// `POST /attest/challenge`: a one-time challenge for an attestation or an assertion.
    func attestationChallenge(_ request: Request) async throws -> Response {
        guard attestation != nil || playIntegrity != nil else { throw CompanionError(.notConfigured, "App Attest is off") }
        let challenge = try await store.issue(
            .attestChallenge, true, expiresAt: clock.now().addingTimeInterval(Self.challengeLifetime), entropy: entropy)
        return Replies.json(CompanionAPI.AttestationChallenge(challenge: challenge, expiresIn: Int(Self.challengeLifetime)))
    }

    /// `POST /attest/register`: verifies a new key's attestation over SHA-256 of a challenge and keeps the key.
    func registerAttestation(_ request: Request) async throws -> Response {
        guard let appAttest = configuration.appAttest, let verifier = attestation else { throw CompanionError(.notConfigured, "App Attest is off") }
        let body = try await decode(CompanionAPI.AttestationRegistration.self, from: request)
        guard let keyID = Base64URL.decode(body.keyID), keyID.count == 32, let object = Base64URL.decode(body.attestation) else {
            throw CompanionError(.invalidRequest, "key_id and attestation must be base64url")
        }
        try await spendChallenge(body.challenge)
        let now = clock.now()
        let key: AppAttestVerifier.AttestedKey
        do {
            key = try await verifier.verifyAttestation(
                object, keyID: keyID, clientDataHash: Data(SHA256.hash(data: Data(body.challenge.utf8))), now: now)
        } catch let refusal as AppAttestVerifier.Refusal {
            logger.notice("attestation refused", metadata: ["reason": "\(refusal.description)"])
            metrics.record(.attestationRefused)
            throw CompanionError(.attestationInvalid, Self.refusedAttestation)
        }
        let expiresAt = now.addingTimeInterval(appAttest.keyLifetime)
        let secret = Base64URL.encode(keyID)
        do {
            try await store.insert(.attestedKey, secret: secret, AttestedKeyRecord(key: key, expiresAt: expiresAt), expiresAt: expiresAt)
        } catch {
            // Only a key that is there already is a refusal; anything else is the store's failure, reported as such.
            guard try await lookUpDroppingTampered(.attestedKey, secret: secret, as: AttestedKeyRecord.self) != nil else {
                // A row that did not open was removed: the key is attested now.
                try await store.insert(.attestedKey, secret: secret, AttestedKeyRecord(key: key, expiresAt: expiresAt), expiresAt: expiresAt)
                metrics.record(.keyAttested)
                return Replies.json(["status": "attested", "app_id": key.appID], status: .created)
            }
            throw CompanionError(.attestationInvalid, "this key is already attested")
        }
        metrics.record(.keyAttested)
        return Replies.json(["status": "attested", "app_id": key.appID], status: .created)
    }

    /// Checks a request's App Attest assertion or Play Integrity verdict, before its handler runs: the body is
    /// read here (and handed on), because both cover it. A header of a mechanism not configured is ignored. A
    /// start without either is refused when attestation is required.
    /// `bodyLimit` is the route's own: an assertion covers the whole body, which may be larger than a start's.
    func checkAttestation(_ request: inout Request, method: String, path: String, route: AttestedRoute, bodyLimit: Int = maximumBody)
        async throws -> Attested?
    {
        if attestation != nil, let header = request.headers[HTTPField.Name(CompanionAPI.attestationHeader)!] {
            let challenged = header.split(separator: " ").dropFirst().first != Substring(CompanionAPI.unchallenged)
            return .appAttest(
                keyID: try await checkAssertion(header, &request, method: method, path: path, route: route, bodyLimit: bodyLimit),
                challenged: challenged)
        }
        if let verifier = playIntegrity, let header = request.headers[HTTPField.Name(CompanionAPI.playIntegrityHeader)!] {
            return .playIntegrity(
                packageName: try await checkVerdict(header, verifier, &request, method: method, path: path, bodyLimit: bodyLimit))
        }
        if route == .start, attestationRequired {
            throw CompanionError(.attestationRequired, "this server takes sign-ins only from an attested app (App Attest or Play Integrity)")
        }
        return nil
    }

    /// Verifies an App Attest assertion; returns its key's ID (base64url). A start's assertion covers a fresh
    /// challenge; a result request's may go without (``CompanionAPI/unchallenged``).
    private func checkAssertion(_ header: String, _ request: inout Request, method: String, path: String, route: AttestedRoute, bodyLimit: Int)
        async throws -> String
    {
        guard let verifier = attestation else { throw CompanionError(.notConfigured, "App Attest is off") }
        let parts = header.split(separator: " ")
        guard parts.count == 3, let keyID = Base64URL.decode(String(parts[0])), keyID.count == 32, let assertion = Base64URL.decode(String(parts[2]))
        else { throw CompanionError(.attestationInvalid, "the attestation header is malformed") }
        let challenge = String(parts[1])
        let buffer = try await Self.collectBody(of: &request, limit: bodyLimit)
        if challenge != CompanionAPI.unchallenged || route != .result { try await spendChallenge(challenge) }
        let now = clock.now()
        let secret = Base64URL.encode(keyID)
        // The sealed expiry counts, not only the row's, which a database writer could move.
        guard var record = try await lookUpDroppingTampered(.attestedKey, secret: secret, as: AttestedKeyRecord.self), record.expiresAt > now
        else {
            // Never attested here, expired, or the store was reset: the app attests a new key (AppAttestation does).
            throw CompanionError(.attestationKeyUnknown, "this key is not attested here; attest a new one")
        }
        do {
            record.key.counter = try verifier.verifyAssertion(
                assertion,
                clientData: CompanionAPI.attestedClientData(challenge: challenge, method: method, path: path, body: Data(buffer.readableBytesView)),
                key: record.key)
        } catch let refusal as AppAttestVerifier.Refusal {
            logger.notice("assertion refused", metadata: ["reason": "\(refusal.description)"])
            metrics.record(.attestationRefused)
            throw CompanionError(.attestationInvalid, Self.refusedAttestation)
        }
        // On a start the challenge, used once across instances, is what stops a replay; on an unchallenged
        // result request it is the growing counter, kept here as Apple asks (two concurrent requests may store
        // their counters in either order, and the result itself is handed over once).
        _ = try await store.replace(
            .attestedKey, digest: Secrets.digest(secret), sealedWith: store.sealingKey(for: secret, kind: .attestedKey), record,
            expiresAt: record.expiresAt, now: now)
        return secret
    }

    /// Refuses a request about a sign-in whose start was asserted by `key`, unless this request's assertion
    /// is by the same key: the install that started a sign-in is the only one its result goes to.
    func requireAssertion(by key: String?) throws {
        guard let key else { return }
        guard let asserting = Self.assertingKey else {
            throw CompanionError(.attestationRequired, "this sign-in was started by an attested app; ask with an assertion by its key")
        }
        guard ConstantTime.equals(asserting, key) else {
            logger.warning("a sign-in's result was asked for with another attested key; nothing was handed over")
            throw CompanionError(.invalidGrant, "this sign-in belongs to another app installation")
        }
    }

    /// Verifies a Play Integrity verdict over this request; returns the app's package name.
    private func checkVerdict(
        _ header: String, _ verifier: PlayIntegrityVerifier, _ request: inout Request, method: String, path: String, bodyLimit: Int
    ) async throws -> String {
        let parts = header.split(separator: " ")
        guard parts.count == 2 else { throw CompanionError(.attestationInvalid, "the Play Integrity header is malformed") }
        let challenge = String(parts[0])
        let buffer = try await Self.collectBody(of: &request, limit: bodyLimit)
        try await spendChallenge(challenge)
        let nonce = CompanionAPI.playIntegrityNonce(challenge: challenge, method: method, path: path, body: Data(buffer.readableBytesView))
        do {
            return try verifier.verify(String(parts[1]), nonce: nonce, now: clock.now()).packageName
        } catch let refusal as PlayIntegrityVerifier.Refusal {
            logger.notice("Play Integrity verdict refused", metadata: ["reason": "\(refusal.description)"])
            metrics.record(.playIntegrityRefused)
            throw CompanionError(.attestationInvalid, Self.refusedAttestation)
        }
    }

    /// Uses a challenge up, once across instances.
    private func spendChallenge(_ challenge: String) async throws {
        guard Secrets.isIssued(challenge), try await store.redeem(.attestChallenge, secret: challenge, as: Bool.self, now: clock.now()) != nil else {
            throw CompanionError(.attestationInvalid, "the challenge is unknown, expired or was already used")
        }
    }
}
