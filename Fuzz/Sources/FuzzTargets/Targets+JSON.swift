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
            // never read, which its full parser (JSONSerialization) refuses too.
            let purposeful =
                JSONReader.object(input, refusingDuplicates: false) != nil || input.contains(0)
                || (try? JSONSerialization.jsonObject(with: input, options: [.fragmentsAllowed])) == nil
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
