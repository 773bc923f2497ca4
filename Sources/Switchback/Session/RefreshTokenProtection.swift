public import Foundation

/// Where a refresh token is kept behind the user's Face ID, Touch ID or passcode: on Apple platforms a
/// Keychain item with an access control (`UserPresenceSecrets` in SwitchbackApple). The adapter only
/// stores and asks; ``CredentialManager`` decides when a read (and so a prompt) happens.
public protocol UserAuthenticatedSecrets: Sendable {
    /// Stores `secret` under `key`, replacing any; no prompt.
    func save(_ secret: String, key: String) async throws
    /// Asks the user to authenticate, showing `reason`, and returns the secret; nil when none is stored
    /// (or the item was invalidated, as a biometry change invalidates a `biometryCurrentSet` item). Throws
    /// ``SwitchbackError/Code/authenticationDeclined`` when the user declines or fails,
    /// ``SwitchbackError/Code/authenticationUnavailable`` when the device cannot ask.
    func read(key: String, reason: String) async throws -> String?
    /// Removes the secret under `key`; no prompt. Removing a missing one is not an error.
    func remove(key: String) async throws
}

/// Items behind the user's authentication as a platform stores them (on Apple platforms, Keychain items
/// with an access control): ``RotatingSecrets`` decides which to write, read and delete. Only ``read(name:reason:)``
/// may ask the user anything.
public protocol ProtectedItemStore: Sendable {
    /// Adds an item `name` holding `secret`, with `generation` as its one attribute readable without the
    /// user (the Keychain's `kSecAttrGeneric`). No prompt. An item of that name already there is an error.
    func add(_ secret: String, name: String, generation: Int) async throws
    /// Asks the user to authenticate, showing `reason`, and returns the item's secret; nil when there is
    /// none. Throws as ``UserAuthenticatedSecrets/read(key:reason:)`` does.
    func read(name: String, reason: String) async throws -> String?
    /// Deletes the item `name`; a missing one is not an error. No prompt.
    func delete(name: String) async throws
    /// The generation of each of `names` that exists (an item written without one reads as 0). No prompt:
    /// only attributes are read.
    func generations(of names: [String]) async throws -> [String: Int]
}

/// A secret replaced without a moment where neither the old nor the new one is stored: the new one is
/// added under the second of the key's two names with the next generation, and only then is the old one
/// deleted; a read opens whichever has the higher generation. Saves of one key must not overlap (a
/// ``CredentialManager`` runs them one at a time); a key may not end with `.next`. A replacement cut off anywhere (the phone
/// locking mid-refresh, the app terminated) leaves the old secret or the new one, never nothing. (Deleting
/// first and then adding, because updating an access-controlled item would ask the user, could leave
/// nothing: the provider had rotated the token, and the next launch blamed a biometry change.)
public struct RotatingSecrets: UserAuthenticatedSecrets {
    private let items: any ProtectedItemStore

    public init(items: any ProtectedItemStore) {
        self.items = items
    }

    /// The two names a key's secret alternates between; the first is the one a single item was kept
    /// under before, so such an item is read and replaced like any other.
    static func names(_ key: String) -> [String] { [key, key + nextSuffix] }

    /// What the second name adds to a key; a key ending with it would share an item with another key's.
    static let nextSuffix = ".next"

    /// The newest of the key's items, if any.
    private func newest(_ key: String) async throws -> (name: String, generation: Int)? {
        guard !key.hasSuffix(Self.nextSuffix) else {
            throw SwitchbackError(.storeFailed, "a protected secret's key may not end with \"\(Self.nextSuffix)\" (the second item's name)")
        }
        let generations = try await items.generations(of: Self.names(key))
        return Self.names(key).compactMap { name in generations[name].map { (name, $0) } }.max { $0.generation < $1.generation }
    }

    public func save(_ secret: String, key: String) async throws {
        let newest = try await newest(key)
        let target = Self.names(key).first { $0 != newest?.name } ?? key
        // The target holds nothing newer than `newest`: an older secret, or nothing.
        try await items.delete(name: target)
        try await items.add(secret, name: target, generation: (newest?.generation ?? 0) + 1)
        // The new secret is stored: failing to delete the old one fails nothing (it is older, and the
        // next save deletes it).
        if let newest { try? await items.delete(name: newest.name) }
    }

    public func read(key: String, reason: String) async throws -> String? {
        guard let newest = try await newest(key) else { return nil }
        return try await items.read(name: newest.name, reason: reason)
    }

    public func remove(key: String) async throws {
        guard !key.hasSuffix(Self.nextSuffix) else { return }
        for name in Self.names(key) { try await items.delete(name: name) }
    }
}

/// Keeps a ``CredentialManager``'s refresh token behind user authentication (issue: "require Face ID /
/// Touch ID or the passcode before the refresh token is read").
///
/// The manager decides when to ask, so that the prompt appears only when it means something:
/// - a **refresh** reads the token, so the user is asked only when the access token is about to expire,
///   never for an API call the access token still covers, never at launch;
/// - **saving** a sign-in's or a refresh's token asks nothing;
/// - **sign-out** asks nothing: it deletes the item, revokes the access token, and leaves the refresh token
///   to the provider's end-session (which revokes it at providers that do); the refresh token itself is
///   not revoked, as reading it would mean a prompt for a sign-out.
///
/// A decline is ``SwitchbackError/Code/authenticationDeclined``: nothing is changed, the credential stays,
/// and the app may ask again on the user's next action.
public struct RefreshTokenProtection: Sendable {
    public let secrets: any UserAuthenticatedSecrets
    /// What the prompt says ("Unlock your session to continue"); on iOS, Face ID also shows the app's
    /// `NSFaceIDUsageDescription`, which the app must declare.
    public let reason: String
    /// How long after the user authenticated a refresh may use the token again without asking: 0 (the
    /// default) asks at every refresh. Within it the token is kept in the process's memory, never written
    /// anywhere; ``CredentialManager/endGracePeriod()`` ends it early (when the app leaves the foreground,
    /// for "not again within one app session"), and a sign-out or a new sign-in ends it.
    public let gracePeriod: TimeInterval

    public init(secrets: any UserAuthenticatedSecrets, reason: String, gracePeriod: TimeInterval = 0) {
        self.secrets = secrets
        self.reason = reason
        self.gracePeriod = max(0, gracePeriod)
    }
}
