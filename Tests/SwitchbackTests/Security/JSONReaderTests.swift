import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport

/// ``JSONReader`` against Foundation's `JSONDecoder`, which it replaced for token headers and claims: the
/// same verdict and the same values on every document, except where the reader is stricter on purpose
/// (duplicate member names, nesting past 64, input that is not UTF-8) and where Foundation refuses a zero
/// written with an exponent in some spellings (`0e1` and `-0.0e-999`, though it takes `0e+1` and `0e400`),
/// which the reader reads as RFC 8259 says, as zero.
@Suite("The token JSON reader agrees with Foundation's decoder")
struct JSONReaderTests {
    /// SplitMix64: the same documents on every run and machine.
    /// Pieces a document is built from: valid forms, and (one time in twenty) the near misses a writer, or
    /// an attacker, produces.
    static let numbers = [
        "0", "-0", "7", "-12", "1646000000", "9007199254740993", "123456789012345", "1234567890123456", "123456789012345678901234567890",
        "0.5", "-0.25", "1.5e3", "1E+2", "1e-2", "2.5E-3", "1e308", "4.9e-324", "0e5", "-0.0e-999",
    ]
    static let badNumbers = [
        "01", "1.", ".5", "-", "1e", "1e+", "+1", "0x10", "Infinity", "NaN", "-01", "1.e3", "00", "1e400", "-1e400", "1e-400", "2e-324",
    ]
    static let stringPieces = [
        "a", "iss", "https://id.example.com", " ", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\u0000",
        "\\uD83D\\uDE00", "\\u001F", "é", "😀", "\u{7F}", "\u{10FFFF}",
    ]
    static let badStringPieces = ["\u{1F}", "\\uD800", "\\uDC00", "\\uD83Dx", "\\u12", "\\x", "\\U00e9", "\u{1}", "\t", "\\uDE00\\uD83D"]
    static let rawPieces: [[UInt8]] = [
        [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xC3], [0xE0, 0x80, 0x80],
    ]
    static let literals = ["true", "false", "null"]
    static let badLiterals = ["tru", "nul", "True", "NULL", "falsey"]
    static let spaces = ["", " ", "\n", "\r\n", "\t"]
    static let badSpaces = ["\u{A0}", "\u{C}"]
    static let keys = ["iss", "sub", "aud", "exp", "a", "b", "cnf", "jkt", "", "é", "x y"]

    static func string(_ g: inout SeededGenerator) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        for _ in 0..<g.below(4) {
            switch g.below(100) {
            case 0..<2: bytes += g.pick(rawPieces)
            case 2..<5: bytes += Array(g.pick(badStringPieces).utf8)
            default: bytes += Array(g.pick(stringPieces).utf8)
            }
        }
        if !g.chance(1) { bytes.append(UInt8(ascii: "\"")) }
        return bytes
    }

    static func space(_ g: inout SeededGenerator) -> [UInt8] { Array((g.chance(2) ? g.pick(badSpaces) : g.pick(spaces)).utf8) }

    static func value(_ g: inout SeededGenerator, depth: Int, _ repeated: inout Bool) -> [UInt8] {
        switch g.below(depth > 4 ? 3 : 6) {
        case 0: return Array((g.chance(5) ? g.pick(badNumbers) : g.pick(numbers)).utf8)
        case 1: return string(&g)
        case 2: return Array((g.chance(3) ? g.pick(badLiterals) : g.pick(literals)).utf8)
        case 3:
            var bytes: [UInt8] = [UInt8(ascii: "[")]
            let count = g.below(4)
            for index in 0..<count {
                bytes += space(&g) + value(&g, depth: depth + 1, &repeated) + space(&g)
                if index < count - 1 || g.chance(3) { bytes.append(UInt8(ascii: ",")) }
            }
            if !g.chance(1) { bytes.append(UInt8(ascii: "]")) }
            return bytes
        default: return object(&g, depth: depth + 1, &repeated)
        }
    }

    /// An object; `repeated` is set when a name is used twice in one object.
    static func object(_ g: inout SeededGenerator, depth: Int, _ repeated: inout Bool) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "{")] + space(&g)
        let count = g.below(6)
        var names: Set<[UInt8]> = []
        for index in 0..<count {
            let key = g.chance(80) ? Array("\"\(g.pick(keys))\"".utf8) : string(&g)
            if !names.insert(key).inserted { repeated = true }
            bytes += key + space(&g)
            if !g.chance(1) { bytes.append(UInt8(ascii: ":")) }
            bytes += space(&g) + value(&g, depth: depth, &repeated) + space(&g)
            if index < count - 1 || g.chance(3) { bytes.append(UInt8(ascii: ",")) }
        }
        if !g.chance(1) { bytes.append(UInt8(ascii: "}")) }
        return bytes
    }

    /// One to three byte edits: a deletion, a structural byte inserted, a byte replaced.
    static func mutate(_ bytes: inout [UInt8], _ g: inout SeededGenerator) {
        let structural = Array("{}[]:,\"\\ -.e0".utf8) + [0x00, 0x80, 0xFF]
        for _ in 0...g.below(3) where !bytes.isEmpty {
            let at = g.below(bytes.count)
            switch g.below(3) {
            case 0: bytes.remove(at: at)
            case 1: bytes.insert(g.pick(structural), at: at)
            default: bytes[at] = g.pick(structural)
            }
        }
    }

    @Test("60 000 generated and mutated documents: the same verdict and the same values as JSONDecoder, duplicates aside")
    func agreesWithFoundation() throws {
        var g = SeededGenerator(state: 0x5157_4954_4348_4241)
        var accepted = 0
        var refused = 0
        var duplicates = 0
        var notUTF8 = 0
        var zeroExponents = 0
        let zeroWithExponent = /(^|[^0-9.])-?0(\.0+)?[eE][+-]?[0-9]/
        var disagreements: [String] = []
        for _ in 0..<60000 {
            var repeated = false
            var bytes = Self.object(&g, depth: 0, &repeated)
            if g.chance(25) { Self.mutate(&bytes, &g) }
            let data = Data(bytes)
            let foundation = try? JSONDecoder().decode([String: JSONValue].self, from: data)
            let reader = JSONReader.object(data)
            if JSONReader.members(data)?.values != reader {
                disagreements.append("members and object differ: \(String(decoding: bytes, as: UTF8.self))")
            }
            switch (foundation, reader) {
            case (let expected?, let read?):
                accepted += 1
                if expected != read { disagreements.append("values differ: \(String(decoding: bytes, as: UTF8.self))") }
            case (nil, nil):
                refused += 1
            case (_?, nil):
                // Stricter on purpose for a repeated name: without that refusal the reader takes it, or the
                // repeat's value is one Foundation never reads (it keeps the first), such as `1.e-3`.
                if JSONReader.object(data, refusingDuplicates: false) != nil || repeated {
                    duplicates += 1
                } else if bytes.contains(0) {
                    // A zero byte is never in UTF-8 JSON outside a string (nor raw inside one): Foundation read
                    // the bytes as UTF-16 or UTF-32.
                    notUTF8 += 1
                } else {
                    disagreements.append("only Foundation accepts: \(String(decoding: bytes, as: UTF8.self))")
                }
            case (nil, _?):
                if String(decoding: bytes, as: UTF8.self).contains(zeroWithExponent) {
                    zeroExponents += 1
                    continue
                }
                disagreements.append("only the reader accepts: \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, the first: \(disagreements.prefix(5))")
        // The corpus exercises both verdicts in earnest.
        #expect(
            accepted > 15000 && refused > 15000 && duplicates > 1000,
            "accepted \(accepted), refused \(refused), duplicates \(duplicates), not UTF-8 \(notUTF8), zeros \(zeroExponents)")
    }

    @Test(
        "an object's members read as a list (up to 16) or by name (more): the verdict and values of object(), a name twice refused in either, every member found"
    )
    func membersAgreeWithObject() throws {
        var g = SeededGenerator(state: 0x4D45_4D42_4552)
        var (accepted, repeats, long) = (0, 0, 0)
        for _ in 0..<4000 {
            let count = g.below(40)
            let names = (0..<count).map { _ in "k\(g.below(g.chance(50) ? 60 : 400))" }
            let values = ["1", "\"v\"", "null", "[1,{\"k1\":2}]", "{\"k2\":true}"]
            let data = Data("{\(names.map { "\"\($0)\":\(g.pick(values))" }.joined(separator: ","))}".utf8)
            let object = JSONReader.object(data)
            let members = JSONReader.members(data)
            #expect(members?.values == object, "\(String(decoding: data, as: UTF8.self))")
            #expect((members == nil) == (Set(names).count != names.count), "refused exactly when a name repeats")
            if let members, let object {
                accepted += 1
                if count > JSONMembers.listLimit { long += 1 }
                for (name, value) in object { #expect(members[name] == value) }
                #expect(members["absent"] == nil)
            } else {
                repeats += 1
            }
        }
        #expect(accepted > 1000 && repeats > 1000 && long > 300, "accepted \(accepted), repeats \(repeats), longer than a list \(long)")
        #expect(JSONReader.members(Data("[1]".utf8)) == nil && JSONReader.members(Data(" {} ".utf8))?.values == [:])
        // A name written with an escape, or in a canonically equal form, is the same name as a plain one.
        #expect(JSONReader.members(Data(#"{"iss":1,"\u0069ss":2}"#.utf8)) == nil)
        #expect(JSONReader.members(Data(#"{"\u0069ss":"x"}"#.utf8))?["iss"] == .string("x"))
        #expect(JSONReader.members(Data(#"{"K":1,"\u212A":2}"#.utf8)) == nil)
        #expect(JSONReader.members(Data(#"{"a_name_of_17_bytes":1,"a_name_of_17_bytes":2}"#.utf8)) == nil)
        #expect(JSONReader.members(Data("{\"a\":1} x".utf8)) == nil && JSONReader.members(Data("{\"a\":1,}".utf8))?.values == ["a": .number(1)])
    }

    @Test("claims read through the reader type as the Decodable claims do: the same claims or the same refusal")
    func claimsAgree() throws {
        var g = SeededGenerator(state: 0x434C_4149_4D53)
        let names = ["iss", "sub", "aud", "exp", "iat", "nbf", "nonce", "azp", "auth_time", "acr", "amr", "at_hash", "c_hash", "sid", "other"]
        let values = [
            "\"text\"", "1700000000", "1.5", "null", "true", "[\"a\",\"b\"]", "[]", "[\"a\",1]", "[null]", "{}", "{\"jkt\":\"t\"}", "\"\"",
        ]
        var both = 0
        for _ in 0..<20000 {
            var members: [String] = []
            for name in Set((0..<g.below(6)).map { _ in g.pick(names) }) { members.append("\"\(name)\":\(g.pick(values))") }
            let data = Data("{\(members.joined(separator: ","))}".utf8)
            let decoded = try? JSONDecoder().decode(IDTokenClaims.self, from: data)
            let read = JSONReader.object(data).flatMap { try? IDTokenClaims(JSONMembers($0)) }
            #expect(decoded == read, "\(String(decoding: data, as: UTF8.self))")
            if decoded != nil { both += 1 }
        }
        #expect(both > 1000)
    }

    @Test("many small objects cost little memory: only the document's own object is given room for a token's claims")
    func smallObjectsStaySmall() throws {
        // Empty and one-member objects by the thousand, as a hostile header or payload could carry within the
        // 256 KiB the wallet route reads: room for twelve members in each would be about 720 bytes an object.
        let text =
            "[" + Array(repeating: "{}", count: 20_000).joined(separator: ",") + ","
            + Array(repeating: #"{"a":0}"#, count: 20_000)
            .joined(separator: ",") + "]"
        guard case .array(let elements)? = JSONReader.value(Data(text.utf8)) else { throw ReaderFailure("the array did not read") }
        #expect(elements.count == 40_000)
        let capacities = elements.map { element -> Int in
            if case .object(let members) = element { return members.capacity }
            return -1
        }
        #expect(capacities.allSatisfy { (0...3).contains($0) }, "largest: \(capacities.max() ?? -1)")
        let claims = try #require(JSONReader.object(Data(#"{"iss":"a","sub":"b","aud":"c","exp":1,"iat":0,"nonce":"n"}"#.utf8)))
        #expect(claims.count == 6 && claims["sub"] == "b" && claims.capacity >= 12, "the claims object is sized once")
    }

    @Test("stricter than Foundation where tokens call for it: a repeated name, nesting past 64, a byte order mark")
    func stricter() throws {
        let repeated = Data(#"{"sub":"alice","sub":"mallory"}"#.utf8)
        #expect(JSONReader.object(repeated) == nil)
        let nested = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(JSONReader.object(Data("{\"a\":\(nested)}".utf8)) == nil)
        #expect(JSONReader.object(Data("{\"a\":\(nested.dropFirst().dropLast())}".utf8)) != nil)
        #expect(JSONReader.object(Data([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8))) == nil)
        // Deep input is refused without exhausting the stack.
        #expect(JSONReader.object(Data(("{\"a\":" + String(repeating: "[", count: 100_000)).utf8)) == nil)
    }
}

private struct ReaderFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
