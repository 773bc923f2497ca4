import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// The coordinator's bookkeeping where order matters: which unclaimed result is dropped first, a journal
/// save that finishes after its sign-in ended, and which journals a coordinator may take back.
@Suite("SignInCoordinator bookkeeping")
struct CoordinatorBookkeepingTests {
    static let metadata = ProviderMetadata(
        issuer: "https://id.example.test", authorizationEndpoint: URL(string: "https://id.example.test/authorize")!,
        tokenEndpoint: URL(string: "https://id.example.test/token")!, jwksURI: URL(string: "https://id.example.test/jwks")!
    )

    static func coordinator(journal: any FlowJournalStore = InMemoryFlowJournalStore()) -> (SignInCoordinator, OIDCClient) {
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/oauth/callback")!),
            provider: .static(metadata),
            transport: StubTransport { _ in StubTransport.json(500, "{}") }
        )
        return (SignInCoordinator(.app(client), host: RecordingUserAgentHost(), opener: RecordingURLOpener(), journal: journal), client)
    }

    static func begin(_ coordinator: SignInCoordinator, _ client: OIDCClient) async throws -> String {
        let session = try await client.prepareAuthorization()
        return await coordinator.begin(
            SignInRequest(provider: "generic", strategy: .safariView), authorization: .app(session), url: session.authorizationURL,
            returnURL: session.redirectURI
        )
    }

    @Test(
        "a sign-in in an authentication session with an http redirect URI is refused before anything is shown: no session can catch it",
        arguments: [UserAgentStrategy.systemBrowser, .ephemeralBrowser])
    func httpRedirectInSession(_ strategy: UserAgentStrategy) async throws {
        let host = RecordingUserAgentHost()
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "http://127.0.0.1:8080/callback")!),
            provider: .static(Self.metadata), transport: StubTransport { _ in StubTransport.json(500, "{}") })
        let coordinator = SignInCoordinator(.app(client), host: host, opener: RecordingURLOpener())
        await expectCode(.strategyNotSupported) { _ = try await coordinator.signIn(SignInRequest(provider: "generic", strategy: strategy)) }
        #expect(host.calls.isEmpty)
        #expect(await coordinator.states.isEmpty)
    }

    @Test("results nobody awaited are kept for the last 16 sign-ins: the oldest is the one dropped")
    func oldestUnclaimedDropped() async throws {
        let (coordinator, client) = Self.coordinator()
        var flows: [String] = []
        for _ in 0..<17 {
            let flowID = try await Self.begin(coordinator, client)
            await coordinator.cancel(flowID)
            flows.append(flowID)
        }
        await expectCode(.flowNotFound) { _ = try await coordinator.result(of: flows[0]) }
        for flowID in flows.dropFirst() {
            await expectCode(.userCancelled) { _ = try await coordinator.result(of: flowID) }
        }
    }

    @Test("a journal save still under way when the sign-in ends does not leave that finished sign-in to be restored")
    func saveAfterEnd() async throws {
        let journal = GatedJournalStore()
        let (coordinator, client) = Self.coordinator(journal: journal)
        let started = Task { try await Self.begin(coordinator, client) }
        try await journal.waitForPendingSave()
        // The save is under way; the user cancels meanwhile (the actor runs the cancellation while the save waits).
        let flowID = try #require(await coordinator.states.keys.first)
        await coordinator.cancel(flowID)
        #expect(await journal.saved.isEmpty, "removed before the save landed")
        journal.open()
        _ = try await started.value
        #expect(await journal.saved.isEmpty, "the late save was taken back")
        #expect(try await coordinator.restore().isEmpty)
    }

    static let companionURL = URL(string: "https://companion.example.test")!

    static func companionAuthorization(_ route: CompanionRoute.Kind, at companion: URL? = companionURL) -> CompanionAuthorization {
        CompanionAuthorization(
            route: route, authorizationURL: URL(string: "https://id.example.test/authorize?request_uri=R")!,
            returnURL: URL(string: "com.example.app:/oauth/callback")!, state: "S", flowSecret: String(repeating: "b", count: 43),
            createdAt: Date(), companion: companion)
    }

    static func companionCoordinator(_ route: CompanionRoute, journal: any FlowJournalStore) -> SignInCoordinator {
        let companion = CompanionClient(
            companionURL, transport: StubTransport { _ in StubTransport.json(500, "{}") })
        return SignInCoordinator(.companion(companion, route: route), host: RecordingUserAgentHost(), opener: RecordingURLOpener(), journal: journal)
    }

    @Test(
        "restore takes back only the journals its authorizer can finish; those of another client ID or issuer, another companion or the companion's other route stay in the store"
    )
    func restoreByAuthorizer() async throws {
        let store: any FlowJournalStore = InMemoryFlowJournalStore()
        let expiry = Date().addingTimeInterval(600)
        let template = try FlowJournalTests.journal("template", expiresAt: expiry)
        guard case .app(let session) = template.authorization else { throw SwitchbackError(.invalidConfiguration, "not the app's") }
        func app(_ flowID: String, issuer: String, clientID: String) throws -> FlowJournal {
            let started = AuthorizationSession(
                issuer: issuer, clientID: clientID, redirectURI: session.redirectURI, state: session.state, nonce: session.nonce, pkce: session.pkce,
                responseMode: .query, maxAge: nil, requestURI: nil, authorizationURL: session.authorizationURL, createdAt: session.createdAt)
            return FlowJournal(flow: try FlowJournalTests.withID(flowID, template.flow), session: started, provider: "x", expiresAt: expiry)
        }
        try await store.save(try app("own", issuer: Self.metadata.issuer, clientID: "app"))
        try await store.save(try app("other-client", issuer: Self.metadata.issuer, clientID: "another-app"))
        try await store.save(try app("other-issuer", issuer: "https://staging.id.example.test", clientID: "app"))
        let companions: [(String, CompanionAuthorization)] = [
            ("companion-exchange", Self.companionAuthorization(.exchange)), ("companion-completion", Self.companionAuthorization(.completion)),
            ("other-companion", Self.companionAuthorization(.exchange, at: URL(string: "https://companion-b.example.test")!)),
            ("unrecorded-companion", Self.companionAuthorization(.exchange, at: nil)),
        ]
        for (flowID, authorization) in companions {
            try await store.save(
                FlowJournal(
                    flow: try FlowJournalTests.withID(flowID, template.flow), authorization: .companion(authorization), provider: "singpass",
                    expiresAt: expiry))
        }

        let (appCoordinator, _) = Self.coordinator(journal: store)
        #expect(try await appCoordinator.restore() == ["own"])
        let exchange = Self.companionCoordinator(.exchange(redirectURI: URL(string: "com.example.app:/oauth/callback")!), journal: store)
        // A journal written before the companion was recorded is taken by any coordinator of that route.
        #expect(Set(try await exchange.restore()) == ["companion-exchange", "unrecorded-companion"])
        #expect(
            Set(try await store.journals().map(\.flowID)) == [
                "own", "other-client", "other-issuer", "companion-exchange", "companion-completion", "other-companion", "unrecorded-companion",
            ])
        await appCoordinator.cancel("own")
        await exchange.cancel("companion-exchange")
        await exchange.cancel("unrecorded-companion")
    }

    @Test(
        "a response for a sign-in this coordinator's authorizer did not start fails it with invalidConfiguration; the sign-in does not hang",
        .timeLimit(.minutes(1)))
    func foreignAuthorizationFails() async throws {
        let (coordinator, _) = Self.coordinator()
        let authorization = Self.companionAuthorization(.exchange)
        let flowID = await coordinator.begin(
            SignInRequest(provider: "singpass", strategy: .safariView), authorization: .companion(authorization),
            url: authorization.authorizationURL, returnURL: authorization.returnURL)
        #expect(try await coordinator.handle(url: URL(string: "com.example.app:/oauth/callback?code=C&state=S")!))
        await expectCode(.invalidConfiguration) { _ = try await coordinator.result(of: flowID) }
    }
}

/// A journal store whose saves wait until `open()`.
actor GatedJournalStore: FlowJournalStore {
    private(set) var saved: [String: FlowJournal] = [:]
    private var pending = 0
    private let gate = AsyncStream<Void>.makeStream()
    private nonisolated let opened = LockedValue(false)

    func save(_ journal: FlowJournal) async throws {
        pending += 1
        if !opened.withLock({ $0 }) { for await _ in gate.stream { break } }
        saved[journal.flowID] = journal
    }

    func journals() -> [FlowJournal] { Array(saved.values) }

    func remove(flowID: String) { saved[flowID] = nil }

    func waitForPendingSave() async throws {
        for _ in 0..<4000 where pending == 0 { try await Task.sleep(nanoseconds: 5_000_000) }
        guard pending > 0 else { throw CancellationError() }
    }

    nonisolated func open() {
        opened.withLock { $0 = true }
        gate.continuation.finish()
    }
}
