import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// A wallet sign-in's own parts: the flow that opens another app instead of a user agent, the wallet link in
/// the preset's scheme, and the `response_code` the wallet's return link carries.
@Suite("Wallet sign-ins")
struct WalletFlowTests {
    static let walletLink = URL(
        string: "openid4vp://?client_id=x509_hash%3Aabc&request_uri=https%3A%2F%2Fapi.example.com%2Fwallet%2Frequest%2FS1&request_uri_method=post")!
    static let returnURL = URL(string: "https://app.example.com/wallet-return")!

    static func plan(withoutReturn: SignInFlow.Plan.WithoutReturn = .wait) -> SignInFlow.Plan {
        SignInFlow.Plan(
            flowID: "W1", strategy: .systemBrowser, authorizationURL: walletLink, redirectURI: returnURL, withoutReturn: withoutReturn,
            gracePeriod: 2, startsInApp: true)
    }

    @Test("the flow opens the wallet, no user agent; the return link ends it in the exchange; a second return is a replay")
    func opensTheWallet() {
        var flow = SignInFlow(Self.plan())
        #expect(flow.handle(.start) == [.persist, .openAuthenticator(Self.walletLink)])
        #expect(flow.state == .awaitingAuthenticator && !flow.userAgentShown)
        #expect(flow.handle(.authenticatorLaunched).isEmpty)
        let back = URL(string: "https://app.example.com/wallet-return#response_code=RC1")!
        #expect(flow.handle(.openedURL(back)) == [.exchange(.redirect(back))], "nothing to dismiss: no user agent was shown")
        #expect(flow.handle(.openedURL(back)) == [.reject(back, .callbackReplayed)])
        #expect(flow.handle(.exchangeSucceeded) == [.complete(.signedIn)])
    }

    @Test("no wallet installed: authenticatorUnavailable")
    func noWallet() {
        var flow = SignInFlow(Self.plan())
        _ = flow.handle(.start)
        #expect(flow.handle(.authenticatorLaunchFailed) == [.complete(.failed(.authenticatorUnavailable))])
    }

    @Test("back without the link: waits for it (the wallet answers the companion first), or fails when asked to")
    func backWithoutTheLink() {
        var waiting = SignInFlow(Self.plan())
        _ = waiting.handle(.start)
        #expect(waiting.handle(.becameActive) == [.startGraceTimer(2)])
        #expect(waiting.handle(.graceElapsed) == [.persist])
        #expect(waiting.state == .awaitingCallback)
        let back = URL(string: "https://app.example.com/wallet-return#response_code=RC1")!
        #expect(waiting.handle(.openedURL(back)) == [.exchange(.redirect(back))])

        var failing = SignInFlow(Self.plan(withoutReturn: .fail))
        _ = failing.handle(.start)
        _ = failing.handle(.becameActive)
        #expect(failing.handle(.graceElapsed) == [.complete(.failed(.authenticatorDidNotReturn))])
    }

    @Test("terminated while the wallet is in front, or after the grace period: the relaunch waits for the return link")
    func relaunch() throws {
        for waitedOut in [false, true] {
            var flow = SignInFlow(Self.plan())
            _ = flow.handle(.start)
            if waitedOut {
                _ = flow.handle(.becameActive)
                _ = flow.handle(.graceElapsed)
            }
            var restored = try JSONDecoder().decode(SignInFlow.self, from: try JSONEncoder().encode(flow))
            #expect(restored.handle(.relaunched).isEmpty)
            let back = URL(string: "https://app.example.com/wallet-return#response_code=RC1")!
            #expect(restored.handle(.openedURL(back)) == [.exchange(.redirect(back))])
        }
        // A flow of a user agent with no hand-off cannot continue: the difference is the plan's.
        var browser = SignInFlow(SignInFlow.Plan(flowID: "B1", strategy: .safariView, authorizationURL: Self.walletLink, redirectURI: Self.returnURL))
        _ = browser.handle(.start)
        #expect(browser.handle(.relaunched) == [.complete(.failed(.flowInterrupted))])
    }

    @Test("the companion's link in the preset's scheme; one without a client_id or an https request_uri is refused")
    func invocation() {
        #expect(
            WalletPreset.haip.invocation(of: Self.walletLink)?.absoluteString.hasPrefix("haip-vp://?client_id=x509_hash%3Aabc&request_uri=") == true)
        #expect(WalletPreset.openID4VP.invocation(of: Self.walletLink) == Self.walletLink)
        for bad in [
            "openid4vp://?request_uri=https%3A%2F%2Fapi.example.com%2Fr", "openid4vp://?client_id=x&request_uri=http%3A%2F%2Fevil.example%2Fr",
            "openid4vp://?client_id=x", "openid4vp://?client_id=&request_uri=https%3A%2F%2Fapi.example.com%2Fr",
            "openid4vp://?client_id=x&request_uri=javascript%3Aalert(1)",
        ] {
            #expect(WalletPreset.openID4VP.invocation(of: URL(string: bad)!) == nil, "\(bad)")
        }
    }

    @Test("the response_code comes from the fragment, exactly once; none, an empty one, two, or one in the query is no code")
    func responseCode() {
        #expect(WalletPresentation.responseCode(in: URL(string: "https://app.example.com/r#response_code=abc-123")!) == "abc-123")
        for bad in [
            "https://app.example.com/r", "https://app.example.com/r#response_code=", "https://app.example.com/r#response_code=a&response_code=b",
            "https://app.example.com/r?response_code=abc",
        ] {
            #expect(WalletPresentation.responseCode(in: URL(string: bad)!) == nil, "\(bad)")
        }
    }

    @Test("a wallets-only coordinator refuses a provider's request, and a coordinator without a companion refuses a wallet, before anything opens")
    func coordinators() async throws {
        let companion = CompanionClient(URL(string: "https://api.example.com")!, transport: UnreachableTransport())
        let walletsOnly = SignInCoordinator(.wallets(verifiedBy: companion), host: NoHost(), opener: NoOpener())
        await #expect(throws: SwitchbackError.self) {
            _ = try await walletsOnly.signIn(SignInRequest(provider: "generic", strategy: .systemBrowser))
        }
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!),
            provider: .static(.uaePass(.staging)), transport: UnreachableTransport())
        let appOnly = SignInCoordinator(.app(client), host: NoHost(), opener: NoOpener())
        do {
            _ = try await appOnly.signIn(.wallet(WalletPreset.openID4VP.request()))
            Issue.record("a wallet sign-in started without a companion")
        } catch let error as SwitchbackError {
            #expect(error.code == .invalidConfiguration)
        }
        #expect(SignInRoute.wallet(WalletPreset.haip.request()).name == "wallet")
        #expect(SignInResult.presentation(WalletPresentation(credentials: [:])).subject == nil)
    }

    @Test("a presentation's description names credentials and claims, never a value")
    func description() {
        let presentation = WalletPresentation(credentials: ["pid": [["given_name": "Erika", "birthdate": "1984-01-26"]]])
        #expect("\(presentation)" == "WalletPresentation(pid: [birthdate, given_name])")
        #expect(presentation.claims("pid")?["given_name"] == "Erika")
    }
}

private struct UnreachableTransport: HTTPTransport {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { throw SwitchbackError(.transportFailed, "unreachable") }
}

private struct NoHost: UserAgentHost {
    func present(_ url: URL, strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents) async throws {}
    func load(_ url: URL) async {}
    func dismiss() async {}
}

private struct NoOpener: URLOpener {
    func open(_ url: URL) async -> Bool { false }
}
