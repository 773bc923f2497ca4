/// Why a Swedish BankID order failed, in the RP API's words (`hintCode` when collect reports `failed`),
/// read from the error a broker ends the sign-in with, so that the app can tell a user who cancelled in
/// the BankID app from an order that expired, a blocked BankID, or a newer order that replaced this one,
/// and show the message BankID recommends for each.
///
/// ```swift
/// } catch let error as SwitchbackError {
///     if let hint = BankIDHintCode(failure: error) { show(localized(hint.recommendedMessage)) }
/// }
/// ```
///
/// Brokers pass the code on in `error_description`; the emulator's broker puts it first
/// (`"userCancel: …"`), which is what this reads (see `Documentation/Providers.md`). A struct with static
/// members, so that codes BankID adds later are values, not a breaking change.
public struct BankIDHintCode: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The user cancelled in the BankID app.
    public static let userCancel = BankIDHintCode("userCancel")
    /// The order expired: the app was not started, or the user did not finish in time.
    public static let expiredTransaction = BankIDHintCode("expiredTransaction")
    /// The user's BankID is blocked, revoked or not valid (or the security code was wrong too often).
    public static let certificateErr = BankIDHintCode("certificateErr")
    /// BankID received a newer order for the same user, which replaced this one.
    public static let cancelled = BankIDHintCode("cancelled")
    /// No BankID app started the order in time (not installed, or the QR code was not scanned).
    public static let startFailed = BankIDHintCode("startFailed")
    /// The user said in the app that they are not in a call with the relying party.
    public static let userDeclinedCall = BankIDHintCode("userDeclinedCall")
    /// The user's BankID app is too old for what the order needs.
    public static let notSupportedByUserApp = BankIDHintCode("notSupportedByUserApp")

    /// The code a failed sign-in carries: the word before the first colon of the provider's
    /// `error_description` when the error is `access_denied`; nil for any other failure.
    public init?(failure error: SwitchbackError) {
        guard let oauth = error.oauthError, oauth.error == "access_denied", let description = oauth.errorDescription,
            let colon = description.firstIndex(of: ":")
        else { return nil }
        let word = description[..<colon]
        guard !word.isEmpty, word.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        self.init(String(word))
    }

    /// The identifier of the message BankID's guidelines recommend showing (its "RFA" list), for the
    /// app to look up its own localized text: `RFA6` for `userCancel`, and so on; `RFA22`, BankID's
    /// message for an unknown failure, for a code without one of its own. With `qrCode`, `startFailed`
    /// names the QR variant (`RFA17B`, the code was not scanned) rather than `RFA17A`.
    public func recommendedMessage(qrCode: Bool = false) -> String {
        switch self {
        case .userCancel: "RFA6"
        case .expiredTransaction: "RFA8"
        case .certificateErr: "RFA16"
        case .cancelled: "RFA3"
        case .startFailed: qrCode ? "RFA17B" : "RFA17A"
        default: "RFA22"
        }
    }

    public var description: String { rawValue }
}
