// The emulator needs macOS 14 (Hummingbird 2) while the package's floor is macOS 13, so these tests
// are compiled where CI runs them; gating them with availability checks on Apple platforms is open work.
#if os(Linux)
import Foundation
@testable import Switchback
import SwitchbackEmulator

/// Plays the user in a browser against the emulator's pages: opens the authorization URL, submits
/// the login form, and returns the response that carries the authorization result.
struct EmulatorBrowser {
    let transport = URLSessionTransport()

    enum Landing {
        /// A 302 to this location.
        case redirect(String)
        /// A page (login again, error page, auto-submitting form_post form).
        case page(status: Int, html: String)
    }

    func signIn(_ authorizationURL: URL, username: String = "alice", password: String = "Secret-123") async throws -> Landing {
        let page = try await transport.send(HTTPRequest(method: .get, url: authorizationURL))
        let html = String(decoding: page.body, as: UTF8.self)
        guard page.status == 200, let requestID = Self.hiddenValue("request", in: html) else { return .page(status: page.status, html: html) }
        let login = try require(URL(string: "/login", relativeTo: authorizationURL)?.absoluteURL)
        let response = try await transport.send(.form(login, [("request", requestID), ("username", username), ("password", password)]))
        if response.status == 302, let location = response.headers["location"] { return .redirect(location) }
        return .page(status: response.status, html: String(decoding: response.body, as: UTF8.self))
    }

    /// The value of a hidden form field.
    static func hiddenValue(_ name: String, in html: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end]).replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The fields of an auto-submitting form_post page, as the browser would POST them.
    static func formPost(_ html: String) -> (action: URL, body: Data)? {
        guard let actionRange = html.range(of: "action=\""), let end = html[actionRange.upperBound...].firstIndex(of: "\""),
            let action = URL(string: String(html[actionRange.upperBound..<end]))
        else { return nil }
        var fields: [(String, String)] = []
        var rest = html[...]
        while let input = rest.range(of: "<input type=\"hidden\" name=\"") {
            let afterName = rest[input.upperBound...]
            guard let nameEnd = afterName.firstIndex(of: "\"") else { break }
            let name = String(afterName[..<nameEnd])
            guard let value = hiddenValue(name, in: String(rest[input.lowerBound...])) else { break }
            fields.append((name, value))
            rest = afterName[nameEnd...]
        }
        return (action, Data(FormEncoding.encode(fields).utf8))
    }
}

private struct Missing: Error {}

private func require<T>(_ value: T?) throws -> T {
    guard let value else { throw Missing() }
    return value
}
#endif
