import Foundation

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

    public init(secrets: any UserAuthenticatedSecrets, reason: String) {
        self.secrets = secrets
        self.reason = reason
    }
}
