extension StringProtocol {
    /// Without leading and trailing spaces and tabs (header whitespace, RFC 9110 §5.6.3), in plain Swift:
    /// Foundation's `trimmingCharacters` goes through NSString on Linux.
    func trimmingSpaces() -> Substring {
        let string = Substring(self)
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = string.firstIndex(where: { !isSpace($0) }), let last = string.lastIndex(where: { !isSpace($0) }) else { return "" }
        return string[first...last]
    }
}
