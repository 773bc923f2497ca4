/// What a Keychain status means for a store, decided here so that the Apple adapter only passes the
/// `OSStatus` on (the values are Apple's, from the Security framework's documentation).
public enum KeychainStatus {
    /// `errSecItemNotFound`: nothing stored.
    public static let itemNotFound: Int32 = -25300
    /// `errSecInteractionNotAllowed`: the item exists but protected data is unavailable (before the first
    /// unlock after a restart, or for a `WhenUnlocked` item while locked).
    public static let interactionNotAllowed: Int32 = -25308
    /// `errSecMissingEntitlement`: the app lacks the keychain-access-groups entitlement for the access group
    /// it named (MSAL's most reported error).
    public static let missingEntitlement: Int32 = -34018
    /// `errSecUserCanceled`: the user cancelled the authentication an access-controlled item asked for.
    public static let userCanceled: Int32 = -128
    /// `errSecAuthFailed`: the authentication an access-controlled item asked for failed.
    public static let authFailed: Int32 = -25293
    /// `errSecNotAvailable`: no trust results are available (on a device without a passcode, an item that
    /// requires one cannot be written).
    public static let notAvailable: Int32 = -25291

    /// The typed error for a status other than success and not-found: ``SwitchbackError/Code/credentialUnavailable``
    /// for a locked device (retryable, never "signed out"), ``SwitchbackError/Code/entitlementMissing`` for a
    /// missing entitlement, `storeFailed` otherwise.
    public static func error(_ status: Int32, operation: String, accessGroup: String?) -> SwitchbackError {
        switch status {
        case interactionNotAllowed:
            SwitchbackError(
                .credentialUnavailable,
                "the Keychain cannot be read before the device is unlocked (OSStatus \(status) on \(operation)); try again then")
        case missingEntitlement:
            SwitchbackError(
                .entitlementMissing,
                "the app lacks the keychain-access-groups entitlement\(accessGroup.map { " for \($0)" } ?? "") (OSStatus \(status) on \(operation))")
        case userCanceled, authFailed:
            SwitchbackError(.authenticationDeclined, "the user did not authenticate for the \(operation) (OSStatus \(status))")
        case notAvailable:
            SwitchbackError(
                .authenticationUnavailable, "the device cannot authenticate the user for the \(operation) (OSStatus \(status)); is a passcode set?")
        default:
            SwitchbackError(.storeFailed, "the Keychain refused the \(operation) (OSStatus \(status))")
        }
    }
}

/// Lets work the user started finish when the app leaves the foreground: on iOS a background task
/// (`BackgroundTaskWork` in SwitchbackApple), so that a refresh under way is not frozen between sending
/// the old refresh token and storing the new one.
public protocol BackgroundWork: Sendable {
    /// Runs `body` as work named `name` that may go on in the background; returns or throws what it does.
    func finish<Result: Sendable>(_ name: String, _ body: @Sendable () async throws -> Result) async throws -> Result
}

/// Tells whether protected data (Keychain items, files protected until first unlock) can be read, and waits
/// until it can. On iOS it is `UIApplication.isProtectedDataAvailable` and its notification
/// (`ProtectedDataAvailability` in SwitchbackApple); ``CredentialManager`` waits on it instead of reporting a
/// locked device as no credential.
public protocol ProtectedDataGate: Sendable {
    /// Returns once protected data is available; at once when it already is. Throws `CancellationError`
    /// when the waiting task is cancelled.
    func waitUntilAvailable() async throws
    /// Whether protected data can be read now. A store that answers "nothing stored" while it cannot (a
    /// Keychain read before the first unlock that reports `errSecItemNotFound` instead of
    /// `errSecInteractionNotAllowed`, as other SDKs' users have seen) is not believed then. The default,
    /// for a gate that cannot tell, is true: an empty read is believed.
    var isAvailable: Bool { get async }
}

extension ProtectedDataGate {
    public var isAvailable: Bool { get async { true } }
}
