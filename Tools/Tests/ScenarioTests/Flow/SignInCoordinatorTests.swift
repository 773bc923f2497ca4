import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The coordinator with a user agent the test drives by hand (the emulator's pages through
/// `EmulatorBrowser`): routing, replays, cancellation, and the journal.
@Suite("SignInCoordinator")
struct SignInCoordinatorTests {
    static func coordinator(_ emulator: Emulator, host: RecordingUserAgentHost, journal: any FlowJournalStore = InMemoryFlowJournalStore())
        -> SignInCoordinator
    {
        SignInCoordinator(
            .app(EmulatorHarness.client(emulator)), host: host, opener: RecordingURLOpener(), journal: journal, clock: ManualClock(Date())
        )
    }

    static let request = SignInRequest(provider: "generic", strategy: .safariView)

    /// Waits until the host has been asked to present `count` user agents; their URLs.
    static func presented(_ host: RecordingUserAgentHost, count: Int = 1) async throws -> [URL] {
        for _ in 0..<1000 {
            let urls = host.calls.compactMap { if case .present(let url, _) = $0 { url } else { nil } }
            if urls.count >= count { return urls }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        throw CancellationError()
    }

    /// Signs in on the provider's pages and returns the callback URL the app would be opened with.
    static func callback(for url: URL) async throws -> URL {
        guard case .redirect(let location) = try await EmulatorBrowser().signIn(url), let callback = URL(string: location) else {
            throw CancellationError()
        }
        return callback
    }

    @Test("the callback reaches its sign-in through handle(url:); delivered again after completion it is refused, not redeemed")
    func replayAfterCompletion() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let host = RecordingUserAgentHost()
            let coordinator = Self.coordinator(emulator, host: host)
            let signIn = Task { try await coordinator.signIn(Self.request) }
            let callback = try await Self.callback(for: try #require(try await Self.presented(host).first))
            #expect(try await coordinator.handle(url: callback))
            let credential = try await signIn.value
            #expect(credential.credential?.idTokenClaims?.sub == "9b1f7c2e-alice")
            #expect(host.calls.last == .dismiss)
            let replay = await #expect(throws: SwitchbackError.self) { try await coordinator.handle(url: callback) }
            #expect(replay?.code == .callbackReplayed)
        }
    }

    @Test("two sign-ins at once: each callback is routed to its own flow by state, in either order")
    func routesByState() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let host = RecordingUserAgentHost()
            let coordinator = Self.coordinator(emulator, host: host)
            let first = Task { try await coordinator.signIn(Self.request) }
            _ = try await Self.presented(host, count: 1)
            let second = Task { try await coordinator.signIn(Self.request) }
            let urls = try await Self.presented(host, count: 2)
            let callbacks = [try await Self.callback(for: urls[0]), try await Self.callback(for: urls[1])]
            #expect(try await coordinator.handle(url: callbacks[1]))
            #expect(try await coordinator.handle(url: callbacks[0]))
            let tokens = [try await first.value.credential?.accessToken, try await second.value.credential?.accessToken]
            #expect(Set(tokens).count == 2)
        }
    }

    @Test("links that belong to no sign-in are left to the app")
    func unrelatedLinks() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let host = RecordingUserAgentHost()
            let coordinator = Self.coordinator(emulator, host: host)
            let signIn = Task { try await coordinator.signIn(Self.request) }
            _ = try await Self.presented(host)
            #expect(try await coordinator.handle(url: try #require(URL(string: "https://app.example.com/news/42"))) == false)
            #expect(try await coordinator.handle(url: try #require(URL(string: "com.example.app:/settings"))) == false)
            // A callback at the redirect URI with a state no flow has is not routed to the running one.
            #expect(try await coordinator.handle(url: try #require(URL(string: "com.example.app:/oauth/callback?code=x&state=forged"))) == false)
            #expect(await coordinator.states.values.first == .presenting)
            signIn.cancel()
            _ = await signIn.result
        }
    }

    @Test("cancelling the task dismisses the user agent, ends with CancellationError once, and removes the journal")
    func taskCancellation() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let host = RecordingUserAgentHost()
            let journal = InMemoryFlowJournalStore()
            let coordinator = Self.coordinator(emulator, host: host, journal: journal)
            let signIn = Task { try await coordinator.signIn(Self.request) }
            _ = try await Self.presented(host)
            #expect(await journal.journals().count == 1, "saved before the user agent was shown")
            signIn.cancel()
            await #expect(throws: CancellationError.self) { try await signIn.value }
            #expect(host.calls.filter { $0 == .dismiss }.count == 1)
            #expect(await journal.journals().isEmpty)
            #expect(await coordinator.states.isEmpty)
        }
    }

    @Test("form_post into a WebView is refused up front: the WebView would never give the app the posted body")
    func formPostInWebView() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let host = RecordingUserAgentHost()
            let coordinator = Self.coordinator(emulator, host: host)
            let request = SignInRequest(provider: "generic", strategy: .webView, options: AuthorizationOptions(responseMode: .formPost))
            let error = await #expect(throws: SwitchbackError.self) { try await coordinator.signIn(request) }
            #expect(error?.code == .strategyNotSupported)
            #expect(host.calls.isEmpty)
        }
    }

    @Test("the user closing the user agent ends the sign-in as userCancelled")
    func userClosed() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let host = RecordingUserAgentHost()
            let coordinator = Self.coordinator(emulator, host: host)
            let signIn = Task { try await coordinator.signIn(Self.request) }
            _ = try await Self.presented(host)
            let events = try #require(host.events)
            await events.dismissed()
            let error = await #expect(throws: SwitchbackError.self) { try await signIn.value }
            #expect(error?.code == .userCancelled)
        }
    }
}
