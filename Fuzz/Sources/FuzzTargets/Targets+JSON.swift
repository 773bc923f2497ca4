import Foundation
@_spi(SwitchbackInternals) import Switchback

extension FuzzTarget {
    /// The token JSON reader against Foundation, with the differential rules of `JSONReaderTests`.
    static let json = FuzzTarget(
        "json",
        asserts: """
            JSONReader's members() and object() give the same verdict and values; where Foundation's JSONDecoder also \
            reads the document, the values are equal; the reader refuses only what it refuses on purpose (a repeated \
            name, bytes that are not UTF-8) and accepts only Foundation's known refusal (a zero with an exponent); an \
            object read and written again reads back equal
            """
    ) { input in
        let reader = JSONReader.object(input)
        require(JSONReader.members(input)?.values == reader, "members() and object() disagree")
        let foundation = try? JSONDecoder().decode([String: JSONValue].self, from: input)
        switch (foundation, reader) {
        case (let expected?, let read?):
            require(expected == read, "the reader and Foundation read different values")
        case (nil, nil):
            break
        case (_?, nil):
            // Refused on purpose: a repeated name (without that refusal the reader takes it), bytes with a zero
            // (Foundation read them as UTF-16 or UTF-32), or a repeated name's value that Foundation's decoder
            // never read: one its full parser (JSONSerialization) refuses too, or a number past a Double's
            // range, which the decoder refuses where it reads one and JSONSerialization reads as zero.
            let purposeful =
                JSONReader.object(input, refusingDuplicates: false) != nil || input.contains(0)
                || (try? JSONSerialization.jsonObject(with: input, options: [.fragmentsAllowed])) == nil
                || hasNumberOutOfRange(input)
            require(purposeful, "only Foundation reads the document")
        case (nil, _?):
            // Foundation refuses a zero with an exponent (`0e1`, `-0.0E+2`), which RFC 8259 allows.
            require(zeroWithExponent(input), "only the reader reads the document")
        }
        if let reader {
            let written = Data(JSONValue.object(reader).description.utf8)
            require(JSONReader.object(written) == reader, "an object written again does not read back equal")
        }
    }

    /// Whether `input` has, outside its strings, a number a `Double` does not hold: one too large, or one that
    /// reads as zero though its digits are not all zeros.
    private static func hasNumberOutOfRange(_ input: Data) -> Bool {
        let bytes = Array(input)
        var index = 0
        let digit = UInt8(ascii: "0")...UInt8(ascii: "9")
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") { index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1 }
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "-") || digit.contains(bytes[index]) else {
                index += 1
                continue
            }
            let start = index
            index += 1
            while index < bytes.count, digit.contains(bytes[index]) || ".eE+-".utf8.contains(bytes[index]) { index += 1 }
            let token = String(decoding: bytes[start..<index], as: UTF8.self)
            let mantissa = token.prefix { $0 != "e" && $0 != "E" }
            if let value = Double(token), !value.isFinite || (value == 0 && mantissa.contains { ("1"..."9").contains($0) }) { return true }
        }
        return false
    }

    /// Whether `input` has a number that is a zero with an exponent.
    private static func zeroWithExponent(_ input: Data) -> Bool {
        let bytes = Array(input)
        for index in bytes.indices where bytes[index] == UInt8(ascii: "0") {
            if index > 0, bytes[index - 1] >= UInt8(ascii: "0") && bytes[index - 1] <= UInt8(ascii: "9") || bytes[index - 1] == UInt8(ascii: ".") {
                continue
            }
            var next = index + 1
            if next < bytes.count, bytes[next] == UInt8(ascii: ".") {
                next += 1
                while next < bytes.count, bytes[next] == UInt8(ascii: "0") { next += 1 }
            }
            if next < bytes.count, bytes[next] == UInt8(ascii: "e") || bytes[next] == UInt8(ascii: "E") { return true }
        }
        return false
    }
}
