import Foundation
import Testing
@_spi(SwitchbackInternals) import SwitchbackTesting

/// The code display's one-time passwords against the published vectors.
@Suite("TOTP (RFC 6238) and HOTP (RFC 4226)")
struct TOTPTests {
    static let secret = Array("12345678901234567890".utf8)

    @Test("RFC 4226 Appendix D: HOTP values for counters 0 to 9, six digits")
    func hotpVectors() {
        let expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"]
        #expect((0..<10).map { TOTP.code(secret: Self.secret, counter: UInt64($0), digits: 6) } == expected)
    }

    @Test(
        "RFC 6238 Appendix B: SHA-1 TOTP values, eight digits, 30-second steps",
        arguments: [
            (59.0, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
        ])
    func totpVectors(time: Double, code: String) {
        #expect(TOTP.code(secret: Self.secret, at: Date(timeIntervalSince1970: time), digits: 8) == code)
    }
}
