public import Foundation

/// A cookie as a browser profile keeps it, with the attributes that decide where it goes.
public struct StoredCookie: Sendable, Equatable {
    public let name: String
    public let value: String
    public let host: String
    public let path: String
    public let secure: Bool
    public let httpOnly: Bool
    /// `Strict`, `Lax` or `None`; nil when the server named none.
    public let sameSite: String?
    /// From `Max-Age`; nil for a session cookie.
    public let expires: Date?
}

/// One browser profile's cookies (host-only): `Secure` cookies go only to https, a cookie goes only under
/// its `Path`, and one past its `Max-Age` is gone. `Expires` and `Domain` are not read.
struct CookieJar: Sendable {
    private var cookies: [StoredCookie] = []

    /// Keeps the cookie `setCookie` sets; with `onlyPersistent`, only when it has a lifetime (`Max-Age`),
    /// as Safari takes the cookies an authentication session sets.
    mutating func store(_ setCookie: String?, from url: URL, now: Date, onlyPersistent: Bool = false) {
        guard let setCookie, let host = url.host?.lowercased() else { return }
        let parts = setCookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = parts.first, let equals = pair.firstIndex(of: "="), equals != pair.startIndex else { return }
        let name = String(pair[..<equals])
        var path = "/"
        var secure = false
        var httpOnly = false
        var sameSite: String?
        var expires: Date?
        for attribute in parts.dropFirst() {
            let split = attribute.split(separator: "=", maxSplits: 1).map(String.init)
            switch split[0].lowercased() {
            case "path" where split.count == 2 && split[1].hasPrefix("/"): path = split[1]
            case "secure": secure = true
            case "httponly": httpOnly = true
            case "samesite" where split.count == 2: sameSite = split[1]
            case "max-age" where split.count == 2: expires = Int(split[1]).map { now.addingTimeInterval(TimeInterval($0)) }
            default: break
            }
        }
        // A Secure cookie from a page that is not https is dropped, as browsers do.
        if secure, url.scheme?.lowercased() != "https" { return }
        cookies.removeAll { $0.name == name && $0.host == host && $0.path == path }
        let cookie = StoredCookie(
            name: name, value: String(pair[pair.index(after: equals)...]), host: host, path: path, secure: secure, httpOnly: httpOnly,
            sameSite: sameSite, expires: expires
        )
        if let expires, expires <= now { return }
        if onlyPersistent, expires == nil { return }
        cookies.append(cookie)
    }

    /// The cookies a request to `url` carries at `now`.
    func matching(_ url: URL, now: Date) -> [StoredCookie] {
        guard let host = url.host?.lowercased() else { return [] }
        let path = url.path.isEmpty ? "/" : url.path
        return cookies.filter { cookie in
            cookie.host == host && (!cookie.secure || url.scheme?.lowercased() == "https") && (cookie.expires.map { $0 > now } ?? true)
                && (path == cookie.path || path.hasPrefix(cookie.path.hasSuffix("/") ? cookie.path : cookie.path + "/"))
        }
    }

    func header(for url: URL, now: Date) -> String? {
        Self.header(matching(url, now: now))
    }

    /// The `Cookie` header of an authentication session: its own cookies, and Safari's persistent ones
    /// (not Safari's session cookies); its own win on a name clash.
    static func sessionHeader(own: CookieJar?, safari: CookieJar?, for url: URL, now: Date) -> String? {
        let mine = own?.matching(url, now: now) ?? []
        let shared = (safari?.matching(url, now: now) ?? []).filter { cookie in cookie.expires != nil && !mine.contains { $0.name == cookie.name } }
        return header(mine + shared)
    }

    private static func header(_ found: [StoredCookie]) -> String? {
        found.isEmpty ? nil : found.map { "\($0.name)=\($0.value)" }.sorted().joined(separator: "; ")
    }

    /// Every cookie kept for `host`, whatever its path.
    func all(host: String) -> [StoredCookie] { cookies.filter { $0.host == host.lowercased() } }
}
