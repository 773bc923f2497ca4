public import Foundation
import Crypto
@_spi(SwitchbackInternals) public import Switchback
import SwitchbackVerification

/// What the companion keeps between two requests, by purpose. Each kind is its own namespace.
public enum RecordKind: String, Sendable, CaseIterable {
    /// A one-time session hand-off code → ``HandOffGrant``.
    case handOffCode = "handoff"
    /// A first-party session issued by the backend code exchange or a hand-off redemption.
    case session
    /// An authorization the server started, keyed by its `state`, until the provider's response arrives.
    case authorization
    /// A finished backend completion, keyed by the app's flow ID, until the app collects it.
    case completion
    /// A one-time code the native-callback bridge hands to the app instead of tokens.
    case bridgeCode = "bridge"
    /// A DPoP proof's `jti` (with its key's thumbprint) seen at `POST /handoff`, kept while the proof
    /// would still be fresh so that it works once across instances.
    case proofID = "dpop_jti"
    /// A Back-Channel Logout token's `jti` (with its issuer), kept while the token would still be taken, so
    /// that a replayed token is refused across instances.
    case logoutTokenID = "logout_jti"
    /// When a provider said a user (`sub`) or a provider session (`sid`) signed out: sessions made before it
    /// end. Kept as long as a session lives.
    case loggedOut = "logged_out"
    /// A one-time App Attest challenge, until an attestation or an assertion uses it.
    case attestChallenge = "attest_challenge"
    /// An App Attest key the companion verified, by its key ID: its public key, app and last counter.
    case attestedKey = "attested_key"
    /// A presentation request, keyed by its `state` (also its response key's `kid`), until the wallet answers.
    case presentationRequest = "presentation_request"
    /// A verified presentation, keyed by its one-time `response_code`, until the app redeems it.
    case presentationResult = "presentation_result"
    /// A Verify with Wallet request (its nonce), keyed by its request ID, until the app sends the answer.
    case appleIdentityRequest = "apple_identity_request"
    /// A permission statement your backend registered (Norwegian BankID), keyed by its one-time ID, until the
    /// app's `POST /permission` takes it.
    case permissionStatement = "permission_statement"
}

/// Where the companion's short-lived records live. Every key is already the SHA-256 digest of a secret
/// (a code, a session ID, a `state`, a flow ID), so a copy of the store cannot be replayed, and every value
/// the extension methods below write is sealed (AES-GCM) with a key derived from that same secret and a
/// server-held key (``recordKeys``), neither of which the store holds: a dump of the store yields no
/// readable record, and a row written by someone who can write to the database does not open.
///
/// ``take(_:digest:now:)`` must be atomic: of any number of concurrent calls for one key, across every
/// server instance sharing the store, exactly one returns the value.
public protocol CompanionStore: Sendable {
    /// The server-held keys the extension methods seal values under: the same on every instance that
    /// shares the store (the configuration's `recordKeys`).
    var recordKeys: RecordKeys { get }
    /// Stores `value` until `expiresAt`; throws ``SwitchbackError/Code/storeFailed`` when the key exists.
    func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws
    /// Removes and returns the value when it exists and is unexpired at `now`; nil otherwise.
    func take(_ kind: RecordKind, digest: String, now: Date) async throws -> Data?
    /// Returns the value, unexpired at `now`, without removing it.
    func read(_ kind: RecordKind, digest: String, now: Date) async throws -> Data?
    /// Replaces the value of a record unexpired at `now` in one step (a reader sees the old value or the
    /// new one, never none); false when there is no such record.
    func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool
    /// Drops every record expired at `now`; returns how many.
    @discardableResult
    func purge(now: Date) async throws -> Int
    /// How many unexpired records of `kind` there are at `now`, across every instance sharing the store.
    func count(_ kind: RecordKind, now: Date) async throws -> Int
    /// Tells every instance sharing the store that the record `digest` of `kind` changed, so that requests
    /// waiting for it there read it again. A store of one instance has no one else to tell.
    func announce(_ kind: RecordKind, digest: String) async throws
    /// Calls `changed` for every change any instance announces, until the task is cancelled or the
    /// connection fails (the caller listens again). Calls `started` each time it begins to listen, before
    /// any change: a change announced before then (while a lost connection was replaced) reached no one,
    /// so the caller reads again what it waits for. A store of one instance returns when cancelled.
    func listen(started: @escaping @Sendable () async -> Void, _ changed: @escaping @Sendable (RecordKind, String) async -> Void) async throws
    /// The form without `started`, which stores written before it implement: such a store is still
    /// listened to (the default ``listen(started:_:)`` calls `started` first, then this).
    func listen(_ changed: @escaping @Sendable (RecordKind, String) async -> Void) async throws
}

extension CompanionStore {
    public func announce(_ kind: RecordKind, digest: String) async throws {}

    public func listen(
        started: @escaping @Sendable () async -> Void, _ changed: @escaping @Sendable (RecordKind, String) async -> Void
    ) async throws {
        await started()
        try await listen(changed)
    }

    public func listen(_ changed: @escaping @Sendable (RecordKind, String) async -> Void) async throws {
        while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
    }
}

/// What a one-time hand-off code stands for: the signed-in subject, the client that asked, and its lifetime.
public struct HandOffGrant: Sendable, Codable, Equatable {
    public var subject: String
    /// The client (app) that asked for the code.
    public var clientID: String
    public var issuedAt: Date
    public var expiresAt: Date
    /// A human-readable name of the account (introspection's `username`, a JWT's `preferred_username`),
    /// shown on the redeem page beside the subject.
    public var displayName: String?
    /// When the access token that bought the code expires: the web session ends then at the latest.
    public var tokenExpiresAt: Date?
    /// The provider's sign-in session the access token named (`sid`), which a Back-Channel Logout may name.
    public var sessionID: String?
    /// When the provider issued the access token, on its clock: a Back-Channel Logout of the subject at or
    /// after it ends the web session.
    public var signedInAt: Date?

    public init(
        subject: String, clientID: String, issuedAt: Date, expiresAt: Date, displayName: String? = nil, tokenExpiresAt: Date? = nil,
        sessionID: String? = nil, signedInAt: Date? = nil
    ) {
        self.sessionID = sessionID
        self.signedInAt = signedInAt
        self.displayName = displayName
        self.tokenExpiresAt = tokenExpiresAt
        self.subject = subject
        self.clientID = clientID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

extension CompanionStore {
    /// Issues a fresh secret of 256 random bits for `value`, stores its digest, and returns the secret.
    public func issue(_ kind: RecordKind, _ value: some Encodable, expiresAt: Date, entropy: any EntropySource = KernelEntropy()) async throws
        -> String
    {
        let secret = Base64URL.encode(entropy.randomBytes(count: 32))
        try await insert(kind, secret: secret, value, expiresAt: expiresAt)
        return secret
    }

    /// Stores `value` under a secret the caller already holds (a `state`, a flow ID), sealed with a key
    /// derived from it and the current record key.
    public func insert(_ kind: RecordKind, secret: String, _ value: some Encodable, expiresAt: Date) async throws {
        try await insert(kind, digest: Secrets.digest(secret), sealedWith: sealingKey(for: secret, kind: kind), value, expiresAt: expiresAt)
    }

    /// Redeems `secret` once: of concurrent redemptions exactly one gets the value. Throws
    /// ``TamperedRecord`` for a value that does not open.
    public func redeem<Value: Decodable>(_ kind: RecordKind, secret: String, as type: Value.Type, now: Date) async throws -> Value? {
        guard Secrets.isPlausible(secret) else { return nil }
        let digest = Secrets.digest(secret)
        guard let data = try await take(kind, digest: digest, now: now) else { return nil }
        return try RecordSealing.open(type, from: data, secret: secret, keys: recordKeys, kind: kind, digest: digest)
    }

    /// Looks `secret` up without using it.
    public func lookUp<Value: Decodable>(_ kind: RecordKind, secret: String, as type: Value.Type, now: Date) async throws -> Value? {
        guard Secrets.isPlausible(secret) else { return nil }
        let digest = Secrets.digest(secret)
        guard let data = try await read(kind, digest: digest, now: now) else { return nil }
        return try RecordSealing.open(type, from: data, secret: secret, keys: recordKeys, kind: kind, digest: digest)
    }

    /// The key a value stored under `secret` is sealed with now: derived under the current record key.
    func sealingKey(for secret: String, kind: RecordKind) -> RecordKey {
        RecordSealing.key(for: secret, kind: kind, under: recordKeys.current)
    }

    /// Stores `value` under `digest`, sealed with `key` (for a record written by a request that holds only
    /// the key, not the secret: a completion's result).
    func insert(_ kind: RecordKind, digest: String, sealedWith key: RecordKey, _ value: some Encodable, expiresAt: Date) async throws {
        try await insert(kind, digest: digest, value: try RecordSealing.seal(value, key: key, kind: kind, digest: digest), expiresAt: expiresAt)
    }

    /// Replaces the record under `digest` with `value` sealed with `key`; false when it is gone.
    func replace(_ kind: RecordKind, digest: String, sealedWith key: RecordKey, _ value: some Encodable, expiresAt: Date, now: Date) async throws
        -> Bool
    {
        try await replace(
            kind, digest: digest, value: try RecordSealing.seal(value, key: key, kind: kind, digest: digest), expiresAt: expiresAt, now: now)
    }

    /// Reads the record under `digest` sealed with `key`, without using it.
    func read<Value: Decodable>(_ kind: RecordKind, digest: String, sealedWith key: RecordKey, as type: Value.Type, now: Date) async throws
        -> Value?
    {
        guard let data = try await read(kind, digest: digest, now: now) else { return nil }
        return try RecordSealing.open(type, from: data, key: key, kind: kind, digest: digest)
    }

    /// Issues a one-time hand-off code for `grant`.
    public func issue(_ grant: HandOffGrant, entropy: any EntropySource = KernelEntropy()) async throws -> String {
        try await issue(.handOffCode, grant, expiresAt: grant.expiresAt, entropy: entropy)
    }

    /// Redeems a hand-off code once.
    public func redeem(_ code: String, now: Date) async throws -> HandOffGrant? {
        guard Secrets.isIssued(code) else { return nil }
        return try await redeem(.handOffCode, secret: code, as: HandOffGrant.self, now: now)
    }
}

/// A flat JSON object written or read on every hand-off: its request and answer, its grant and the session
/// it buys. It is written by ``JSONObjectWriter`` and read by ``JSONReader``, which cost a fraction of
/// Foundation's coders (Documentation/Decisions/0012-companion-flat-json.md), in the JSON `JSONEncoder` and `JSONDecoder` wrote and read before:
/// a record stored either way opens the other way, so instances of the previous version and records
/// already stored keep working (`CompanionStoreTests` holds both directions to that).
protocol FlatJSON: Codable {
    func json() -> Data
    init(json members: JSONMembers) throws
}

extension FlatJSON {
    /// The value `data` holds, or nil when it is not one JSON object of this type's members.
    static func read(_ data: Data) -> Self? {
        guard let members = JSONReader.members(data) else { return nil }
        return try? Self(json: members)
    }
}

extension HandOffGrant: FlatJSON {
    func json() -> Data {
        var writer = JSONObjectWriter()
        writer.add("clientID", clientID)
        writer.add("displayName", displayName)
        writer.add("expiresAt", expiresAt.timeIntervalSince1970)
        writer.add("issuedAt", issuedAt.timeIntervalSince1970)
        writer.add("sessionID", sessionID)
        writer.add("signedInAt", signedInAt?.timeIntervalSince1970)
        writer.add("subject", subject)
        writer.add("tokenExpiresAt", tokenExpiresAt?.timeIntervalSince1970)
        return writer.data()
    }

    init(json members: JSONMembers) throws {
        guard let subject = try members.string("subject"), let clientID = try members.string("clientID"),
            let issuedAt = try members.number("issuedAt"), let expiresAt = try members.number("expiresAt")
        else { throw JSONMembers.Mismatch() }
        self.init(
            subject: subject, clientID: clientID, issuedAt: Date(timeIntervalSince1970: issuedAt), expiresAt: Date(timeIntervalSince1970: expiresAt),
            displayName: try members.string("displayName"),
            tokenExpiresAt: try members.number("tokenExpiresAt").map(Date.init(timeIntervalSince1970:)),
            sessionID: try members.string("sessionID"), signedInAt: try members.number("signedInAt").map(Date.init(timeIntervalSince1970:)))
    }
}

/// The sealing of stored values: AES-256-GCM under a key derived with HKDF-SHA256 from the record's own
/// secret, with a server-held record key as the salt (``RecordKeys``) and the record kind as the info, with
/// the kind and digest as associated data so that a value moved to another row does not open. A sealed
/// value is a version byte (2), the record key's 4-byte identifier, then AES-GCM's nonce, ciphertext and
/// tag; a value of the first version (sealed under a constant salt, which anyone who can write to the
/// database could reproduce) does not open.
package enum RecordSealing {
    private static let version: UInt8 = 2

    /// HKDF-SHA256 (RFC 5869) of the secret with the record key as salt and the kind as info, 32 bytes: the
    /// same key as swift-crypto's `HKDF<SHA256>.deriveKey`, which a test holds it to. Two HMACs, as HKDF's
    /// extract and one block of expand are, both swift-crypto's; the extract's, keyed with the record key, is
    /// made once per key and copied (Documentation/Decisions/0004-record-key-hmac.md).
    package static func key(for secret: String, kind: RecordKind, under serverKey: RecordKeys.Key) -> RecordKey {
        var extract = serverKey.extractor
        var secret = secret
        secret.withUTF8 { extract.update(data: UnsafeRawBufferPointer($0)) }
        let pseudoRandomKey = SymmetricKey(data: extract.finalize())
        let info = infos[kind] ?? Data(kind.rawValue.utf8) + [1]
        return RecordKey(serverKeyID: serverKey.id, key: SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: info, using: pseudoRandomKey)))
    }

    /// Each kind's expand input for the first (and only) output block: the info, then the counter 1.
    private static let infos = Dictionary(uniqueKeysWithValues: RecordKind.allCases.map { ($0, Data($0.rawValue.utf8) + [1]) })

    static func seal(_ value: some Encodable, key: RecordKey, kind: RecordKind, digest: String) throws -> Data {
        let plain = try (value as? any FlatJSON)?.json() ?? Secrets.encoder.encode(value)
        do {
            // The nonce in one system call (`AES.GCM.Nonce()` makes two); 96 random bits, as before and as
            // NIST SP 800-38D §8.2.2 allows. Most keys seal one record; the most a key seals is an App Attest
            // key's record, resealed at each assertion, far below the 2^32 seals that bound random nonces.
            let nonce = try AES.GCM.Nonce(data: KernelEntropy().randomBytes(count: 12))
            guard let combined = try AES.GCM.seal(plain, using: key.key, nonce: nonce, authenticating: associatedData(kind, digest)).combined
            else {
                throw SwitchbackError(.storeFailed, "a \(kind.rawValue) record could not be sealed")
            }
            var sealed = Data(capacity: 5 + combined.count)
            sealed.append(version)
            sealed.append(contentsOf: key.serverKeyID)
            sealed.append(combined)
            return sealed
        } catch let error as SwitchbackError {
            throw error
        } catch {
            throw SwitchbackError(.storeFailed, "a \(kind.rawValue) record could not be sealed", underlying: error)
        }
    }

    /// Opens a value stored under `secret`, with the record key it names. Throws ``TamperedRecord`` when it
    /// names no key this server holds or does not open.
    static func open<Value: Decodable>(_ type: Value.Type, from data: Data, secret: String, keys: RecordKeys, kind: RecordKind, digest: String)
        throws -> Value
    {
        guard data.count > 5, data.first == version, let serverKey = keys.key(id: data.dropFirst().prefix(4)) else {
            throw TamperedRecord(kind: kind)
        }
        return try open(type, from: data, key: key(for: secret, kind: kind, under: serverKey), kind: kind, digest: digest)
    }

    /// Opens a value sealed with `key`, which must be the key the value names.
    static func open<Value: Decodable>(_ type: Value.Type, from data: Data, key: RecordKey, kind: RecordKind, digest: String) throws -> Value {
        guard data.count > 5, data.first == version, data.dropFirst().prefix(4).elementsEqual(key.serverKeyID) else {
            throw TamperedRecord(kind: kind)
        }
        let plain: Data
        do {
            plain = try AES.GCM.open(try AES.GCM.SealedBox(combined: data.dropFirst(5)), using: key.key, authenticating: associatedData(kind, digest))
        } catch {
            throw TamperedRecord(kind: kind)
        }
        if let flat = type as? any FlatJSON.Type {
            guard let value = flat.read(plain) as? Value else {
                throw SwitchbackError(.storeFailed, "a stored \(type) record could not be read")
            }
            return value
        }
        return try Secrets.decode(type, from: plain)
    }

    /// The kind, a space and the digest, as bytes.
    private static func associatedData(_ kind: RecordKind, _ digest: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(kind.rawValue.utf8.count + 1 + digest.utf8.count)
        bytes += kind.rawValue.utf8
        bytes.append(UInt8(ascii: " "))
        bytes += digest.utf8
        return bytes
    }
}
