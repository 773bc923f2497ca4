import Foundation

/// The path patterns of app-link association files (`apple-app-site-association` components):
/// `*` matches any run of characters, `?` exactly one. Shared by the companion that serves the file and
/// the simulated device that reads it.
@_spi(SwitchbackInternals) public enum AssociationPattern {
    @_spi(SwitchbackInternals) public static func matches(_ path: String, pattern: String) -> Bool {
        let regex =
            "^"
            + pattern.map { character -> String in
                switch character {
                case "*": ".*"
                case "?": "."
                default: NSRegularExpression.escapedPattern(for: String(character))
                }
            }.joined() + "$"
        return path.range(of: regex, options: .regularExpression) != nil
    }
}
