import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// Sign-ins the companion runs (``CompanionRoute``), coordinator against a real companion and emulator:
/// the app shows the authorization the companion started, relays or awaits its end, and gets the
/// companion's answer. The user's browser is played by hand.
@Suite("Coordinator with sign-ins the companion runs")
struct CompanionSignInTests {
    static let request = SignInRequest(provider: "generic", strategy: .systemBrowser)

    static func coordinator(
        _ rig: CompanionRig, route: CompanionRoute, host: RecordingUserAgentHost, journal: any FlowJournalStore = InMemoryFlowJournalStore()
    ) -> SignInCoordinator {
        SignInCoordinator(
            .companion(CompanionClient(rig.companion.baseURL), route: route), host: host, opener: RecordingURLOpener(), journal: journal)
    }

    /// The companion's answer a sign-in ended with.
    static func companionSignIn(_ coordinator: SignInCoordinator, _ request: SignInRequest = request) async throws -> CompanionSignIn {
        guard case .companion(let signIn) = try await coordinator.signIn(request) else {
            throw RigFailure("the sign-in ended without the companion's answer")
        }
        return signIn
    }

    /// Waits until the host was asked to present, and returns that URL.
    static func presented(_ host: RecordingUserAgentHost, after count: Int = 0) async throws -> URL {
        for _ in 0..<6000 {  // at least 30 s: a loaded machine is slow, a hang fails
            let shown = host.calls.compactMap { call -> URL? in
                if case .present(let url, _) = call { return url }
                return nil
            }
            if shown.count > count { return shown[count] }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        throw RigFailure("nothing was presented")
    }

    /// A sign-in through `route` on a new coordinator: the coordinator, its user agent, the task awaiting
    /// the result, and the URL the user agent was asked to show.
    static func start(
        _ rig: CompanionRig, through route: CompanionRoute
    ) async throws -> (coordinator: SignInCoordinator, host: RecordingUserAgentHost, task: Task<CompanionSignIn, any Error>, shown: URL) {
        let host = RecordingUserAgentHost()
        let coordinator = Self.coordinator(rig, route: route, host: host)
        let task = Task { try await Self.companionSignIn(coordinator) }
        return (coordinator, host, task, try await Self.presented(host))
    }

    static let exchangeRoute = CompanionRoute.exchange(redirectURI: URL(string: CompanionRig.appRedirect)!)

    /// Signs alice in at the provider and returns the provider's redirect.
    static func providerRedirect(_ authorizationURL: URL, browser: EmulatorBrowser = EmulatorBrowser()) async throws -> URL {
        guard case .redirect(let location) = try await browser.signIn(authorizationURL), let url = URL(string: location) else {
            throw RigFailure("the provider did not redirect")
        }
        return url
    }

    // MARK: Exchange route

    @Test(
        "exchange route: the companion pushes the request and redeems; the app relays the callback and gets a session; the callback again is refused"
    )
    func exchange() async throws {
        try await CompanionRig.with { rig in
            let (coordinator, host, task, authorizationURL) = try await Self.start(rig, through: Self.exchangeRoute)
            // The app never had a verifier or a nonce: the front-channel URL is the companion's pushed request.
            #expect(authorizationURL.query?.contains("request_uri=") == true)
            #expect(authorizationURL.query?.contains("code_challenge") == false)
            let callback = try await Self.providerRedirect(authorizationURL)
            #expect(try await coordinator.handle(url: callback))
            let signIn = try await task.value
            #expect(signIn.subject == "9b1f7c2e-alice")
            #expect(signIn.session != nil && signIn.tokens == nil)
            #expect(host.calls.last == .dismiss)
            await expectCode(.callbackReplayed) { _ = try await coordinator.handle(url: callback) }
            #expect(!"\(signIn)".contains(signIn.session ?? "-"), "the description hides the session")
        }
    }

    @Test("exchange route: a response the companion started for someone else is refused by the app (stateMismatch), and never relayed")
    func foreignCallback() async throws {
        try await CompanionRig.with { rig in
            let redirect = try #require(URL(string: CompanionRig.appRedirect))
            // The attacker starts a sign-in of their own at the same companion and stops at the callback.
            let attackersBinding = "attackers-binding-0123456789abcdef"
            let attacker = try await CompanionClient(rig.companion.baseURL).startExchange(
                redirectURI: redirect, binding: attackersBinding, options: AuthorizationOptions(), now: Date()
            )
            let attackersCallback = try await Self.providerRedirect(attacker.authorizationURL)

            let (coordinator, host, task, _) = try await Self.start(rig, through: Self.exchangeRoute)
            // Opened as a link, it belongs to no running sign-in: the app handles it as any other link.
            #expect(try await coordinator.handle(url: attackersCallback) == false)
            // Caught by the authentication session, it is checked and refused before the companion sees it.
            try await #require(host.events).callback(.redirect(attackersCallback))
            await expectCode(.stateMismatch) { _ = try await task.value }
            // The attacker's sign-in is still unused at the companion: the app did not relay it.
            let redeemed = try await CompanionClient(rig.companion.baseURL).exchange(callback: attackersCallback, binding: attackersBinding)
            #expect(redeemed.subject == "9b1f7c2e-alice")
        }
    }

    @Test("exchange route: a provider's error response ends the sign-in as authorizationError, with the provider's error")
    func providerError() async throws {
        try await CompanionRig.with { rig in
            let (coordinator, _, task, authorizationURL) = try await Self.start(rig, through: Self.exchangeRoute)
            // The provider's answer, turned into its error for the same request.
            let answer = try await Self.providerRedirect(authorizationURL)
            let state = try #require(URLComponents(url: answer, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
            var components = try #require(URLComponents(string: CompanionRig.appRedirect))
            components.queryItems = [.init(name: "error", value: "access_denied"), .init(name: "state", value: state)]
            #expect(try await coordinator.handle(url: try #require(components.url)))
            do {
                _ = try await task.value
                Issue.record("the sign-in succeeded")
            } catch let error as SwitchbackError {
                #expect(error.code == .authorizationError && error.oauthError?.error == "access_denied")
            }
        }
    }

    @Test(
        "exchange route: refusals before anything is shown — a redirect URI off the companion's list, a parameter it does not forward, form_post")
    func refusedStarts() async throws {
        try await CompanionRig.with { rig in
            let host = RecordingUserAgentHost()
            let elsewhere = Self.coordinator(rig, route: .exchange(redirectURI: URL(string: "com.example.other:/cb")!), host: host)
            await expectCode(.tokenEndpointError) { _ = try await elsewhere.signIn(Self.request) }
            let coordinator = Self.coordinator(rig, route: Self.exchangeRoute, host: host)
            var extra = Self.request
            extra.options.extraParameters = [("prompt_hint", "x")]
            await expectCode(.tokenEndpointError) { _ = try await coordinator.signIn(extra) }
            var formPost = Self.request
            formPost.options.responseMode = .formPost
            await expectCode(.strategyNotSupported) { _ = try await coordinator.signIn(formPost) }
            #expect(host.calls.isEmpty)
        }
    }

    // MARK: Completion route

    @Test("completion route: the companion finishes at the provider's answer; the app collects the result with the return link's one-time value")
    func completion() async throws {
        try await CompanionRig.with { rig in
            let (coordinator, host, task, authorizationURL) = try await Self.start(rig, through: .completion)
            let answer = try await Self.providerRedirect(authorizationURL)
            #expect(answer.path == "/complete")
            // The browser loads the companion's page: the companion finishes the sign-in there.
            let page = try await rig.get(answer)
            let link = try #require(WebPage(url: answer, html: page.text).returnLink)
            #expect(link.absoluteString.hasPrefix(CompanionRig.appLink + "?result="))
            // Without the link, the app learns nothing: the sign-in is still running.
            try await Task.sleep(nanoseconds: 300_000_000)
            #expect(host.calls.last != .dismiss)
            // The user taps the page's button: the link reaches the app, which collects the result with it.
            #expect(try await coordinator.handle(url: link))
            let signIn = try await task.value
            #expect(signIn.subject == "9b1f7c2e-alice" && signIn.session != nil)
            #expect(host.calls.last == .dismiss)
        }
    }

    @Test("completion route: a decline at the provider ends the sign-in as authorizationError")
    func completionDecline() async throws {
        try await CompanionRig.with { rig in
            await rig.emulator.setFaults([.authorizationError], forClient: "backend")
            let (_, _, task, authorizationURL) = try await Self.start(rig, through: .completion)
            _ = try await rig.get(try await Self.providerRedirect(authorizationURL))
            await expectCode(.authorizationError) { _ = try await task.value }
        }
    }
}
