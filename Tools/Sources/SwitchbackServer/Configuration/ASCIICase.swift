/// ASCII letters compared in any case, for the protocol text the companion checks on each request (a
/// `goto`'s scheme, a form's `Origin`): no string is made, and only A–Z fold, so a Unicode letter that
/// lowercases to ASCII (the Kelvin sign to "k") matches nothing.
enum ASCIICase {
    /// Whether `text` is `lowercased` (lowercase ASCII) with its ASCII letters in any case.
    static func equals(_ text: some Collection<UInt8>, lowercased: some Collection<UInt8>) -> Bool {
        text.count == lowercased.count
            && zip(text, lowercased).allSatisfy { byte, expected in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 == expected : byte == expected
            }
    }
}
