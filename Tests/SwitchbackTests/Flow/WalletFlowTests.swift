import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting

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

    static let companion = URL(string: "https://api.example.com")!

    @Test("the companion's link made again in the preset's scheme; anything more, or a request_uri off the companion, is refused")
    func invocation() {
        #expect(
            WalletPreset.haip.invocation(of: Self.walletLink, companion: Self.companion)?.absoluteString
                == "haip-vp://?client_id=x509_hash%3Aabc&request_uri=https%3A%2F%2Fapi.example.com%2Fwallet%2Frequest%2FS1&request_uri_method=post")
        #expect(WalletPreset.openID4VP.invocation(of: Self.walletLink, companion: Self.companion)?.scheme == "openid4vp")
        let plus = URL(string: "openid4vp://?client_id=x509_hash%3Aa%2Bb&request_uri=https%3A%2F%2Fapi.example.com%2Fr")!
        #expect(WalletPreset.openID4VP.invocation(of: plus, companion: Self.companion)?.absoluteString.contains("x509_hash%3Aa%2Bb") == true)
        for bad in [
            "openid4vp://?request_uri=https%3A%2F%2Fapi.example.com%2Fr", "openid4vp://?client_id=x&request_uri=http%3A%2F%2Fevil.example%2Fr",
            "openid4vp://?client_id=x", "openid4vp://?client_id=&request_uri=https%3A%2F%2Fapi.example.com%2Fr",
            "openid4vp://?client_id=x&request_uri=javascript%3Aalert(1)",
            "openid4vp://?client_id=x&request_uri=https%3A%2F%2Fevil.example%2Fr",
            "openid4vp://?client_id=x&request_uri=https%3A%2F%2Fapi.example.com%2Fr&request_uri=https%3A%2F%2Fevil.example%2Fr",
            "openid4vp://?client_id=x&request_uri=https%3A%2F%2Fapi.example.com%2Fr&request=eyJ",
            "openid4vp://?client_id=x&request_uri=https%3A%2F%2Fapi.example.com%2Fr&request_uri_method=put",
            "openid4vp://?client_id=x&request_uri=https%3A%2F%2Fapi.example.com%3A8443%2Fr",
        ] {
            #expect(WalletPreset.openID4VP.invocation(of: URL(string: bad)!, companion: Self.companion) == nil, "\(bad)")
        }
    }

    @Test("a return link whose code the companion does not know puts the flow back to waiting; the genuine link then signs in")
    func unknownReturn() {
        var flow = SignInFlow(Self.plan())
        _ = flow.handle(.start)
        let forged = URL(string: "https://app.example.com/wallet-return#response_code=forged")!
        #expect(flow.handle(.openedURL(forged)) == [.exchange(.redirect(forged))])
        #expect(flow.handle(.returnUnknown) == [.persist])
        #expect(flow.state == .awaitingCallback)
        let genuine = URL(string: "https://app.example.com/wallet-return#response_code=RC1")!
        #expect(flow.handle(.openedURL(genuine)) == [.exchange(.redirect(genuine))])
        // Only a flow that opened another app, and only while it redeems.
        var browser = SignInFlow(SignInFlow.Plan(flowID: "B1", strategy: .safariView, authorizationURL: Self.walletLink, redirectURI: Self.returnURL))
        _ = browser.handle(.start)
        _ = browser.handle(.openedURL(genuine))
        #expect(browser.handle(.returnUnknown).isEmpty && browser.state == .exchanging)
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

    /// A companion that starts wallet presentations (and knows nothing else).
    static func startingCompanion() -> CompanionClient {
        let transport = StubTransport { request in
            guard request.url.path == "/wallet/start" else { return StubTransport.json(400, #"{"error":"invalid_grant"}"#) }
            return StubTransport.json(
                200,
                #"{"wallet_url":"openid4vp://?client_id=x509_hash%3Aabc&request_uri=https%3A%2F%2Fapi.example.com%2Fwallet%2Frequest%2FS1","return_url":"https://app.example.com/wallet-return","expires_in":300}"#
            )
        }
        return CompanionClient(Self.companion, transport: transport)
    }

    @Test("a second wallet sign-in cancels the one waiting: the return link names no state, so only one may wait")
    func oneAtATime() async throws {
        let opener = RecordingOpener(opens: true)
        let coordinator = SignInCoordinator(.wallets(verifiedBy: Self.startingCompanion()), host: NoHost(), opener: opener)
        let first = Task { try await coordinator.signIn(.wallet(WalletPreset.openID4VP.request())) }
        for _ in 0..<10_000 where await coordinator.states.isEmpty { try await Task.sleep(nanoseconds: 2_000_000) }
        let firstID = try #require(await coordinator.states.keys.first)
        let second = Task { try await coordinator.signIn(.wallet(WalletPreset.openID4VP.request())) }
        // Soon (20 s at most), only the second waits (it registers once the companion answered its start).
        var waiting: [String] = []
        for _ in 0..<10_000 {
            waiting = Array(await coordinator.states.keys)
            if waiting.count == 1, waiting != [firstID] { break }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        #expect(waiting.count == 1 && waiting != [firstID], "\(waiting)")
        first.cancel()
        do {
            _ = try await first.value
            Issue.record("the first wallet sign-in signed in")
        } catch let error as SwitchbackError {
            #expect(error.code == .userCancelled, "ended by the second's start, not by this test's cancel")
        } catch {
            Issue.record("the first wallet sign-in went on beside the second until this test cancelled it")
        }
        second.cancel()
        _ = try? await second.value
    }

    @Test("a wallet declared by its universal link is opened by it only: no app claims it, authenticatorUnavailable, the scheme never opened")
    func universalLinkOnly() async throws {
        let opener = RecordingOpener(opens: true, universalLinks: false)
        let coordinator = SignInCoordinator(.wallets(verifiedBy: Self.startingCompanion()), host: NoHost(), opener: opener)
        let wallet = WalletPreset(name: "Example Wallet", scheme: "openid4vp", universalLink: URL(string: "https://wallet.example.com/present"))
        do {
            _ = try await coordinator.signIn(.wallet(wallet.request()))
            Issue.record("signed in without a wallet")
        } catch let error as SwitchbackError {
            #expect(error.code == .authenticatorUnavailable)
        }
        #expect(opener.universal.withLock { $0.map(\.host) } == ["wallet.example.com"])
        #expect(opener.opened.withLock { $0 }.isEmpty, "the custom scheme must not be tried")
    }

    @Test("a presentation's description names credentials and claims, never a value")
    func description() {
        let presentation = WalletPresentation(credentials: ["pid": [["given_name": "Erika", "birthdate": "1984-01-26"]]])
        #expect("\(presentation)" == "WalletPresentation(pid: [birthdate, given_name])")
        #expect(presentation.claims("pid")?["given_name"] == "Erika")
    }

    @Test(
        "a Verify with Wallet request Wallet would refuse is refused first: no element, one twice, age with a threshold, a threshold out of 1 to 125")
    func identityDocumentRequests() {
        let good = IdentityDocumentRequest(fields: [.init(.givenName), .init(.ageAtLeast(18)), .init(.portrait, intentToStore: .mayStoreForDays(30))])
        #expect(throws: Never.self) { try good.validate() }
        for fields: [IdentityDocumentRequest.Field] in [
            [], [.init(.givenName), .init(.givenName)], [.init(.age), .init(.ageAtLeast(21))], [.init(.ageAtLeast(0))], [.init(.ageAtLeast(126))],
            [.init(.givenName, intentToStore: .mayStoreForDays(-1))],
        ] {
            #expect(throws: SwitchbackError.self, "\(fields)") { try IdentityDocumentRequest(fields: fields).validate() }
        }
        #expect(IdentityDocumentFailure.cancelled.error.code == .userCancelled)
        #expect(IdentityDocumentFailure.regionNotSupported.error.code == .authenticatorUnavailable)
        #expect(IdentityDocumentFailure(rawValue: 99) == nil)
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

private final class RecordingOpener: URLOpener, Sendable {
    let opens: Bool
    let universalLinks: Bool
    let opened = LockedValue<[URL]>([])
    let universal = LockedValue<[URL]>([])

    init(opens: Bool, universalLinks: Bool = true) {
        self.opens = opens
        self.universalLinks = universalLinks
    }

    func open(_ url: URL) async -> Bool {
        opened.withLock { $0.append(url) }
        return opens
    }

    func openUniversalLink(_ url: URL) async -> Bool {
        universal.withLock { $0.append(url) }
        return universalLinks
    }

}
