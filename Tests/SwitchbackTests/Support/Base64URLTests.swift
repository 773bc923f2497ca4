import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport

@Suite("Base64url")
struct Base64URLTests {
    @Test(
        "RFC 4648 §10 vectors, without padding",
        arguments: [
            ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
        ])
    func vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Data(plain.utf8))
    }

    @Test("the URL-safe characters stand for 62 and 63")
    func urlSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == Data([0xFB, 0xFF, 0xBF]))
    }

    @Test("isAlphabet accepts exactly the 64 URL-safe characters, in strings and substrings")
    func alphabet() {
        let all = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        #expect(Base64URL.isAlphabet(all) && Base64URL.isAlphabet(all.dropFirst(10)) && Base64URL.isAlphabet(""))
        for byte in UInt8(0)...UInt8(127) where !all.utf8.contains(byte) {
            #expect(!Base64URL.isAlphabet("ab" + String(UnicodeScalar(byte)) + "cd"), "\(byte)")
        }
        #expect(!Base64URL.isAlphabet("abcé") && !Base64URL.isAlphabet("abc=".dropFirst()))
    }

    @Test("round trip of every length up to 64 bytes")
    func roundTrip() {
        for length in 0...64 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == Data(bytes))
        }
    }

    @Test(
        "padding, standard base64 characters, whitespace, an impossible length and non-zero trailing bits are refused",
        arguments: [
            "Zg==", "Zm9v+/", "Zm9v Yg", "Zm9vY", "Zh", "Zm9",  // "fo" is Zm8: Zh and Zm9 differ only in unused bits
        ])
    func refused(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    /// The decoder reads four characters at a time through a table; this holds it to an independent
    /// reference on strings near the edges: Foundation's base64 after swapping the alphabet and padding, and
    /// the value accepted only when it encodes back to exactly the same text (one value, one encoding).
    @Test("agrees with Foundation's base64 read strictly on 20 000 generated strings")
    func agreesWithFoundation() {
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        let strays = Array("=+/ .\n\u{0}".utf8) + [0x80, 0xC3, 0xFF]
        var generator = SeededGenerator(state: 0x5EED_B64)
        var accepted = 0
        for _ in 0..<20_000 {
            let length = generator.below(42)
            var bytes = (0..<length).map { _ in generator.pick(characters) }
            if length > 0, generator.chance(25) {
                bytes[generator.below(length)] = generator.pick(strays)
            }
            let ours = bytes.withUnsafeBufferPointer { Base64URL.decode(buffer: $0) }
            #expect(Base64URL.decode(bytes: bytes) == ours)
            #expect(Base64URL.decode(bytes: bytes[...]) == ours)
            let reference = Self.strictReference(bytes)
            #expect(ours == reference, "\(bytes)")
            if ours != nil { accepted += 1 }
        }
        // Both verdicts must be well represented, or the comparison proves little.
        #expect(accepted > 5_000 && accepted < 15_000, "accepted \(accepted)")
    }

    @Test("encodes as Foundation's base64 does, with the URL-safe alphabet and no padding, for every length up to 300")
    func encodesAsFoundation() {
        var generator = SeededGenerator(state: 0xB64_E4C0DE)
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let reference = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == reference)
            #expect(Base64URL.encode(Data(bytes)) == reference)
            #expect(Base64URL.encode(bytes.lazy.map { $0 }) == reference)
        }
    }

    private static func strictReference(_ bytes: [UInt8]) -> Data? {
        guard bytes.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") }) else { return nil }
        var standard = bytes.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        guard let text = String(bytes: standard, encoding: .ascii), let data = Data(base64Encoded: text) else { return nil }
        return Base64URL.encode(data) == String(decoding: bytes, as: UTF8.self) ? data : nil
    }
}
