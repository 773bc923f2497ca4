public import Foundation
public import Logging

/// Keeps one signed-in credential fresh: the access token an API call needs, refreshed when it is about to
/// expire, one refresh at a time.
///
/// With rotating refresh tokens (every refresh returns a new one and retires the old), two refreshes racing
/// with the same token sign the user out: the second is a reuse, and a provider following RFC 9700 §4.14.2
/// revokes the whole family. The manager prevents that within a process:
///
/// - **Single flight.** Concurrent callers of ``validCredential(minimumValidity:)`` and ``refresh()`` await
///   the same request; the token endpoint sees one.
/// - **Stored before used.** The rotated credential is saved to the store before any caller gets the new
///   access token, so a termination right after cannot leave the app holding a retired refresh token.
/// - **The store is the truth.** Each refresh starts from what the store holds, so a credential another
///   process (an app extension sharing a Keychain access group) already rotated is used, not refreshed again.
/// - **Told apart.** `invalid_grant` after someone else's successful rotation returns their credential;
///   otherwise the grant is gone and the error is ``SwitchbackError/Code/reauthenticationRequired``.
/// - **Cut off by termination.** A refresh is marked in the store before its request is sent and the mark
///   is cleared once the result is stored. A manager that finds the mark on the next launch knows the
///   refresh was cut off: it tries again with the token it holds (the provider may not have processed the
///   request, or allows a reuse interval) and, if that is refused, reports ``SwitchbackError/Code/reauthenticationRequired``
///   saying the rotation was lost, which the app can count apart from revocations.
///
/// ```swift
/// let manager = CredentialManager(client: client, store: KeychainCredentialStore(), key: "main")
/// try await manager.save(result.credential)                      // after sign-in
/// let credential = try await manager.validCredential()          // before each API call
/// ```
public actor CredentialManager {
    public nonisolated let key: String
    let client: OIDCClient
    private let store: any CredentialStore
    private let clock: any WallClock
    private let logger: Logger
    private let protectedData: (any ProtectedDataGate)?
    private let backgroundWork: (any BackgroundWork)?
    private let protection: RefreshTokenProtection?
    private var inFlight: Task<Credential, any Error>?
    /// A ``save(_:)`` or ``remove()`` under way: a refresh waits for it, so that it never reads half of a
    /// write (the old credential with a new protected refresh token).
    private var writing: Task<Void, any Error>?
    /// Bumped by every ``save(_:)`` and ``remove()``: a refresh that started before one of them stores
    /// nothing, so a sign-out or a new sign-in is never undone by a refresh that finishes after it.
    private var generation = 0

    /// The store key under which a refresh in progress is marked.
    nonisolated var refreshMarkKey: String { Self.refreshMarkKey(for: key) }

    /// The mark's key for the credential under `key`.
    static func refreshMarkKey(for key: String) -> String { key + ".refreshing" }

    /// `store` holds the credential under `key` (and a mark under `key` + `.refreshing` while a refresh is
    /// under way). With `protectedData`, a store that answers ``SwitchbackError/Code/credentialUnavailable``
    /// (a device not unlocked since it started) is waited on, then read again, instead of failing. With
    /// `backgroundWork`, each refresh runs as background work, so one started just before the app leaves
    /// the foreground still stores its rotated token. With `protection`, the refresh token is kept apart,
    /// behind the user's authentication, and read only when a refresh needs it (``RefreshTokenProtection``).
    public init(
        client: OIDCClient, store: any CredentialStore, key: String, clock: any WallClock = SystemClock(),
        protectedData: (any ProtectedDataGate)? = nil, backgroundWork: (any BackgroundWork)? = nil,
        protection: RefreshTokenProtection? = nil, logger: Logger = Logger(label: "switchback.credentials")
    ) {
        self.protection = protection
        self.protectedData = protectedData
        self.backgroundWork = backgroundWork
        self.client = client
        self.store = store
        self.key = key
        self.clock = clock
        self.logger = logger
    }

    /// The stored credential, as it is (possibly expired); nil when signed out. With ``RefreshTokenProtection``
    /// it holds no refresh token (that one is read only by a refresh).
    public func credential() async throws -> Credential? {
        try await store.load(key: key)
    }

    /// Stores a credential a sign-in returned, replacing any other; a refresh under way stores nothing.
    public func save(_ credential: Credential) async throws {
        generation += 1
        await settle()
        try await exclusively {
            try await self.keep(credential)
            try await self.store.remove(key: self.refreshMarkKey)
        }
    }

    /// Runs `write` with no other write and no refresh under way.
    private func exclusively(_ write: @escaping @Sendable () async throws -> Void) async throws {
        while let writing {
            _ = try? await writing.value
            if self.writing == writing { self.writing = nil }
        }
        let task = Task { try await write() }
        writing = task
        defer { if writing == task { writing = nil } }
        try await task.value
    }

    /// Waits for a write under way to end (its outcome is the writer's).
    private func writesSettled() async {
        while let writing {
            _ = try? await writing.value
            if self.writing == writing { break }
        }
    }

    /// Stores `credential`: its refresh token behind the user's authentication when protected (no prompt
    /// to write), the rest in the store.
    private func keep(_ credential: Credential) async throws {
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

    /// Forgets the credential locally (sign-out does this after revoking it); a refresh under way stores nothing.
    public func remove() async throws {
        generation += 1
        await settle()
        try await exclusively {
            try await self.store.remove(key: self.key)
            try await self.store.remove(key: self.refreshMarkKey)
            try await self.protection?.secrets.remove(key: self.key)
        }
    }

    /// Waits until no refresh is under way (its outcome does not matter here).
    func settle() async {
        while let inFlight {
            _ = try? await inFlight.value
            if self.inFlight == inFlight { break }
        }
    }

    /// A credential whose access token stays valid for at least `minimumValidity` seconds, refreshed if it
    /// would not (a credential without an expiry is taken as valid). Throws ``SwitchbackError/Code/noRefreshToken``
    /// when it expires and cannot be refreshed, and `storeFailed` with nothing stored.
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
        await writesSettled()
        if inFlight == nil, var stored = try await store.load(key: key) {
            if protection != nil, stored.refreshToken != nil {
                // Stored before protection was turned on (or by someone else): the refresh token moves behind it now.
                let found = stored
                try await exclusively { try await self.keep(found) }
                stored.refreshToken = nil
            }
            // A mark left by a refresh cut off does not stop a still-valid access token from being used (a
            // token endpoint that is down must not block every API call); it is acted on at the next refresh.
            if stored.expiresAt.map({ $0.timeIntervalSince(clock.now()) >= minimumValidity }) ?? true { return stored }
        }
        return try await refresh(unlessValidFor: minimumValidity)
    }

    /// Refreshes now; callers that arrive while a refresh is under way share its result.
    public func refresh() async throws -> Credential {
        try await refresh(unlessValidFor: nil)
    }

    /// With `minimumValidity`, a caller that read the credential before another caller's refresh stored
    /// its result takes that result instead of refreshing again.
    private func refresh(unlessValidFor minimumValidity: TimeInterval?) async throws -> Credential {
        await writesSettled()
        if let inFlight { return try await inFlight.value }
        let backgroundWork = backgroundWork
        let task = Task {
            guard let backgroundWork else { return try await self.performRefresh(unlessValidFor: minimumValidity) }
            return try await backgroundWork.finish("switchback.refresh") { try await self.performRefresh(unlessValidFor: minimumValidity) }
        }
        inFlight = task
        defer { inFlight = nil }
        return try await task.value
    }

    private func performRefresh(unlessValidFor minimumValidity: TimeInterval?) async throws -> Credential {
        let started = generation
        guard let stored = try await store.load(key: key) else {
            throw SwitchbackError(.storeFailed, "no credential is stored under \"\(key)\"")
        }
        let interrupted = try await store.load(key: refreshMarkKey) != nil
        if let minimumValidity, !interrupted, let expiresAt = stored.expiresAt, expiresAt.timeIntervalSince(clock.now()) >= minimumValidity {
            return stored
        }
        if interrupted { logger.notice("a refresh was cut off before its result was stored; trying again", metadata: ["key": "\(key)"]) }
        guard generation == started else { throw CancellationError() }
        var presented = stored
        if let protection, stored.refreshToken == nil {
            // The one place the user is asked: the access token is about to expire. A decline changes nothing.
            guard let refreshToken = try await protection.secrets.read(key: key, reason: protection.reason) else {
                throw SwitchbackError(
                    .reauthenticationRequired, "the protected refresh token is gone (removed, or invalidated by a biometry change); sign in again")
            }
            presented.refreshToken = refreshToken
            guard generation == started else { throw CancellationError() }
        }
        try await store.save(stored, key: refreshMarkKey)
        let refreshed: Credential
        do {
            refreshed = try await client.refresh(presented)
        } catch let error as SwitchbackError where error.code == .tokenEndpointError && error.oauthError?.error == "invalid_grant" {
            // Someone else (another process sharing the store) may have rotated it meanwhile.
            // (A protected credential is stored without its refresh token: its access token tells instead.)
            if let current = try await store.load(key: key),
                current.refreshToken != stored.refreshToken || (protection != nil && current.accessToken != stored.accessToken)
            {
                try await store.remove(key: refreshMarkKey)
                logger.info("the refresh token was rotated elsewhere; using the stored credential", metadata: ["key": "\(key)"])
                return current
            }
            try await store.remove(key: refreshMarkKey)
            throw SwitchbackError(
                .reauthenticationRequired,
                interrupted
                    ? "the provider refused the refresh token after a refresh was cut off (its rotation was lost); sign in again"
                    : "the provider refused the refresh token (revoked or expired); sign in again",
                oauthError: error.oauthError, underlying: error)
        } catch {
            // Not refused: the mark stays only if the request may have reached the provider.
            if let error = error as? SwitchbackError, error.code == .transportFailed {
                throw error
            }
            try? await store.remove(key: refreshMarkKey)
            throw error
        }
        // Signed out or signed in again meanwhile: the result belongs to a credential that is gone.
        guard generation == started else {
            try? await store.remove(key: refreshMarkKey)
            throw SwitchbackError(.reauthenticationRequired, "the credential was replaced or removed while it was being refreshed")
        }
        // The rotated token is stored before anyone gets the new access token.
        try await keep(refreshed)
        try await store.remove(key: refreshMarkKey)
        guard protection != nil else { return refreshed }
        var unprotected = refreshed
        unprotected.refreshToken = nil
        return unprotected
    }
}
