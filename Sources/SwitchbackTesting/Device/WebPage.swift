public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// What a loaded page does by itself or offers the user, read from its HTML as a browser's script engine
/// would act on it: the shapes provider pages use (the emulator's among them) for hand-offs, polling,
/// form_post responses, login forms and tap-to-return pages.
public struct WebPage: Sendable {
    public let url: URL
    public let status: Int
    public let html: String
    /// The page's `Referrer-Policy` (lowercase); nil for the default, `strict-origin-when-cross-origin`.
    public let referrerPolicy: String?

    /// The page's `Content-Security-Policy` header, as sent.
    public let contentSecurityPolicy: String?

    public init(url: URL, status: Int = 200, html: String, referrerPolicy: String? = nil, contentSecurityPolicy: String? = nil) {
        self.url = url
        self.status = status
        self.html = html
        self.contentSecurityPolicy = contentSecurityPolicy
        // A list names fallbacks: the last policy a browser knows wins; unknown tokens are skipped.
        self.referrerPolicy = referrerPolicy?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .last(where: Self.referrerPolicies.contains)
    }

    /// The referrer policies of the Referrer Policy specification.
    static let referrerPolicies: Set<String> = [
        "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin", "strict-origin", "origin-when-cross-origin",
        "strict-origin-when-cross-origin", "unsafe-url",
    ]

    /// The `Origin` header a browser sends with a request other than GET or HEAD (a form's POST) from this
    /// page to `target`, as the Fetch standard's "append a request `Origin` header" says: the page's origin,
    /// or `null` when the page's referrer policy hides it (`no-referrer`; `same-origin` towards another
    /// origin; the `strict-origin` and `no-referrer-when-downgrade` policies from https to http).
    public func originHeader(to target: URL) -> String {
        guard let scheme = url.scheme?.lowercased(), url.host != nil else { return "null" }
        let origin = url.webOrigin
        switch referrerPolicy ?? "strict-origin-when-cross-origin" {
        case "no-referrer":
            return "null"
        case "no-referrer-when-downgrade", "strict-origin", "strict-origin-when-cross-origin":
            return scheme == "https" && target.scheme?.lowercased() != "https" ? "null" : origin
        case "same-origin":
            return target.webOrigin == origin ? origin : "null"
        default:
            return origin
        }
    }

    /// Whether the page's CSP `form-action` lets one of its forms go to `target`, which browsers ask of the
    /// form's action and of every redirect that answers it: `'self'` (this page's origin), a scheme
    /// (`myapp:`), or an origin (`https://web.example.com`, any path); no `form-action` allows everything,
    /// `'none'` nothing. (CSP Level 3; the other source forms, such as host wildcards, are not modelled.)
    public func formActionAllows(_ target: URL) -> Bool {
        guard let policy = contentSecurityPolicy,
            let directive = policy.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespaces) }).first(where: {
                $0.lowercased().hasPrefix("form-action ") || $0.lowercased() == "form-action"
            })
        else { return true }
        let sources = directive.split(separator: " ").dropFirst().map { $0.lowercased() }
        let scheme = target.scheme?.lowercased() ?? ""
        return sources.contains { source in
            switch source {
            case "'self'": return target.webOrigin == url.webOrigin
            case "'none'": return false
            default:
                if source.hasSuffix(":"), !source.contains("/") { return source == scheme + ":" }
                guard let allowed = URL(string: source), allowed.scheme != nil else { return false }
                return allowed.webOrigin == target.webOrigin
            }
        }
    }

    /// Where the page goes without the user: a script or zero-delay meta refresh navigation, or an
    /// auto-submitting form.
    public enum Move: Sendable {
        case navigate(URL)
        case post(URL, fields: [(String, String)])
    }

    /// The page's own navigation, when it makes one (script runs in every simulated user agent).
    public var automaticMove: Move? {
        if let link = handOffLink() { return .navigate(link) }
        if let form = autoSubmitForm { return .post(form.action, fields: form.fields) }
        if let forward = fragmentForward { return .post(forward.action, fields: forward.fields) }
        return nil
    }

    /// A page that posts its own URL fragment to its server, as a backend receiving a fragment response
    /// does (script reads `window.location.hash`, which never reaches a server by itself).
    public var fragmentForward: (action: URL, fields: [(String, String)])? {
        guard html.contains("window.location.hash"), let fragment = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedFragment,
            !fragment.isEmpty, let action = form()?.action
        else { return nil }
        return (action, [("fragment", fragment)])
    }

    /// Where the page sends the browser by itself: a zero-delay meta refresh, or (when script runs) the
    /// script navigation to its hand-off link.
    public func handOffLink(runsScript: Bool = true) -> URL? {
        if let refresh = metaRefresh, refresh.delay == 0, let target = refresh.url { return target }
        if runsScript, html.contains("<script>window.location.href"), let link = anchor(id: "handoff") { return link }
        return nil
    }

    /// The form a form_post response page submits by script: its action and hidden fields.
    public var autoSubmitForm: (action: URL, fields: [(String, String)])? {
        html.contains("document.forms[0].submit()") ? form() : nil
    }

    /// The password form of a login page: the action and its hidden fields.
    public var loginForm: (action: URL, fields: [(String, String)])? {
        guard html.contains("type=\"password\""), let form = form() else { return nil }
        return form
    }

    /// A page that asks the user to confirm with a button (`<form … id="confirm">`, its button
    /// `id="continue"`), as the companion's hand-off page does: the action, hidden fields and button label.
    public var confirmForm: (action: URL, fields: [(String, String)], label: String)? {
        guard html.contains("id=\"confirm\""), let form = form() else { return nil }
        var label = "Continue"
        if let start = html.range(of: "id=\"continue\">"), let end = html[start.upperBound...].range(of: "</button>") {
            label = Self.unescape(String(html[start.upperBound..<end.lowerBound]))
        }
        return (form.action, form.fields, label)
    }

    /// A page that waits for an app: the status it polls and where it goes once answered.
    public var poll: (status: URL, next: URL)? {
        guard let fetch = html.range(of: "await (await fetch(") else { return nil }
        let rest = html[fetch.upperBound...]
        guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\""),
            let status = URL(
                string: String(rest[rest.index(after: rest.startIndex)..<end]).replacingOccurrences(of: "\\/", with: "/"), relativeTo: url)?
                .absoluteURL,
            let next = anchor(id: "continue")
        else { return nil }
        return (status, next)
    }

    /// A link the user taps to go back to the app (a tap-to-return page).
    public var returnLink: URL? { anchor(id: "return") }

    /// A hand-off the page leaves to the user: an "Open …" link (`id="handoff"`) that no script or
    /// refresh follows, as MitID's "Open MitID app" button.
    public var tapHandOff: (url: URL, label: String)? {
        guard handOffLink() == nil, let link = anchor(id: "handoff") else { return nil }
        var label = "Open"
        if let start = html.range(of: "id=\"handoff\" href=\""), let close = html[start.upperBound...].range(of: "\">"),
            let end = html[close.upperBound...].range(of: "</a>")
        {
            label = Self.unescape(String(html[close.upperBound..<end.lowerBound]))
        }
        return (link, label)
    }

    /// A form for the user's identifier, for an authenticator app on another phone (`<form
    /// id="other-device" …>` with an `identifier` field): the action and its hidden fields.
    public var otherDeviceForm: (action: URL, fields: [(String, String)])? {
        guard let open = html.range(of: "<form id=\"other-device\" method=\"post\" action=\"") else { return nil }
        return form(from: open.upperBound)
    }

    /// A code display form (`<form id="code-display" …>` with `identifier`, `code` and `password`): the
    /// action and its hidden fields.
    public var codeDisplayForm: (action: URL, fields: [(String, String)])? {
        guard let open = html.range(of: "<form id=\"code-display\" method=\"post\" action=\"") else { return nil }
        return form(from: open.upperBound)
    }

    /// Where the page's script fetches the QR code it shows (`<code id="qr">`) for another phone to scan.
    public var qrCodeSource: URL? {
        guard html.contains("<code id=\"qr\">"), let fetch = html.range(of: "document.getElementById(\"qr\").textContent = (await (await fetch(\"")
        else {
            return nil
        }
        let rest = html[fetch.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return URL(string: String(rest[..<end]).replacingOccurrences(of: "\\/", with: "/"), relativeTo: url)?.absoluteURL
    }

    /// The number the page asks the user to pick in the app (`<output id="match">`).
    public var matchCode: String? {
        guard let start = html.range(of: "<output id=\"match\">"), let end = html[start.upperBound...].range(of: "</output>") else { return nil }
        return Self.unescape(String(html[start.upperBound..<end.lowerBound]))
    }

    /// A reload after a delay (a provider page waiting for the app's answer).
    public var refreshDelay: TimeInterval? {
        guard let refresh = metaRefresh, refresh.delay > 0, refresh.url == nil else { return nil }
        return refresh.delay
    }

    /// The page's title, for narration.
    public var heading: String {
        guard let start = html.range(of: "<h1>"), let end = html[start.upperBound...].range(of: "</h1>") else { return "a page" }
        return Self.unescape(String(html[start.upperBound..<end.lowerBound]))
    }

    private var metaRefresh: (delay: TimeInterval, url: URL?)? {
        guard let range = html.range(of: "http-equiv=\"refresh\" content=\"") else { return nil }
        let rest = html[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        let content = Self.unescape(String(rest[..<end]))
        let parts = content.split(separator: ";", maxSplits: 1)
        let delay = TimeInterval(parts.first.map(String.init) ?? "") ?? 0
        var target: URL?
        if parts.count == 2, parts[1].lowercased().hasPrefix("url=") {
            target = URL(string: String(parts[1].dropFirst(4)), relativeTo: url)?.absoluteURL
        }
        return (delay, target)
    }

    /// The target of the link with this `id`.
    public func link(id: String) -> URL? { anchor(id: id) }

    private func anchor(id: String) -> URL? {
        guard let range = html.range(of: "id=\"\(id)\" href=\"") else { return nil }
        let rest = html[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return URL(string: Self.unescape(String(rest[..<end])), relativeTo: url)?.absoluteURL
    }

    private func form() -> (action: URL, fields: [(String, String)])? {
        guard let open = html.range(of: "<form method=\"post\" action=\"") else { return nil }
        return form(from: open.upperBound)
    }

    /// The form whose action starts at `start`: the action and the hidden fields up to its end.
    private func form(from start: String.Index) -> (action: URL, fields: [(String, String)])? {
        guard let end = html[start...].firstIndex(of: "\""),
            let action = URL(string: Self.unescape(String(html[start..<end])), relativeTo: url)?.absoluteURL
        else { return nil }
        var fields: [(String, String)] = []
        let close = html[end...].range(of: "</form>")?.lowerBound ?? html.endIndex
        var rest = html[end..<close]
        while let input = rest.range(of: "<input type=\"hidden\" name=\"") {
            let afterName = rest[input.upperBound...]
            guard let nameEnd = afterName.firstIndex(of: "\""), let valueStart = afterName.range(of: "value=\"") else { break }
            let valueRest = afterName[valueStart.upperBound...]
            guard let valueEnd = valueRest.firstIndex(of: "\"") else { break }
            fields.append((Self.unescape(String(afterName[..<nameEnd])), Self.unescape(String(valueRest[..<valueEnd]))))
            rest = valueRest[valueEnd...]
        }
        return (action, fields)
    }

    /// The value of the hidden form field `name`.
    public func hiddenValue(_ name: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return Self.unescape(String(rest[..<end]))
    }

    /// HTML entity decoding for attribute values.
    public static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }
}
