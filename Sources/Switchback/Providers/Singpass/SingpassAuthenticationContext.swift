import Foundation

/// What a Singpass Login request is for: `authentication_context_type`, one of the values Singpass
/// documents, and an optional `authentication_context_message` the user is shown.
///
/// Singpass, "1. The authorization request" (Singpass-specific parameters), docs.developer.singpass.gov.sg:
/// the type is mandatory for Login apps (and allowed only for them); the message is at most 100 characters
/// of letters, digits, spaces and `. , - @ ' ! ( )`. GovTech's mock, MockPass, refuses any other type.
///
/// ```swift
/// let context = try SingpassAuthenticationContext(type: "BANK_CASA_OPENING", message: "Open a savings account")
/// let request = try await ProviderPreset.singpass(context: context).request(strategy: .systemBrowser, links: links)
/// ```
public struct SingpassAuthenticationContext: Sendable, Equatable {
    public let type: String
    public let message: String?

    /// The authorization parameter names Singpass reads.
    public static let typeParameter = "authentication_context_type"
    public static let messageParameter = "authentication_context_message"

    /// Signing in to the app, Singpass's default type.
    public static let appAuthenticationDefault = SingpassAuthenticationContext(checked: "APP_AUTHENTICATION_DEFAULT", message: nil)

    /// Every type the Singpass page lists (as it spells them, `BANK_ADD_LOCAL_RECEIPIENT` included).
    public static let documentedTypes: Set<String> = [
        "CPF_CHANGE_PAYMENT_MODE", "CPF_CHANGE_DAILY_WITHDRAWAL_LIMIT", "CPF_PROFILE_UPDATE", "CPF_LINK_BANK_ACCOUNT", "CPF_FUNDS_TRANSFER",
        "BANK_CASA_OPENING", "BANK_CASA_INITIAL_USAGE", "BANK_CARD_APPLICATION", "BANK_CARD_INITIAL_USAGE", "BANK_LOAN_APPLICATION",
        "BANK_ADD_LOCAL_RECEIPIENT", "BANK_ADD_OVERSEAS_RECIPIENT", "BANK_INCREASE_TRANSFER_LIMIT", "BANK_REPORT_FRAUD_SUSPICIOUS_ACTIVITY",
        "BANK_FUNDS_TRANSFER_LOCAL", "BANK_REMIT_MONEY_OVERSEAS", "BANK_REPORT_LOST_CARD", "BANK_CHANGE_NOTIFICATION_METHOD",
        "BANK_INCREASE_CREDIT_CARD_LIMIT", "BANK_REQUEST_CASH_ADVANCE", "BANK_INCREASE_INFLOW_OUTFLOW", "BANK_ACTIVATE_DORMANT_ACCOUNT",
        "BANK_LOGIN_NEW_DEVICE", "BANK_LOGIN_UNFAMILIAR_IP", "BANK_UPDATE_USER_INFORMATION", "BANK_NEW_DEVICE_REGISTRATION",
        "BANK_UNLOCK_MONEY_LOCK", "BANK_GOOGLE_PAY_APPLE_PAY_CARD_ONBOARDING",
        "FI_ACCOUNT_OPENING", "FI_LINK_BANK_ACCOUNT", "FI_INCREASE_TRANSFER_LIMIT", "FI_INCREASE_WITHDRAWAL_LIMIT", "FI_INITIATE_DEPOSIT",
        "TELCO_SIM_CARD_APPLICATION", "TELCO_SIM_CARD_ACTIVATION", "TELCO_CHANGE_ACCOUNT_DETAILS", "TELCO_ACTIVATE_ROAMING",
        "TELCO_CHANGE_NOTIFICATION_METHOD",
        "APP_AUTHENTICATION_DEFAULT", "APP_PAYMENT_DEFAULT", "APP_ACCOUNT_PASSWORD_CHANGE_DEFAULT", "APP_ACCOUNT_PASSWORD_RESET_DEFAULT",
        "APP_ACCOUNT_DETAILS_CHANGE_DEFAULT", "APP_ONBOARDING_DEFAULT",
    ]

    /// The longest message Singpass shows.
    public static let longestMessage = 100

    /// A context of a documented type, with a message Singpass accepts; otherwise
    /// ``SwitchbackError/Code/invalidConfiguration`` naming what is wrong.
    public init(type: String, message: String? = nil) throws {
        try Self.check(type: type, message: message)
        self.init(checked: type, message: message)
    }

    private init(checked type: String, message: String?) {
        self.type = type
        self.message = message
    }

    /// The authorization parameters that carry it.
    public var parameters: [(String, String)] {
        [(Self.typeParameter, type)] + (message.map { [(Self.messageParameter, $0)] } ?? [])
    }

    /// Checks the context parameters among `parameters`, as Singpass would: a documented type, and a
    /// message only beside a type, of allowed characters and length. Other parameters are not looked at.
    public static func check(parameters: [(String, String)]) throws {
        let types = parameters.filter { $0.0 == typeParameter }.map(\.1)
        let messages = parameters.filter { $0.0 == messageParameter }.map(\.1)
        guard types.count <= 1, messages.count <= 1 else {
            throw SwitchbackError(.invalidConfiguration, "\(typeParameter) and \(messageParameter) may each be sent once")
        }
        guard let type = types.first else {
            if !messages.isEmpty { throw SwitchbackError(.invalidConfiguration, "\(messageParameter) is sent only with \(typeParameter)") }
            return
        }
        try check(type: type, message: messages.first)
    }

    private static func check(type: String, message: String?) throws {
        guard documentedTypes.contains(type) else {
            throw SwitchbackError(
                .invalidConfiguration, "\(typeParameter) \"\(type.prefix(60))\" is not one of the values Singpass documents")
        }
        guard let message else { return }
        guard !message.isEmpty, message.count <= longestMessage else {
            throw SwitchbackError(.invalidConfiguration, "\(messageParameter) must be 1 to \(longestMessage) characters")
        }
        guard message.unicodeScalars.allSatisfy({ messageCharacters.contains($0) }) else {
            throw SwitchbackError(
                .invalidConfiguration, "\(messageParameter) may hold only letters, digits, spaces and . , - @ ' ! ( )")
        }
    }

    private static let messageCharacters: Set<Unicode.Scalar> = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .,-@'!()".unicodeScalars)
}
