public import Foundation
import Crypto
@_spi(SwitchbackInternals) import Switchback

/// The Swedish BankID behaviours that vary.
public struct BankIDSwedenOptions: Sendable, Equatable {
    /// The autostart link as `https://app.bankid.com/?…` instead of `bankid:///?…`.
    public var appLinkForm = false
    /// Seconds an order stays pending before collect reports `failed` with `expiredTransaction`. BankID
    /// publishes no figure the review could confirm; three minutes is assumed (`short-order`: 2 s).
    public var orderLifetime: TimeInterval = 180
    /// Seconds an order waits for an app to open it (by autostart or by scanning the QR code) before
    /// collect reports `failed` with `startFailed`: 30 s, the window Pointsharp's BankID guide gives for
    /// scanning (secondary; `short-order`: 2 s).
    public var startLifetime: TimeInterval = 30
    /// How old, in seconds, a scanned QR code may be: the code changes every second, so only the
    /// current one and the one before pass (assumed; BankID publishes no figure).
    public static let qrCodeAge = 2

    /// The animated QR code's content at `seconds` since the order started (BankID RP API v6, "secure
    /// start"): `bankid.<qrStartToken>.<seconds>.<qrAuthCode>`, the code being HMAC-SHA256 keyed with
    /// `qrStartSecret` over the decimal seconds, in lowercase hex.
    public static func qrCode(startToken: String, startSecret: String, seconds: Int) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(String(seconds).utf8), using: SymmetricKey(data: Data(startSecret.utf8)))
        return "bankid.\(startToken).\(seconds).\(code.map { String(format: "%02x", $0) }.joined())"
    }

    public init() {}

    func autostartLink(token: String, redirect: String?) -> String {
        let base = appLinkForm ? "https://app.bankid.com/" : "bankid:///"
        return "\(base)?autostarttoken=\(token)&redirect=\(redirect.map(FormEncoding.escape) ?? "null")"
    }
}
