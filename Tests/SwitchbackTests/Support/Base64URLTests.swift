import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

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
}
