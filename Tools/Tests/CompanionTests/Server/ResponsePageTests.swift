import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// The response page (`GET /response`): the app's https redirect URI for a provider that ends with a plain
/// redirect (MitID through Signaturgruppen), whose button forwards the response to the app's universal link.
/// The end-to-end run (the Safari view loading it, the tap opening the app) is `EndToEndTests`'.
@Suite("Companion: response page")
struct ResponsePageTests {
    static let appLink = "https://app.example.com/oauth/callback"

    static func withPage(_ body: (CompanionRig) async throws -> Void) async throws {
        try await CompanionRig.with(change: { $0.responsePage = .init(appLink: appLink) }) { try await body($0) }
    }

    /// The `href` of the page's button, unescaped.
    static func button(_ html: String) throws -> URL {
        let marker = try #require(html.range(of: "id=\"return\" href=\""))
        let end = try #require(html[marker.upperBound...].firstIndex(of: "\""))
        let escaped = String(html[marker.upperBound..<end])
        return try #require(URL(string: escaped.replacingOccurrences(of: "&amp;", with: "&").replacingOccurrences(of: "&quot;", with: "\"")))
    }

    @Test("the button opens the app link with the response's members only, escaped; nothing is logged; the page is not cached or framed")
    func forwards() async throws {
        try await Self.withPage { rig in
            let code = "code-\(UUID().uuidString)"
            let state = #"S"><script>alert(1)</script>"#
            var components = URLComponents(url: rig.url("/response"), resolvingAgainstBaseURL: false)!
            components.queryItems = [
                .init(name: "code", value: code), .init(name: "state", value: state), .init(name: "iss", value: "https://broker.example.com"),
                .init(name: "redirect_to", value: "https://evil.example.com"),
            ]
            let page = try await rig.get(try #require(components.url))
            #expect(page.status == 200)
            #expect(!page.text.contains("<script>"), "the state is escaped in the page")
            let link = try Self.button(page.text)
            #expect(link.absoluteString.hasPrefix(Self.appLink + "?"))
            let forwarded = try #require(URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems)
            #expect(forwarded.map(\.name) == ["code", "state", "iss"])
            #expect(forwarded.first { $0.name == "code" }?.value == code)
            #expect(forwarded.first { $0.name == "state" }?.value == state)
            #expect(page.headers["cache-control"]?.contains("no-store") == true)
            #expect(page.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
            #expect(page.headers["content-security-policy"]?.contains("script-src 'none'") == true)
            #expect(!rig.log.text.contains(code), "the code never reaches the log")
        }
    }

    @Test("a refusal is forwarded too (error, its description and uri), on a page that says the sign-in did not complete")
    func refusal() async throws {
        try await Self.withPage { rig in
            let page = try await rig.get(rig.url("/response?error=access_denied&error_description=Cancelled+by+user&state=S"))
            #expect(page.status == 200)
            #expect(page.text.contains("did not complete"))
            let link = try Self.button(page.text)
            let forwarded = try #require(URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems)
            #expect(forwarded.map(\.name) == ["state", "error", "error_description"])
            #expect(forwarded.first { $0.name == "error_description" }?.value == "Cancelled by user")
        }
    }

    @Test(
        "what is not one response gets 400 and no button: a repeated member, no state, neither code nor error, a malformed query",
        arguments: ["code=A&code=B&state=S", "code=A&state=S&state=T", "code=A", "state=S", "", "code=A&state=%FF"])
    func malformed(query: String) async throws {
        try await Self.withPage { rig in
            let page = try await rig.get(rig.url("/response?" + query))
            #expect(page.status == 400)
            #expect(!page.text.contains("id=\"return\""))
            #expect(page.headers["content-type"]?.hasPrefix("text/html") == true, "a browser's route answers with a page")
        }
    }

    @Test("off unless configured: no route, so no page that forwards anything")
    func off() async throws {
        try await CompanionRig.with { rig in
            let page = try await rig.get(rig.url("/response?code=A&state=S"))
            #expect(page.status == 404)
        }
    }

    @Test("the app link must be an https universal link without query or fragment, on a host other than the server's")
    func validation() throws {
        func configuration(_ link: String, publicURL: String? = "https://api.example.com") -> ServerConfiguration {
            ServerConfiguration(port: 0, publicURL: publicURL, responsePage: .init(appLink: link))
        }
        try configuration(Self.appLink).validate()
        for link in [
            "http://app.example.com/cb", "https://app.example.com/cb?x=1", "https://app.example.com/cb#f", "app:/cb", "https://API.example.com/cb",
        ] {
            #expect(throws: SwitchbackError.self, "\(link)") { try configuration(link).validate() }
        }
    }
}
