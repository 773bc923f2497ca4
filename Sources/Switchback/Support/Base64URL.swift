public import Foundation

/// Base64url without padding (RFC 7515 §2), coded directly on bytes: tokens are decoded on every
/// validation, and going through Foundation's base64 with character replacement cost more than the
/// signature check itself.
@_spi(SwitchbackInternals) public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    @_spi(SwitchbackInternals) public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer &<< 8 | UInt32(byte)) & 0xFFFF
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer &<< UInt32(6 - bits)) & 0x3F)]) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Whether every character of `text` is in the base64url alphabet (no padding): the shape of the
    /// one-time values and secrets this project issues.
    @_spi(SwitchbackInternals) public static func isAlphabet(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { value(of: $0) != nil }
    }

    /// Decodes strict base64url: no padding, no whitespace, no characters outside the alphabet, and
    /// unused trailing bits zero (so one value has exactly one encoding).
    @_spi(SwitchbackInternals) public static func decode(_ text: some StringProtocol) -> Data? {
        decode(bytes: text.utf8)
    }

    @_spi(SwitchbackInternals) public static func decode(bytes input: some Collection<UInt8>) -> Data? {
        guard input.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in input {
            guard let value = value(of: byte) else { return nil }
            buffer = (buffer &<< 6 | UInt32(value)) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return Data(output)
    }

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
