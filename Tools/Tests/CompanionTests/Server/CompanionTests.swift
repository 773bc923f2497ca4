import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// The companion's app-link association files, as iOS and Android fetch them.
@Suite("Companion: app-link association files")
struct CompanionTests {
    static let association = AppAssociation(
        appIDs: ["A1B2C3D4E5.com.example.app"], paths: ["/appswitch*", "/oauth/callback"], androidPackage: "com.example.app",
        androidFingerprints: [Array(repeating: "AB", count: 32).joined(separator: ":")]
    )

    @Test("apple-app-site-association and assetlinks.json name the app and its paths; a claimed path opened in a browser offers a tap")
    func files() async throws {
        try await withStopping(try await Companion.start(associations: [Self.association]), stop: { await $0.stop() }) { companion in
            let transport = URLSessionTransport()
            func get(_ path: String) async throws -> HTTPResponse {
                try await transport.send(HTTPRequest(method: .get, url: try #require(URL(string: path, relativeTo: companion.baseURL)?.absoluteURL)))
            }
            let apple = try await get("/.well-known/apple-app-site-association")
            #expect(apple.status == 200)
            #expect(apple.mediaType == "application/json")
            let document = try JSONDecoder().decode(JSONValue.self, from: apple.body)
            guard case .object(let root) = document, case .object(let applinks)? = root["applinks"], case .array(let details)? = applinks["details"],
                case .object(let detail)? = details.first
            else {
                Issue.record("unexpected document \(document)")
                return
            }
            #expect(detail["appIDs"] == .array([.string("A1B2C3D4E5.com.example.app")]))
            #expect(detail["components"] == .array([.object(["/": .string("/appswitch*")]), .object(["/": .string("/oauth/callback")])]))
            let android = try await get("/.well-known/assetlinks.json")
            #expect(String(decoding: android.body, as: UTF8.self).contains("\"package_name\":\"com.example.app\""))
            let claimed = try await get("/appswitch?x=1")
            #expect(claimed.status == 200)
            #expect(String(decoding: claimed.body, as: UTF8.self).contains("id=\"return\""))
            #expect(try await get("/elsewhere").status == 404)
        }
    }

    @Test("path patterns: * is any run, ? one character, everything else literal")
    func patterns() {
        #expect(Self.association.claims("/appswitch"))
        #expect(Self.association.claims("/appswitch/more"))
        #expect(Self.association.claims("/oauth/callback"))
        #expect(!Self.association.claims("/oauth/callback/x"))
        #expect(!Self.association.claims("/APPSWITCH"))
        #expect(AssociationPattern.matches("/a.b", pattern: "/a.b"))
        #expect(!AssociationPattern.matches("/axb", pattern: "/a.b"), "a dot is literal")
        #expect(AssociationPattern.matches("/q1", pattern: "/q?"))
    }
}
