import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// A sign-out's end-session page as the coordinator runs it: shown like a sign-in, ended by its own return
/// (its `state`, once), by the user closing it, or refused.
@Suite("SignInCoordinator.endSession")
struct EndSessionFlowTests {
    static let signedOut = URL(string: "com.example.app:/oauth/signed-out")!
    static let request = EndSessionRequest(
        url: URL(string: "https://id.example.test/end_session?state=s-0123456789&post_logout_redirect_uri=com.example.app%3A%2Foauth%2Fsigned-out")!,
        state: "s-0123456789", postLogoutRedirectURI: signedOut)

    /// Starts the sign-out in the background and returns once its page is shown.
    static func shown(_ strategy: UserAgentStrategy) async throws -> (
        SignInCoordinator, RecordingUserAgentHost, Task<EndSessionOutcome, any Error>
    ) {
        let (coordinator, _) = CoordinatorBookkeepingTests.coordinator()
        let host = RecordingUserAgentHost()
        let withHost = SignInCoordinator(coordinator.authorizer, host: host, opener: RecordingURLOpener())
        let task = Task { try await withHost.endSession(request, strategy: strategy) }
        for _ in 0..<10_000 where host.events == nil { try await Task.sleep(nanoseconds: 2_000_000) }
        #expect(host.calls.first == .present(request.url, strategy))
        return (withHost, host, task)
    }

    @Test("the authentication session's callback with the request's state ends it as returned, and the user agent is closed")
    func returned() async throws {
        let (_, host, task) = try await Self.shown(.systemBrowser)
        await host.events?.callback(.redirect(URL(string: "com.example.app:/oauth/signed-out?state=s-0123456789")!))
        #expect(try await task.value == .returned)
        #expect(host.calls.last == .dismiss)
    }

    @Test("a Safari view's return reaches the app as an opened URL; the same URL again is a replay")
    func openedURL() async throws {
        let (coordinator, _, task) = try await Self.shown(.safariView)
        let url = URL(string: "com.example.app:/oauth/signed-out?state=s-0123456789")!
        #expect(try await coordinator.handle(url: url))
        #expect(try await task.value == .returned)
        await expectCode(.callbackReplayed) { _ = try await coordinator.handle(url: url) }
    }

    @Test("a return with another state is not this sign-out's: the app handles the link, the sign-out goes on")
    func otherState() async throws {
        let (coordinator, host, task) = try await Self.shown(.safariView)
        #expect(try await coordinator.handle(url: URL(string: "com.example.app:/oauth/signed-out?state=forged")!) == false)
        await host.events?.dismissed()
        #expect(try await task.value == .closed)
    }

    @Test("a callback with a forged state fails the sign-out with stateMismatch")
    func forgedCallback() async throws {
        let (_, host, task) = try await Self.shown(.systemBrowser)
        await host.events?.callback(.redirect(URL(string: "com.example.app:/oauth/signed-out?state=forged")!))
        await expectCode(.stateMismatch) { _ = try await task.value }
    }

    @Test("the user closing the provider's page ends the sign-out as closed, not as an error")
    func closed() async throws {
        let (_, host, task) = try await Self.shown(.webView)
        await host.events?.dismissed()
        #expect(try await task.value == .closed)
    }

    @Test("cancelling the task dismisses the user agent and throws CancellationError")
    func cancelled() async throws {
        let (_, host, task) = try await Self.shown(.webView)
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(host.calls.contains(.dismiss))
    }

    @Test("without a post-logout redirect URI nothing is shown: the user agent would never come back")
    func noReturn() async throws {
        let (coordinator, _) = CoordinatorBookkeepingTests.coordinator()
        let request = EndSessionRequest(url: Self.request.url, state: "s", postLogoutRedirectURI: nil)
        await expectCode(.invalidConfiguration) { _ = try await coordinator.endSession(request, strategy: .webView) }
        #expect(await coordinator.states.isEmpty)
    }

    @Test("a sign-out flow is never journaled, and result(of:) does not take it for a sign-in")
    func notJournaled() async throws {
        let journal = InMemoryFlowJournalStore()
        let host = RecordingUserAgentHost()
        let (base, _) = CoordinatorBookkeepingTests.coordinator()
        let coordinator = SignInCoordinator(base.authorizer, host: host, opener: RecordingURLOpener(), journal: journal)
        let task = Task { try await coordinator.endSession(Self.request, strategy: .safariView) }
        for _ in 0..<10_000 where host.events == nil { try await Task.sleep(nanoseconds: 2_000_000) }
        await coordinator.appDidEnterBackground()
        #expect(await journal.journals().isEmpty)
        let flowID = try #require(host.events?.flowID)
        await host.events?.dismissed()
        #expect(try await task.value == .closed)
        await expectCode(.flowNotFound) { _ = try await coordinator.result(of: flowID) }
    }

    @Test("UAE Pass's logout gets redirect_uri alone (its documented parameter) and comes back without state, checked by address")
    func uaePassLogout() async throws {
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/oauth/callback")!),
            provider: .static(.uaePass(.staging)), transport: StubTransport { _ in StubTransport.json(500, "{}") })
        let credential = Credential(
            issuer: "https://stg-id.uaepass.ae", clientID: "app", accessToken: "at", tokenType: "Bearer", refreshToken: nil, idToken: nil,
            idTokenClaims: nil, expiresAt: nil, scopes: [], identitySource: .userInfo)
        let request = try #require(try await client.endSessionRequest(for: credential, postLogoutRedirectURI: Self.signedOut))
        #expect(request.url.absoluteString == "https://stg-id.uaepass.ae/idshub/logout?redirect_uri=com.example.app%3A%2Foauth%2Fsigned-out")
        #expect(request.state == nil)
        try request.verifyReturn(Self.signedOut)
        expectCode(.redirectURIMismatch) { try request.verifyReturn(URL(string: "com.example.app:/oauth/callback")!) }
        // Shown and caught like any other sign-out.
        let host = RecordingUserAgentHost()
        let coordinator = SignInCoordinator(.app(client), host: host, opener: RecordingURLOpener())
        let task = Task { try await coordinator.endSession(request, strategy: .webView) }
        for _ in 0..<10_000 where host.events == nil { try await Task.sleep(nanoseconds: 2_000_000) }
        #expect(await host.events?.shouldLoad(Self.signedOut) == false, "the WebView is stopped at the return and it is taken")
        #expect(try await task.value == .returnedWithoutState, "an address anyone could open proves nothing about the provider")
    }
}
