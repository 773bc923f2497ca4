import Foundation
import Testing
@testable import SwitchbackServer

/// What the routes read from a header or a query before any lookup (`RequestReading`); the routes' own tests
/// (`SessionHandOffTests`, `ResponsePageTests`) run them over HTTP, the `session-cookie` and `response-query`
/// fuzz targets over every input.
@Suite("Companion: request reading")
struct RequestReadingTests {
    static let name = "__Host-switchback_session"
    static let id = String(repeating: "A", count: 42) + "w"
    static let other = String(repeating: "B", count: 42) + "g"

    @Test("the first pair named as the session cookie, trimmed of spaces and tabs, and only an ID of the issued shape")
    func sessionCookie() {
        func read(_ cookie: String) -> String? { RequestReading.sessionID(authorization: nil, cookie: cookie, cookieName: Self.name) }
        #expect(read("\(Self.name)=\(Self.id)") == Self.id)
        #expect(read("theme=dark;\t\(Self.name)=\(Self.id) ; lang=en") == Self.id)
        #expect(read("\(Self.name)=\(Self.other); \(Self.name)=\(Self.id)") == Self.other, "the first pair wins")
        #expect(read("\(Self.name)=short; \(Self.name)=\(Self.id)") == nil, "a first pair of the wrong shape is not skipped for a later one")
        #expect(read("__host-switchback_session=\(Self.id)") == nil, "cookie names are compared exactly")
        #expect(read("x\(Self.name)=\(Self.id)") == nil)
        #expect(read("\(Self.name)=\(Self.id)=") == nil)
    }

    @Test("Authorization: Session comes before the cookie; another scheme leaves the cookie to be read")
    func authorization() {
        let cookie = "\(Self.name)=\(Self.other)"
        func read(_ header: String) -> String? { RequestReading.sessionID(authorization: header, cookie: cookie, cookieName: Self.name) }
        #expect(read("Session \(Self.id)") == Self.id)
        #expect(read("sEsSiOn \(Self.id)") == Self.id)
        #expect(read("Session \(Self.id)x") == nil, "a malformed header is not replaced by the cookie")
        #expect(read("Bearer \(Self.id)") == Self.other)
    }

    @Test("a response's members once each, in order, with state and a code or an error; anything else stays behind")
    func authorizationResponse() throws {
        let members = try RequestReading.authorizationResponse(query: "iss=https%3A%2F%2Fid&state=a+b&extra=1&code=c%2Bd")
        #expect(members.map(\.0) == ["code", "state", "iss"])
        #expect(members.map(\.1) == ["c+d", "a b", "https://id"])
        #expect(try RequestReading.authorizationResponse(query: "error=access_denied&state=s").map(\.0) == ["state", "error"])
        #expect(throws: RequestReading.Refused(message: "the answer repeats code")) {
            try RequestReading.authorizationResponse(query: "code=a&code=b&state=s")
        }
        #expect(throws: RequestReading.Refused.self) { try RequestReading.authorizationResponse(query: "code=a") }
        #expect(throws: RequestReading.Refused(message: "the answer's query is malformed")) {
            try RequestReading.authorizationResponse(query: "code=%zz&state=s")
        }
    }
}
