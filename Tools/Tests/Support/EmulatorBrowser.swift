package import Foundation
@_spi(SwitchbackInternals) package import Switchback
import SwitchbackEmulator
import SwitchbackTesting

/// Plays the user's browser against the emulator's pages: keeps the provider's cookies, follows
/// redirects on the provider, submits the login form, and reports where the navigation leaves the
/// provider (to the app, to an authenticator app, or by an auto-submitting form_post form).
package final class EmulatorBrowser {
    package let transport = URLSessionTransport()
    /// Sent as `User-Agent`.
    package let userAgent: String
    /// Whether page script runs: without it, only a meta refresh or a 302 reaches a deep link.
    package let runsScript: Bool
    private(set) var cookies: [String: String] = [:]

    package init(userAgent: String = EmulatorBrowser.safari, runsScript: Bool = true) {
        self.userAgent = userAgent
        self.runsScript = runsScript
    }

    package static let safari = IOSUserAgentRules.safariUserAgent
    package static let webView = IOSUserAgentRules.webViewUserAgent

    package enum Landing {
        /// A 302 away from the provider: to the app's redirect URI, or a deep link sent by 302.
        case redirect(String)
        /// The page navigated away by itself (script or meta refresh): an authenticator app's deep link.
        /// The page stays behind, as a browser tab does while the app is in front.
        case handOff(URL, page: String)
        /// A page that goes nowhere by itself (login again, error page, waiting page) or an
        /// auto-submitting form_post form (use ``formPost(_:)``).
        case page(status: Int, html: String)
    }

    /// Opens the authorization URL and signs in with the password form when the provider shows one.
    package func signIn(_ authorizationURL: URL, username: String = "alice", password: String = "Secret-123") async throws -> Landing {
        let landing = try await open(authorizationURL)
        guard case .page(200, let html) = landing, let requestID = Self.hiddenValue("request", in: html) else { return landing }
        let login = try require(URL(string: "/login", relativeTo: authorizationURL)?.absoluteURL)
        return try await navigate(.form(login, [("request", requestID), ("username", username), ("password", password)]))
    }

    /// Opens `url` and expects the page to hand off to an app: returns the deep link and the page left behind.
    package func handOff(_ url: URL) async throws -> (link: URL, page: String) {
        let landing = try await open(url)
        guard case .handOff(let link, let page) = landing else { throw UnexpectedLanding(description: "no hand-off: \(landing)") }
        return (link, page)
    }

    /// Submits a form (the user's tap on its button) and follows the provider's redirects.
    package func post(_ url: URL, _ fields: [(String, String)]) async throws -> Landing {
        try await navigate(.form(url, fields))
    }

    /// Loads `url` and follows the provider's redirects.
    package func open(_ url: URL) async throws -> Landing {
        try await navigate(HTTPRequest(method: .get, url: url))
    }

    private func navigate(_ first: HTTPRequest) async throws -> Landing {
        var request = first
        for _ in 0..<10 {
            request.headers["User-Agent"] = userAgent
            if !cookies.isEmpty { request.headers["Cookie"] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
            let response = try await transport.send(request)
            if let setCookie = response.headers["set-cookie"], let pair = setCookie.split(separator: ";").first {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2 { cookies[String(parts[0])] = String(parts[1]) }
            }
            let html = String(decoding: response.body, as: UTF8.self)
            if response.status == 302, let location = response.headers["location"] {
                guard let next = URL(string: location, relativeTo: request.url)?.absoluteURL else { return .redirect(location) }
                if next.scheme == "http" || next.scheme == "https", next.host == request.url.host, next.port == request.url.port {
                    request = HTTPRequest(method: .get, url: next)
                    continue
                }
                return .redirect(location)
            }
            if let link = WebPage(url: request.url, status: response.status, html: html).handOffLink(runsScript: runsScript) {
                return .handOff(link, page: html)
            }
            return .page(status: response.status, html: html)
        }
        throw TooManyRedirects()
    }

    /// A GET with this browser's cookies, as the page's own script fetches (no redirects followed).
    package func fetch(_ url: URL) async throws -> HTTPResponse {
        var request = HTTPRequest(method: .get, url: url)
        if !cookies.isEmpty { request.headers["Cookie"] = cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; ") }
        return try await transport.send(request)
    }

    package static func unescape(_ text: String) -> String { WebPage.unescape(text) }

    /// The callback the app receives when the navigation ends at `landing`.
    package static func callback(_ landing: Landing) throws -> AuthorizationCallback {
        switch landing {
        case .redirect(let location):
            return .redirect(try require(URL(string: location)))
        case .page(200, let html):
            guard let post = formPost(html) else { throw UnexpectedLanding(description: "a page that is not a form_post form:\n\(html)") }
            return .formPost(post.action, body: post.body)
        case .page(let status, let html):
            throw UnexpectedLanding(description: "HTTP \(status):\n\(html)")
        case .handOff(let link, _):
            throw UnexpectedLanding(description: "a hand-off to \(link)")
        }
    }

    package struct UnexpectedLanding: Error, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = description }
    }

    /// The value of a hidden form field.
    package static func hiddenValue(_ name: String, in html: String) -> String? {
        WebPage(url: blank, html: html).hiddenValue(name)
    }

    /// The fields of an auto-submitting form_post page, as the browser would POST them.
    package static func formPost(_ html: String) -> (action: URL, body: Data)? {
        guard let form = WebPage(url: blank, html: html).autoSubmitForm else { return nil }
        return (form.action, Data(FormEncoding.encode(form.fields).utf8))
    }

    /// Pages read without a URL of their own resolve relative links against nothing.
    private static let blank = URL(string: "about:blank")!
}

private struct Missing: Error {}
private struct TooManyRedirects: Error {}

private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw Missing() }
    return value
}
