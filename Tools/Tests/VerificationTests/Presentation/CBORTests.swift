import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackVerification

/// The CBOR reader and writer the mdoc verifier and App Attest share (RFC 8949), and the session transcript
/// an mdoc's device signature covers (OpenID4VP 1.0 §B.2.6.1), against the specification's own example.
@Suite("CBOR")
struct CBORTests {
    static func hex(_ text: String) -> Data {
        let digits = Array(text.filter { !$0.isWhitespace })
        return Data(stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! })
    }

    @Test("RFC 8949 Appendix A examples read to their values and are written back byte for byte")
    func appendixA() throws {
        let examples: [(String, CBOR)] = [
            ("00", .unsigned(0)), ("17", .unsigned(23)), ("1818", .unsigned(24)), ("1903e8", .unsigned(1000)),
            ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)), ("20", .int(-1)), ("3903e7", .int(-1000)), ("f4", .bool(false)),
            ("f6", .null), ("f7", .undefined), ("40", .bytes(Data())), ("4401020304", .bytes(Data([1, 2, 3, 4]))), ("6161", "a"),
            ("62c3bc", "ü"), ("83010203", .array([.int(1), .int(2), .int(3)])),
            ("a201020304", .map([.init(.int(1), .int(2)), .init(.int(3), .int(4))])),
            ("c074323031332d30332d32315432303a30343a30305a", .tagged(0, "2013-03-21T20:04:00Z")),
            ("d818456449455446", .tagged(24, .bytes(Data("dIETF".utf8)))),
        ]
        for (text, value) in examples {
            #expect(try CBOR.decode(Self.hex(text)) == value, "\(text)")
            #expect(value.encoded == Self.hex(text), "\(text)")
        }
        #expect(try CBOR.decode(Self.hex("f93c00")) == .float(1.0))
        #expect(try CBOR.decode(Self.hex("f9c400")) == .float(-4.0))
        #expect(try CBOR.decode(Self.hex("f90001")) == .float(5.960464477539063e-8))
        #expect(try CBOR.decode(Self.hex("fa47c35000")) == .float(100000.0))
    }

    @Test("hostile bytes are refused with a CBORError, never a crash: truncated, indefinite, deep, too long, duplicate keys, bad UTF-8, trailing")
    func hostile() {
        for text in [
            "", "a1", "5f4100ff", "9fff", String(repeating: "81", count: 40) + "00", "5bffffffffffffffff", "9bffffffffffffffff",
            "bb7fffffffffffffff", "63fffefd", "a000", "a2010201 03", "1c", "f8ff", "d81858054449455446",
        ] {
            #expect(throws: CBORError.self, "\(text)") { _ = try CBOR.decode(Self.hex(text)) }
        }
    }

    @Test("a large map costs linear time (duplicates found by the keys' bytes); past 4096 pairs it is refused; text is compared by bytes")
    func largeMaps() throws {
        func map(_ count: Int, duplicate: Bool = false) -> Data {
            CBOR.map((0..<count).map { .init(.text("key-\(duplicate && $0 == count - 1 ? 0 : $0)"), .null) }).encoded
        }
        let clock = ContinuousClock()
        let encoded = map(4096)
        // The fastest of three: a quadratic decode is slow every time, a loaded machine's stall only once.
        var elapsed = Duration.seconds(60)
        for _ in 0..<3 { elapsed = min(elapsed, try clock.measure { _ = try CBOR.decode(encoded) }) }
        #expect(elapsed < .seconds(1), "4096 text keys took \(elapsed); comparing each with every other took seconds")
        #expect(throws: CBORError.self) { _ = try CBOR.decode(map(4097)) }
        #expect(throws: CBORError.self) { _ = try CBOR.decode(map(4000, duplicate: true)) }
        // "K" and the Kelvin sign are equal as Swift strings, not as CBOR text: two keys, not a duplicate.
        let kelvin = CBOR.map([.init("K", .int(1)), .init(.text("\u{212A}"), .int(2))])
        #expect(try CBOR.decode(kelvin.encoded)["K"] == .int(1))
        #expect(CBOR.text("K") != CBOR.text("\u{212A}"))
    }

    @Test("RFC 3339 dates as an MSO writes them: the same instants Foundation reads; malformed ones refused")
    func dates() {
        let formatter = ISO8601DateFormatter()
        for text in [
            "2022-03-31T22:48:31Z", "2024-02-29T00:00:00Z", "1970-01-01T00:00:00Z", "2099-12-31T23:59:59Z", "2023-03-22T22:48:31+05:30",
            "2023-03-22T22:48:31-08:00", "1969-07-20T20:17:40Z", "2000-02-29T12:00:00Z",
        ] {
            #expect(RFC3339.date(text) == formatter.date(from: text), "\(text)")
        }
        #expect(RFC3339.date("2022-03-31T22:48:31.250Z") == Date(timeIntervalSince1970: 1_648_766_911.25))
        #expect(RFC3339.date("2022-03-31t22:48:31z") == RFC3339.date("2022-03-31T22:48:31Z"))
        for text in [
            "", "2022-03-31", "2022-03-31T22:48:31", "2022-02-29T00:00:00Z", "2022-13-01T00:00:00Z", "2022-03-31T24:00:00Z", "2022-03-31T22:48:60Z",
            "2022-03-31T22:48:31.Z", "2022-03-31T22:48:31+0530", "2022-03-31T22:48:31Zjunk", "22-03-31T22:48:31Z", "2022-03-31T22:48:31+24:00",
        ] {
            #expect(RFC3339.date(text) == nil, "\(text)")
        }
    }

    @Test("OpenID4VP 1.0 §B.2.6.1's example: the handover info, its hash, and the session transcript, byte for byte")
    func sessionTranscript() throws {
        let thumbprint = try #require(
            DPoPKey.thumbprint(
                of: .object([
                    "kty": "EC", "crv": "P-256", "x": "DxiH5Q4Yx3UrukE2lWCErq8N8bqC9CHLLrAwLz5BmE0",
                    "y": "XtLM4-3h5o3HUH0MHVJV0kyq0iBlrBwlh8qEDMZ4-Pc",
                    "use": "enc", "alg": "ECDH-ES", "kid": "1",
                ])
            ).flatMap { Base64URL.decode($0) })
        #expect(thumbprint == Self.hex("4283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047"))
        let binding = MDocVerifier.SessionBinding(
            clientID: "x509_san_dns:example.com", nonce: "exc7gBkxjx1rdc9udRrveKvSsJIq80avlXeLHhGwqtA", encryptionKeyThumbprint: thumbprint,
            responseURI: "https://example.com/response")
        #expect(
            binding.handoverInfo.encoded
                == Self.hex(
                    """
                    847818783530395f73616e5f646e733a6578616d706c652e636f6d782b6578633767426b786a7831726463397564527276654b7653734a4971383061766c58654c48684777717441
                    58204283ec927ae0f208daaa2d026a814f2b22dca52cf85ffa8f3f8626c6bd669047781c68747470733a2f2f6578616d706c652e636f6d2f726573706f6e7365
                    """))
        #expect(
            binding.sessionTranscript.encoded
                == Self.hex("83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494cefdd9d95240d254b046b11b68013722aad38ac"))
    }

    @Test("a map key written with a longer head than needed is still the same key: the map has it twice and is refused (a fuzz finding)")
    func duplicateKeyWithLongHead() {
        // {0: 0, -12: 0, 0: -21} with the first 0 written as 18 00: the bytes differ, the keys do not.
        #expect(throws: CBORError.self) { try CBOR.decode(Self.hex("a3180000" + "2b00" + "0034")) }
        #expect(throws: CBORError.self) { try CBOR.decode(Self.hex("a2" + "6161" + "00" + "7a0000000161" + "01")) }
        // The same three keys, all different, still read.
        #expect((try? CBOR.decode(Self.hex("a3180000" + "2b00" + "0134"))) != nil)
    }
}
