public import Foundation

/// Turns URLs and values into text that is safe to log: no token, code, secret or verifier survives.
public enum Redaction {
    /// Query and fragment parameters whose values are safe to show.
    public static let displayableParameters: Set<String> = [
        "response_type", "response_mode", "scope", "client_id", "redirect_uri", "code_challenge_method",
        "prompt", "ui_locales", "acr_values", "max_age", "error", "error_description", "error_uri", "iss",
        "login_hint_type", "closeondone", "environment", "switchback_outcome", "redirect_uri_https_type",
    ]

    /// The URL with the value of every parameter not in ``displayableParameters`` replaced by `‹redacted›`,
    /// and any user-info removed.
    public static func describe(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "‹unparseable URL›" }
        components.user = nil
        components.password = nil
        if let items = components.percentEncodedQueryItems {
            components.percentEncodedQueryItems = items.map(redact)
        }
        if let fragment = components.percentEncodedFragment {
            // A pair without a name (`=x`, or `#=` alone) is a pair too: splitting it on `=` gives no name to
            // index (an out-of-range trap the fuzzer found with the callback `#=`).
            let pairs = fragment.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
                guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
                let name = String(pair[..<equals])
                return displayableParameters.contains(name) ? String(pair) : "\(name)=%E2%80%B9redacted%E2%80%BA"
            }
            components.percentEncodedFragment = pairs.joined(separator: "&")
        }
        return (components.string ?? "‹unparseable URL›")
            .replacingOccurrences(of: "%E2%80%B9redacted%E2%80%BA", with: "‹redacted›")
    }

    /// `text` without control or format characters (Unicode Cc and Cf, the bidirectional overrides among
    /// them): text another party chose, made fit for a log line, an error message or a screen.
    @_spi(SwitchbackInternals) public static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }))
    }

    /// A secret shown only by its length, for example `‹43 characters›`.
    public static func secret(_ value: String?) -> String {
        guard let value else { return "‹none›" }
        return "‹\(value.count) characters›"
    }

    private static func redact(_ item: URLQueryItem) -> URLQueryItem {
        guard item.value != nil, !displayableParameters.contains(item.name) else { return item }
        return URLQueryItem(name: item.name, value: "%E2%80%B9redacted%E2%80%BA")
    }
}
