@_spi(SwitchbackInternals) import Switchback
public import Foundation

/// The user's hardware code display (MitID's kodeviser): it shows a new six-digit code every 30 seconds
/// (a TOTP keyed with its secret), which the user types in the browser with their user ID and password.
///
/// ```swift
/// await device.setCodeDisplay(CodeDisplay(username: "alice", password: "Secret-123", secret: secret))
/// ```
public struct CodeDisplay: Sendable {
    public let username: String
    public let password: String
    let secret: [UInt8]

    public init(username: String, password: String, secret: [UInt8]) {
        self.username = username
        self.password = password
        self.secret = secret
    }

    /// The code it shows at `date`.
    public func code(at date: Date = Date()) -> String {
        TOTP.code(secret: secret, at: date)
    }
}
