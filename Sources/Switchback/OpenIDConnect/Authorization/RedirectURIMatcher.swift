import Foundation

/// Exact redirect-URI matching: scheme, host, port and path must equal the registered URI's.
///
/// Scheme and host compare case-insensitively (they are case-insensitive in URLs); the path compares
/// byte for byte, so `/cb/`, `/cb%2F` and `/CB` are all different from `/cb`. A default port written out
/// (`:443` for https) equals an omitted one. A callback with user-info is refused. Parameters the
/// registered URI carries in its query must be present with the same values.
enum RedirectURIMatcher {
    static func matches(_ candidate: URL, registered: URL) -> Bool {
        guard let actual = URLComponents(url: candidate, resolvingAgainstBaseURL: false),
            let expected = URLComponents(url: registered, resolvingAgainstBaseURL: false),
            actual.user == nil, actual.password == nil,
            let scheme = actual.scheme?.lowercased(), scheme == expected.scheme?.lowercased(),
            actual.host?.lowercased() == expected.host?.lowercased(),
            effectivePort(actual) == effectivePort(expected),
            actual.percentEncodedPath == expected.percentEncodedPath
        else { return false }
        let actualItems = actual.percentEncodedQueryItems ?? []
        for item in expected.percentEncodedQueryItems ?? [] where !actualItems.contains(item) {
            return false
        }
        return true
    }

    private static func effectivePort(_ components: URLComponents) -> Int? {
        if let port = components.port { return port }
        switch components.scheme?.lowercased() {
        case "https": return 443
        case "http": return 80
        default: return nil
        }
    }
}
