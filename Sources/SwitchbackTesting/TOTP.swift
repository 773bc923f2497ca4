import Crypto
public import Foundation

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP, HMAC-SHA-1): what a hardware code
/// display such as MitID's shows. Shared by the emulator, which checks codes, and the simulated device,
/// which reads them off its code display. Not part of the supported API.
@_spi(SwitchbackInternals) public enum TOTP {
    /// The code for `date`: `digits` decimal digits of the HOTP value at `floor(unixTime / step)`.
    public static func code(secret: [UInt8], at date: Date, step: TimeInterval = 30, digits: Int = 6) -> String {
        code(secret: secret, counter: UInt64(max(0, date.timeIntervalSince1970) / step), digits: digits)
    }

    /// RFC 4226 §5.3: HMAC-SHA-1 over the big-endian counter, dynamic truncation, modulo 10^digits.
    public static func code(secret: [UInt8], counter: UInt64, digits: Int) -> String {
        var bigEndian = counter.bigEndian
        let message = withUnsafeBytes(of: &bigEndian) { Data($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - value.count)) + value
    }
}
