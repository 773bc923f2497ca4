public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// A zlib stream (RFC 1950) inflated (DEFLATE, RFC 1951), for Token Status Lists, whose `lst` is one. Written
/// here because Foundation on Linux has no decompression API and the library links no C zlib. The output is
/// bounded (a small input can claim gigabytes), the Adler-32 checksum is checked, and any malformed input
/// (an over-subscribed code, a distance before the start, a stored block's length, bytes after the end) is
/// an error, never a crash.
public enum Inflate {
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The bytes the zlib stream `data` holds, at most `limit` of them.
    public static func zlib(_ data: Data, limit: Int) throws(Failure) -> [UInt8] {
        let bytes = [UInt8](data)
        guard bytes.count >= 6 else { throw Failure("too short for a zlib stream") }
        let (cmf, flg) = (bytes[0], bytes[1])
        guard cmf & 0x0F == 8, cmf >> 4 <= 7, (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0 else { throw Failure("not a zlib header") }
        guard flg & 0x20 == 0 else { throw Failure("a preset dictionary is not supported") }
        var reader = BitReader(bytes: bytes, position: 2)
        var output: [UInt8] = []
        try inflate(&reader, into: &output, limit: limit)
        let end = reader.byteAlignedPosition
        guard end + 4 == bytes.count else { throw Failure("the stream does not end with its checksum") }
        let expected = bytes[end..<(end + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard adler32(output) == expected else { throw Failure("the Adler-32 checksum does not match") }
        return output
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var (a, b): (UInt32, UInt32) = (1, 0)
        var index = 0
        while index < bytes.count {
            // 5552 bytes keep the sums below 2^32 before the modulo (zlib's NMAX).
            let end = min(index + 5552, bytes.count)
            while index < end {
                a += UInt32(bytes[index])
                b += a
                index += 1
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }

    struct BitReader {
        let bytes: [UInt8]
        var position: Int
        var bitBuffer: UInt32 = 0
        var bitCount = 0

        init(bytes: [UInt8], position: Int) {
            self.bytes = bytes
            self.position = position
        }

        /// `count` bits (up to 16), least significant first.
        mutating func bits(_ count: Int) throws(Failure) -> Int {
            while bitCount < count {
                guard position < bytes.count else { throw Failure("the stream ends early") }
                bitBuffer |= UInt32(bytes[position]) << bitCount
                position += 1
                bitCount += 8
            }
            let value = Int(bitBuffer & ((1 << count) - 1))
            bitBuffer >>= count
            bitCount -= count
            return value
        }

        /// Drops the bits left of the current byte; the position of the next whole byte.
        var byteAlignedPosition: Int { position - bitCount / 8 }

        mutating func alignToByte() {
            position -= bitCount / 8
            bitBuffer = 0
            bitCount = 0
        }
    }

    /// A canonical Huffman code (RFC 1951 §3.2.2) as counts per length and symbols in code order.
    struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int]

        init(lengths: ArraySlice<Int>) throws(Failure) {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var left = 1
            for length in 1...15 {
                left <<= 1
                left -= counts[length]
                guard left >= 0 else { throw Failure("an over-subscribed Huffman code") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }

        func decode(_ reader: inout BitReader) throws(Failure) -> Int {
            var (code, first, index) = (0, 0, 0)
            for length in 1...15 {
                code |= try reader.bits(1)
                let count = counts[length]
                if code - first < count { return symbols[index + code - first] }
                index += count
                first = (first + count) << 1
                code <<= 1
            }
            throw Failure("a code that is not in the Huffman table")
        }
    }

    static let lengthBase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385,
        24577,
    ]
    static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
    /// The order of the code length code lengths (RFC 1951 §3.2.7).
    static let lengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    static let fixed: (literals: Huffman, distances: Huffman) = {
        var lengths = [Int](repeating: 8, count: 288)
        for index in 144..<256 { lengths[index] = 9 }
        for index in 256..<280 { lengths[index] = 7 }
        // The fixed codes are complete and valid: these cannot fail.
        return (try! Huffman(lengths: lengths[...]), try! Huffman(lengths: [Int](repeating: 5, count: 30)[...]))
    }()

    static func inflate(_ reader: inout BitReader, into output: inout [UInt8], limit: Int) throws(Failure) {
        var last = false
        while !last {
            last = try reader.bits(1) == 1
            switch try reader.bits(2) {
            case 0:
                reader.alignToByte()
                guard reader.position + 4 <= reader.bytes.count else { throw Failure("a stored block's header is cut") }
                let bytes = reader.bytes
                let length = Int(bytes[reader.position]) | Int(bytes[reader.position + 1]) << 8
                let complement = Int(bytes[reader.position + 2]) | Int(bytes[reader.position + 3]) << 8
                guard length == ~complement & 0xFFFF else { throw Failure("a stored block's length does not match its complement") }
                reader.position += 4
                guard reader.position + length <= bytes.count else { throw Failure("a stored block is cut") }
                guard output.count + length <= limit else { throw Failure("the output is larger than \(limit) bytes") }
                output.append(contentsOf: bytes[reader.position..<(reader.position + length)])
                reader.position += length
            case 1:
                try codes(&reader, fixed.literals, fixed.distances, into: &output, limit: limit)
            case 2:
                let (literals, distances) = try dynamicTables(&reader)
                try codes(&reader, literals, distances, into: &output, limit: limit)
            default:
                throw Failure("a block of the reserved type 3")
            }
        }
    }

    static func dynamicTables(_ reader: inout BitReader) throws(Failure) -> (Huffman, Huffman) {
        let literalCount = try reader.bits(5) + 257
        let distanceCount = try reader.bits(5) + 1
        let codeLengthCount = try reader.bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw Failure("too many codes in a dynamic block") }
        var codeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<codeLengthCount { codeLengths[lengthOrder[index]] = try reader.bits(3) }
        let lengthCode = try Huffman(lengths: codeLengths[...])
        var lengths: [Int] = []
        lengths.reserveCapacity(literalCount + distanceCount)
        while lengths.count < literalCount + distanceCount {
            let symbol = try lengthCode.decode(&reader)
            switch symbol {
            case 0..<16:
                lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw Failure("a repeat with nothing to repeat") }
                lengths += [Int](repeating: previous, count: 3 + (try reader.bits(2)))
            case 17:
                lengths += [Int](repeating: 0, count: 3 + (try reader.bits(3)))
            default:
                lengths += [Int](repeating: 0, count: 11 + (try reader.bits(7)))
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw Failure("code lengths run past their count") }
        guard lengths[256] != 0 else { throw Failure("no end-of-block code") }
        return (try Huffman(lengths: lengths[..<literalCount]), try Huffman(lengths: lengths[literalCount...]))
    }

    static func codes(_ reader: inout BitReader, _ literals: Huffman, _ distances: Huffman, into output: inout [UInt8], limit: Int)
        throws(Failure)
    {
        while true {
            let symbol = try literals.decode(&reader)
            if symbol < 256 {
                guard output.count < limit else { throw Failure("the output is larger than \(limit) bytes") }
                output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let lengthIndex = symbol - 257
            guard lengthIndex < 29 else { throw Failure("an invalid length code") }
            let length = lengthBase[lengthIndex] + (try reader.bits(lengthExtra[lengthIndex]))
            let distanceSymbol = try distances.decode(&reader)
            guard distanceSymbol < 30 else { throw Failure("an invalid distance code") }
            let distance = distanceBase[distanceSymbol] + (try reader.bits(distanceExtra[distanceSymbol]))
            guard distance <= output.count else { throw Failure("a distance before the start of the output") }
            guard output.count + length <= limit else { throw Failure("the output is larger than \(limit) bytes") }
            let start = output.count - distance
            for offset in 0..<length { output.append(output[start + offset]) }
        }
    }
}
