import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// Flow journals on disk: what survives the app being killed, and what never goes there.
@Suite("FlowJournal")
struct FlowJournalTests {
    static func journal(_ flowID: String, expiresAt: Date, exchanging: Bool = false) throws -> FlowJournal {
        var flow = SignInFlowTests.handedOff()
        if exchanging {
            _ = flow.handle(.openedURL(SignInFlowTests.returnURL("success")))
            _ = flow.handle(.navigation(URL(string: "com.example.app:/oauth/callback?code=THE-CODE-VALUE&state=S")!))
        }
        let session = AuthorizationSession(
            issuer: "https://stg-id.uaepass.ae", clientID: "app", redirectURI: SignInFlowTests.redirectURI, state: "S", nonce: "N",
            pkce: try PKCE(verifier: String(repeating: "v", count: 43)), responseMode: .query, maxAge: nil, requestURI: nil,
            authorizationURL: SignInFlowTests.authorizationURL, createdAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        return FlowJournal(flow: try Self.withID(flowID, flow), session: session, provider: "uaepass", expiresAt: expiresAt)
    }

    /// The same flow under another ID.
    static func withID(_ flowID: String, _ flow: SignInFlow) throws -> SignInFlow {
        var json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(flow)) as? [String: Any])
        var plan = try #require(json["plan"] as? [String: Any])
        plan["flowID"] = flowID
        json["plan"] = plan
        return try JSONDecoder().decode(SignInFlow.self, from: JSONSerialization.data(withJSONObject: json))
    }

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("switchback-journal-\(UUID().uuidString)")
    }

    @Test("saved, read back after a restart (a new store on the same directory), removed; files are owner-only")
    func fileRoundTrip() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try Self.journal("flow-1", expiresAt: Date().addingTimeInterval(600))
        try FileFlowJournalStore(directory: directory).save(journal)
        let reopened = FileFlowJournalStore(directory: directory)
        #expect(try reopened.journals() == [journal])
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("flow-1.journal").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        try reopened.remove(flowID: "flow-1")
        #expect(try reopened.journals().isEmpty)
        try reopened.remove(flowID: "flow-1")
    }

    @Test("a companion's authorization is journaled under its own key; the app's own under session, as journals written before it")
    func companionAuthorization() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let app = try Self.journal("app-flow", expiresAt: Date().addingTimeInterval(600))
        let started = CompanionAuthorization(
            route: .completion, authorizationURL: SignInFlowTests.authorizationURL,
            returnURL: try #require(URL(string: "https://app.example.com/signed-in")),
            state: nil, flowSecret: "flow-secret-0123456789abcdefghij", createdAt: Date(timeIntervalSince1970: 1_700_000_100)
        )
        let companion = FlowJournal(
            flow: try Self.withID("companion-flow", app.flow), authorization: .companion(started), provider: "mitid", expiresAt: app.expiresAt)
        let store = FileFlowJournalStore(directory: directory)
        try store.save(app)
        try store.save(companion)
        #expect(try FileFlowJournalStore(directory: directory).journals() == [app, companion], "read back, oldest first")

        let appJSON = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(app)) as? [String: Any])
        #expect(appJSON["session"] != nil && appJSON["companion"] == nil)
        let companionJSON = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(companion)) as? [String: Any])
        #expect(companionJSON["companion"] != nil && companionJSON["session"] == nil)
        #expect(!"\(started)".contains("flow-secret"), "the description hides the flow secret")
    }

    @Test("purge removes expired journals and keeps the rest")
    func purge() async throws {
        let store = InMemoryFlowJournalStore()
        let now = Date()
        await store.save(try Self.journal("old", expiresAt: now.addingTimeInterval(-1)))
        await store.save(try Self.journal("new", expiresAt: now.addingTimeInterval(60)))
        let valid = try await store.purge(now: now)
        #expect(valid.map(\.flowID) == ["new"])
        #expect(await store.journals().map(\.flowID) == ["new"])
    }

    @Test("the authorization code never reaches the journal, even while it is being exchanged")
    func noCode() async throws {
        let journal = try Self.journal("flow-2", expiresAt: Date().addingTimeInterval(600), exchanging: true)
        #expect(journal.flow.state == .exchanging)
        let text = String(decoding: try JSONEncoder().encode(journal), as: UTF8.self)
        #expect(!text.contains("THE-CODE-VALUE"))
    }

    @Test("an unreadable journal file is dropped rather than failing every launch; a flow ID naming a path is refused")
    func damaged() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileFlowJournalStore(directory: directory)
        try store.save(try Self.journal("good", expiresAt: Date().addingTimeInterval(600)))
        try Data("{ not json".utf8).write(to: directory.appendingPathComponent("bad.journal"))
        #expect(try store.journals().map(\.flowID) == ["good"])
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("bad.journal").path))
        let traversal = #expect(throws: SwitchbackError.self) { try store.remove(flowID: "../../etc/passwd") }
        #expect(traversal?.code == .storeFailed)
    }
}
