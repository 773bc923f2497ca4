public import Foundation
public import Logging

/// Keeps one signed-in credential fresh: the access token an API call needs, refreshed when it is about to
/// expire, one refresh at a time.
///
/// The invariant it holds: **a refresh token the provider issued is either in the store or reported as
/// lost with its reason, and the user is signed out only because the provider or the user said so.**
///
/// - **One refresh per account in the process.** Every manager of one key in one storage (see
///   ``CredentialStore/storageIdentity``) shares one refresh, whoever made it: two managers built inline by
///   a view model and an API client send one request between them. With an ``InterProcessLock``, an app's
///   extensions sharing the store wait for each other too.
/// - **Stored before used.** The rotated credential is saved before any caller gets the new access token.
///   When the provider answered 200 with a rotated refresh token that the client cannot accept otherwise
///   (an ID token refused, a token type it did not ask for), the rotated refresh token is stored anyway
///   and the error says so. When the store refuses the write, the credential is kept in memory and stored
///   by the next call.
/// - **The store is the truth.** Each refresh starts from what the store holds, so a credential another
///   process already rotated is used, not refreshed again; `invalid_grant` after someone else's rotation
///   returns their credential.
/// - **Lost is told apart from revoked.** A refresh is marked in the store before its request is sent, and
///   the mark stays unless the provider's answer was read: a termination, a broken connection, a gateway's
///   502 or an unreadable 200 may each have rotated the token. If the provider then refuses the token, the
///   error is ``SwitchbackError/Code/rotationLost``; otherwise it is ``SwitchbackError/Code/reauthenticationRequired``.
/// - **A new sign-in or a sign-out wins.** A refresh under way sends nothing more once either starts, and
///   its callers get the new sign-in's credential, or ``SwitchbackError/Code/notSignedIn``.
///
/// ```swift
/// let manager = CredentialManager(client: client, store: KeychainCredentialStore(), key: "main")
/// try await manager.save(result.credential)                      // after sign-in
/// let credential = try await manager.validCredential()          // before each API call
/// ```
public actor CredentialManager {
    public nonisolated let key: String
    let client: OIDCClient
    let store: any CredentialStore
    let clock: any WallClock
    let logger: Logger
    let protectedData: (any ProtectedDataGate)?
    private let backgroundWork: (any BackgroundWork)?
    let protection: RefreshTokenProtection?
    private let interProcessLock: (any InterProcessLock)?
    /// Shared with every manager of this key in this storage.
    let slot: CredentialSlot

    /// The store key under which a refresh in progress is marked.
    nonisolated var refreshMarkKey: String { Self.refreshMarkKey(for: key) }

    /// The mark's key for the credential under `key`.
    static func refreshMarkKey(for key: String) -> String { key + ".refreshing" }

    /// `store` holds the credential under `key` (and a mark under `key` + `.refreshing` while a refresh is
    /// under way). With `protectedData`, a store that answers ``SwitchbackError/Code/credentialUnavailable``
    /// (a device not unlocked since it started), or answers empty while protected data is unavailable, is
    /// waited on, then read again, instead of failing. With `backgroundWork`, each refresh runs as background
    /// work, so one started just before the app leaves the foreground still stores its rotated token. With
    /// `protection`, the refresh token is kept apart, behind the user's authentication, and read only when a
    /// refresh needs it (``RefreshTokenProtection``). With `interProcessLock`, a refresh holds it, so that
    /// the app's extensions sharing `store` never refresh the same token at once.
    public init(
        client: OIDCClient, store: any CredentialStore, key: String, clock: any WallClock = SystemClock(),
        protectedData: (any ProtectedDataGate)? = nil, backgroundWork: (any BackgroundWork)? = nil,
        protection: RefreshTokenProtection? = nil, interProcessLock: (any InterProcessLock)? = nil,
        logger: Logger = Logger(label: "switchback.credentials")
    ) {
        self.init(
            client: client, store: store, storage: store.storageIdentity, key: key, clock: clock, protectedData: protectedData,
            backgroundWork: backgroundWork, protection: protection, interProcessLock: interProcessLock, logger: logger)
    }

    /// A manager whose store's identity its owner read once (``AccountBook``), so that its slot is the owner's.
    init(
        client: OIDCClient, store: any CredentialStore, storage: String, key: String, clock: any WallClock = SystemClock(),
        protectedData: (any ProtectedDataGate)? = nil, backgroundWork: (any BackgroundWork)? = nil,
        protection: RefreshTokenProtection? = nil, interProcessLock: (any InterProcessLock)? = nil,
        logger: Logger = Logger(label: "switchback.credentials")
    ) {
        self.protection = protection
        self.protectedData = protectedData
        self.backgroundWork = backgroundWork
        self.interProcessLock = interProcessLock
        self.client = client
        self.store = store
        self.key = key
        self.clock = clock
        self.logger = logger
        self.slot = CredentialSlots.slot(storage: storage, key: key)
    }

    /// The stored credential, as it is (possibly expired); nil when signed out. With ``RefreshTokenProtection``
    /// it holds no refresh token (that one is read only by a refresh).
    public func credential() async throws -> Credential? {
        await slot.writesSettled()
        try await storeUnsaved()
        return try await loadStored().map(withoutProtectedToken)
    }

    /// Stores a credential a sign-in returned, replacing any other; a refresh under way sends nothing more,
    /// and its callers get this credential.
    public func save(_ credential: Credential) async throws {
        try await slot.write(replacing: true) { _ in
            try await self.keep(credential)
            try await self.store.remove(key: self.refreshMarkKey)
        }
    }

    /// Forgets the credential locally (sign-out does this after revoking it); a refresh under way sends
    /// nothing more, and its callers get ``SwitchbackError/Code/notSignedIn``.
    public func remove() async throws {
        try await slot.write(replacing: true) { _ in try await self.removeStored() }
    }

    /// Removes the credential, its mark and its protected refresh token; the caller holds the slot's write.
    func removeStored() async throws {
        try await Self.removeStored(key: key, store: store, protection: protection)
    }

    static func removeStored(key: String, store: any CredentialStore, protection: RefreshTokenProtection?) async throws {
        try await store.remove(key: key)
        try await store.remove(key: refreshMarkKey(for: key))
        try await protection?.secrets.remove(key: key)
    }

    /// Stores `credential`: its refresh token behind the user's authentication when protected (no prompt
    /// to write), the rest in the store.
    func keep(_ credential: Credential) async throws {
        try await Self.keep(credential, key: key, store: store, protection: protection)
    }

    static func keep(_ credential: Credential, key: String, store: any CredentialStore, protection: RefreshTokenProtection?) async throws {
        guard let protection else { return try await store.save(credential, key: key) }
        var unprotected = credential
        if let refreshToken = credential.refreshToken {
            try await protection.secrets.save(refreshToken, key: key)
            unprotected.refreshToken = nil
        } else {
            try await protection.secrets.remove(key: key)
        }
        try await store.save(unprotected, key: key)
    }

    /// `credential` as callers see it: without its refresh token when that one is protected.
    func withoutProtectedToken(_ credential: Credential) -> Credential {
        guard protection != nil else { return credential }
        var unprotected = credential
        unprotected.refreshToken = nil
        return unprotected
    }

    /// The stored credential. An empty answer while protected data is unavailable is not believed (a
    /// Keychain before its first unlock may answer "not found"): it is ``SwitchbackError/Code/credentialUnavailable``.
    func loadStored() async throws -> Credential? {
        if let stored = try await store.load(key: key) { return stored }
        guard let protectedData, await !protectedData.isAvailable else { return nil }
        throw SwitchbackError(.credentialUnavailable, "the store answered empty while protected data is unavailable")
    }

    /// Stores a refreshed credential the store refused before, if there is one, as a write of the slot
    /// (after any write or refresh under way, and not after a sign-in or a sign-out that dropped it).
    func storeUnsaved() async throws {
        guard await slot.unsaved != nil else { return }
        try await slot.write(replacing: false) { _ in try await self.storeUnsavedNow() }
    }

    /// Stores the slot's unsaved credential and clears the mark; the caller holds the slot (a write, or
    /// the refresh under way).
    func storeUnsavedNow() async throws {
        guard let unsaved = await slot.unsaved else { return }
        try await keep(unsaved)
        try? await store.remove(key: refreshMarkKey)
        await slot.stored(unsaved)
        logger.notice("a refreshed credential the store refused earlier is stored now", metadata: ["key": "\(key)"])
    }

    /// A credential whose access token stays valid for at least `minimumValidity` seconds, refreshed if it
    /// would not (a credential without an expiry is taken as valid). Throws ``SwitchbackError/Code/notSignedIn``
    /// with nothing stored, ``SwitchbackError/Code/noRefreshToken`` when it expires and cannot be refreshed.
    public func validCredential(minimumValidity: TimeInterval = 60) async throws -> Credential {
        do {
            return try await freshCredential(minimumValidity: minimumValidity)
        } catch let error as SwitchbackError where error.code == .credentialUnavailable {
            // Locked is not signed out: wait for the first unlock, then read again.
            guard let protectedData else { throw error }
            logger.info("protected data is unavailable; waiting for the device to be unlocked", metadata: ["key": "\(key)"])
            try await protectedData.waitUntilAvailable()
            return try await freshCredential(minimumValidity: minimumValidity)
        }
    }

    private func freshCredential(minimumValidity: TimeInterval) async throws -> Credential {
        await slot.writesSettled()
        if await !slot.refreshing {
            try await storeUnsaved()
            if var stored = try await loadStored() {
                if protection != nil, stored.refreshToken != nil {
                    // Stored before protection was turned on (or by someone else): the refresh token moves behind
                    // it now, unless a refresh, a sign-in or a sign-out changed the credential meanwhile.
                    let found = stored
                    let generation = await slot.generation
                    try await slot.write(replacing: false) { _ in
                        guard await self.slot.generation == generation, try await self.store.load(key: self.key) == found else { return }
                        try await self.keep(found)
                    }
                    stored.refreshToken = nil
                }
                // A mark left by a refresh cut off does not stop a still-valid access token from being used (a
                // token endpoint that is down must not block every API call); it is acted on at the next refresh.
                if stored.expiresAt.map({ $0.timeIntervalSince(clock.now()) >= minimumValidity }) ?? true { return stored }
            }
        }
        return try await refresh(unlessValidFor: minimumValidity)
    }

    /// Ends the grace period of a protected refresh token (``RefreshTokenProtection/gracePeriod``): the
    /// next refresh asks the user again. Call it when the app leaves the foreground, for a grace period
    /// that lasts one app session at most.
    public func endGracePeriod() async {
        await slot.endGrace()
    }

    /// Refreshes now; callers that arrive while a refresh is under way (through any manager of this
    /// account) share its result.
    public func refresh() async throws -> Credential {
        try await refresh(unlessValidFor: nil)
    }

    /// With `minimumValidity`, a caller that read the credential before another caller's refresh stored
    /// its result takes that result instead of refreshing again; with `refused`, an access token an API
    /// refused, a stored credential holding another one is taken instead of refreshing again.
    func refresh(unlessValidFor minimumValidity: TimeInterval?, refused: String? = nil) async throws -> Credential {
        let backgroundWork = backgroundWork
        let interProcessLock = interProcessLock
        // The key names the lock: the storage's name in this process means nothing to another one (two
        // stores of one key in one app group merely take turns).
        let name = key
        do {
            return try await slot.refresh { started in
                @Sendable func locked() async throws -> Credential {
                    guard let interProcessLock else {
                        return try await self.performRefresh(from: started, unlessValidFor: minimumValidity, refused: refused)
                    }
                    return try await interProcessLock.withLock(name) {
                        try await self.performRefresh(from: started, unlessValidFor: minimumValidity, refused: refused)
                    }
                }
                guard let backgroundWork else { return try await locked() }
                return try await backgroundWork.finish("switchback.refresh") { try await locked() }
            }
        } catch is Superseded {
            // A new sign-in or a sign-out started while this refresh ran: its outcome is the answer.
            await slot.writesSettled()
            guard let current = try await loadStored() else {
                throw SwitchbackError(.notSignedIn, "the credential under \"\(key)\" was removed while it was being refreshed")
            }
            return withoutProtectedToken(current)
        }
    }
}

/// Thrown inside a refresh that a new sign-in or a sign-out replaced; its callers get what replaced it.
struct Superseded: Error {}
