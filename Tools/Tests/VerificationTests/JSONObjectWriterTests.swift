import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackVerification
import ToolsTestSupport

/// What the writer writes must read back to the same values through Foundation's decoder and through
/// ``JSONReader``: the companion's records are written by it and may be read by an instance that still uses
/// `JSONDecoder`.
@Suite("JSON object writer")
struct JSONObjectWriterTests {
    private struct Sample: Codable, Equatable {
        var text: String?
        var number: Double?
        var count: Int?
        var flag: Bool?
    }

    @Test("strings with every control character, quotes, backslashes and non-ASCII read back the same both ways")
    func strings() throws {
        let awkward = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined() + "\"\\/ é ü \u{2028} \u{1F600} \u{7F}"
        for text in [awkward, "", "plain", String(repeating: "\"", count: 40)] {
            try check(Sample(text: text, number: nil, count: nil, flag: nil))
        }
    }

    @Test("numbers of every magnitude a date or a lifetime takes, and the edges of Double, read back exactly")
    func numbers() throws {
        var generator = SeededGenerator(state: 0x0B1E_C7)
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, 1e-7, 1e16, 1e21, 1e300, -1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1_764_150_000,
            1_764_150_000.123_456,
        ]
        values += (0..<2000).map { _ in Double(bitPattern: generator.next() & 0x7FEF_FFFF_FFFF_FFFF) }
        values += (0..<2000).map { _ in Double(generator.below(4_000_000_000)) + Double(generator.below(1_000_000)) / 1_000_000 }
        for value in values {
            try check(
                Sample(text: nil, number: value, count: Int(exactly: value.rounded(.towardZero)).flatMap { abs($0) < 1 << 53 ? $0 : nil }, flag: nil))
        }
    }

    @Test("booleans, absent members, and a number that is not finite is written so that no number reader takes it")
    func others() throws {
        try check(Sample(text: nil, number: nil, count: nil, flag: true))
        try check(Sample(text: "x", number: 2, count: -3, flag: false))
        try check(Sample(text: nil, number: nil, count: nil, flag: nil))
        for value in [Double.nan, .infinity, -.infinity] {
            var writer = JSONObjectWriter()
            writer.add("number", value)
            let data = writer.data()
            #expect(throws: (any Error).self) { try JSONDecoder().decode(Sample.self, from: data) }
            #expect(throws: (any Error).self) { try JSONMembers(#require(JSONReader.object(data))).number("number") }
        }
    }

    private func check(_ sample: Sample) throws {
        var writer = JSONObjectWriter()
        writer.add("count", sample.count)
        writer.add("flag", sample.flag)
        writer.add("number", sample.number)
        writer.add("text", sample.text)
        let data = writer.data()
        let decoded = try JSONDecoder().decode(Sample.self, from: data)
        #expect(decoded == sample, "\(String(decoding: data, as: UTF8.self))")
        let members = JSONMembers(try #require(JSONReader.object(data)))
        #expect(try members.string("text") == sample.text)
        #expect(try members.number("number") == sample.number)
        #expect(try members.number("count") == sample.count.map(Double.init))
        #expect(members.values["flag"] == sample.flag.map(JSONValue.bool))
    }
}
