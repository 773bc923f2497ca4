public import Foundation

/// Base64url without padding (RFC 7515 §2), coded directly on bytes: tokens are decoded on every
/// validation, and going through Foundation's base64 with character replacement cost more than the
/// signature check itself.
@_spi(SwitchbackInternals) public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    @_spi(SwitchbackInternals) public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) { return encoded }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// Three bytes to four characters at a time, into a string of the exact length.
    @_spi(SwitchbackInternals) public static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let whole = input.count / 3 * 3
        let tail = input.count - whole
        let length = whole / 3 * 4 + (tail == 0 ? 0 : tail + 1)
        return String(unsafeUninitializedCapacity: length) { out in
            var read = 0
            var written = 0
            while read < whole {
                let group = UInt32(input[read]) << 16 | UInt32(input[read + 1]) << 8 | UInt32(input[read + 2])
                out[written] = alphabet[Int(group >> 18)]
                out[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
                out[written + 2] = alphabet[Int(group >> 6 & 0x3F)]
                out[written + 3] = alphabet[Int(group & 0x3F)]
                read += 3
                written += 4
            }
            if tail > 0 {
                let group = UInt32(input[whole]) << 16 | (tail == 2 ? UInt32(input[whole + 1]) << 8 : 0)
                out[written] = alphabet[Int(group >> 18)]
                out[written + 1] = alphabet[Int(group >> 12 & 0x3F)]
                if tail == 2 { out[written + 2] = alphabet[Int(group >> 6 & 0x3F)] }
            }
            return length
        }
    }

    /// Whether every character of `text` is in the base64url alphabet (no padding): the shape of the
    /// one-time values and secrets this project issues.
    @_spi(SwitchbackInternals) public static func isAlphabet(_ text: some StringProtocol) -> Bool {
        // A string's UTF-8 is contiguous: one pass over its bytes, not a generic iteration per byte (this
        // runs on every one-time code the companion receives).
        if let answer = text.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy { value(of: $0) != nil } }) { return answer }
        return text.utf8.allSatisfy { value(of: $0) != nil }
    }

    /// Decodes strict base64url: no padding, no whitespace, no characters outside the alphabet, and
    /// unused trailing bits zero (so one value has exactly one encoding).
    @_spi(SwitchbackInternals) public static func decode(_ text: some StringProtocol) -> Data? {
        decode(bytes: text.utf8)
    }

    @_spi(SwitchbackInternals) public static func decode(bytes input: some Collection<UInt8>) -> Data? {
        // Tokens arrive as contiguous UTF-8: decode straight from their storage, four characters at a time.
        if let decoded = input.withContiguousStorageIfAvailable({ decode(buffer: $0) }) { return decoded }
        return Array(input).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    @_spi(SwitchbackInternals) public static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> Data? {
        guard let outputCount = decodedCount(input.count) else { return nil }
        // Written straight into the storage the answer keeps (not an array copied into a `Data`): a token's
        // three parts are decoded on every validation.
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: max(outputCount, 1))
        guard decode(input, into: out) else {
            out.deallocate()
            return nil
        }
        return Data(bytesNoCopy: out, count: outputCount, deallocator: .custom { bytes, _ in bytes.deallocate() })
    }

    /// How many bytes `count` characters decode to, or nil for a length no encoding has.
    static func decodedCount(_ count: Int) -> Int? {
        guard count % 4 != 1 else { return nil }
        let tail = count % 4
        return count / 4 * 3 + (tail == 0 ? 0 : tail - 1)
    }

    /// Decodes `input` into `out`, which has room for ``decodedCount(_:)`` bytes; false when `input` is not
    /// base64url, strictly read.
    static func decode(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>) -> Bool {
        let count = input.count
        let whole = count / 4 * 4
        let tail = count - whole
        guard tail != 1 else { return false }
        var valid = true
        sextets.withUnsafeBufferPointer { sextets in
            var read = 0
            var written = 0
            while read < whole {
                let a = sextets[Int(input[read])]
                let b = sextets[Int(input[read + 1])]
                let c = sextets[Int(input[read + 2])]
                let d = sextets[Int(input[read + 3])]
                // An invalid character maps to 0xFF, which sets a bit no valid sextet has.
                guard (a | b | c | d) & 0xC0 == 0 else {
                    valid = false
                    break
                }
                let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                out[written] = UInt8(truncatingIfNeeded: group >> 16)
                out[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                out[written + 2] = UInt8(truncatingIfNeeded: group)
                read += 4
                written += 3
            }
            // The last two or three characters carry one or two bytes and four or two spare bits, which must
            // be zero so that one value has exactly one encoding.
            if valid, tail > 0 {
                var group: UInt32 = 0
                var seen: UInt8 = 0
                for index in whole..<count {
                    let value = sextets[Int(input[index])]
                    seen |= value
                    group = group << 6 | UInt32(value & 0x3F)
                }
                let spare = UInt32(tail * 6 - (tail - 1) * 8)
                valid = seen & 0xC0 == 0 && group & ((1 << spare) - 1) == 0
                for byte in 0..<(tail - 1) { out[written + byte] = UInt8(truncatingIfNeeded: group >> (spare + UInt32(8 * (tail - 2 - byte)))) }
            }
        }
        return valid
    }

    /// Each byte's value in the alphabet, or 0xFF for a byte outside it.
    private static let sextets: [UInt8] = (0...255).map { value(of: UInt8($0)) ?? 0xFF }

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
