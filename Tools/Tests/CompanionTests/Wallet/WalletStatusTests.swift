import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// The verdict at the response endpoint when a credential's status list is slow, missing or says revoked:
/// the wallet waits for the status, never longer than `wallet.statusListTimeout`, and is told the verdict;
/// the statuses of several credentials are read at once.
@Suite("The wallet told the verdict: slow, missing and revoked status lists")
struct WalletStatusTests {
    /// How many fetches of the list were under way at once, at most.
    actor InFlight {
        private var now = 0
        private(set) var most = 0
        func enter() {
            now += 1
            most = max(most, now)
        }
        func leave() { now -= 1 }
    }

    /// The emulated issuer's status list, held back for `delay`, or answered 503.
    struct SlowStatusList: HTTPTransport {
        let issuer: EmulatedIssuer
        let delay: Duration
        var unavailable = false
        let next: any HTTPTransport
        let inFlight = InFlight()

        init(_ issuer: EmulatedIssuer, delay: Duration, unavailable: Bool = false) {
            self.issuer = issuer
            self.delay = delay
            self.unavailable = unavailable
            next = StatusListHosting(issuer, revoked: [EmulatedWallet.revokedIndex], next: URLSessionTransport())
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            if request.url.absoluteString == issuer.statusListURI {
                if unavailable { return HTTPResponse(status: 503, headers: [:], body: Data()) }
                await inFlight.enter()
                var cancelled: (any Error)?
                do { try await Task.sleep(for: delay) } catch { cancelled = error }
                await inFlight.leave()
                if let cancelled { throw cancelled }
            }
            return try await next.send(request)
        }
    }

    /// The wallet's answer to a fresh request of a companion whose status lists come through `transport`,
    /// fetched within `timeout` seconds: the steps, the link it opens, and how long the post took.
    static func present(
        _ issuer: EmulatedIssuer, transport: SlowStatusList, timeout: Double, query: DCQLQuery = EmulatedWalletTests.query,
        fault: EmulatedWallet.Fault? = nil, _ body: (CompanionRig, CompanionClient, EmulatedWallet.Answer, Duration) async throws -> Void
    ) async throws {
        // Entry 0 of the issuer's list, VALID: the list is read for every credential the wallet presents.
        let wallet = try EmulatedWallet(issuer: issuer, statusIndex: 0)
        try await EmulatedWalletTests.with(
            trusting: issuer.authority.rootPEM, query: query, transport: transport,
            change: { configuration, _ in configuration.wallet?.statusListTimeout = timeout }
        ) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let started = try await client.startPresentation(binding: CompanionRig.binding, wallet: .openID4VP, now: Date())
            let clock = ContinuousClock()
            let begun = clock.now
            let answer = await wallet.answer(started.authorizationURL, decision: .share, fault: fault, transport: rig.transport)
            try await body(rig, client, answer, clock.now - begun)
        }
    }

    static func redeemed(_ client: CompanionClient, _ answer: EmulatedWallet.Answer) async throws -> Result<WalletPresentation, SwitchbackError> {
        let code = try #require(answer.next.flatMap(WalletPresentation.responseCode(in:)), "\(answer.steps)")
        do {
            return .success(try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding))
        } catch let error as SwitchbackError {
            return .failure(error)
        }
    }

    /// The code the redeem failed with, nil when it succeeded.
    static func refusal(_ client: CompanionClient, _ answer: EmulatedWallet.Answer) async throws -> SwitchbackError.Code? {
        if case .failure(let error) = try await redeemed(client, answer) { return error.code }
        return nil
    }

    @Test("a slow list that arrives within the timeout: the wallet waits for it and is told the answer is taken; the app gets the claims")
    func slowButInTime() async throws {
        let issuer = try EmulatedIssuer()
        try await Self.present(issuer, transport: SlowStatusList(issuer, delay: .milliseconds(300)), timeout: 5) { _, client, answer, took in
            #expect(answer.steps.contains("the verifier takes the answer and gives a redirect_uri"), "\(answer.steps)")
            #expect(took >= .milliseconds(300), "the verdict waited for the list")
            let presentation = try await Self.redeemed(client, answer).get()
            #expect(presentation.claims("pid")?["given_name"] == "Erika")
        }
    }

    @Test(
        "a list that does not arrive within the timeout, or is not there: the wallet is told the status could not be checked, no later than the timeout; the app gets invalid_presentation",
        arguments: [false, true])
    func statusUnknown(_ unavailable: Bool) async throws {
        let issuer = try EmulatedIssuer()
        let transport = SlowStatusList(issuer, delay: .seconds(30), unavailable: unavailable)
        try await Self.present(issuer, transport: transport, timeout: 0.5) { rig, client, answer, took in
            let told = CompanionService.Refusal.statusUnknown.rawValue
            #expect(answer.steps.contains("the verifier refuses the answer (HTTP 400); the wallet shows \"\(told)\""), "\(answer.steps)")
            // The list is held back 30 s: an answer well before that did not wait for it (the bound is loose, for
            // a loaded machine running the whole suite at once).
            #expect(took < .seconds(20), "the wallet waited \(took) for a list the timeout of 0.5 s gives up on")
            let refused = try await Self.refusal(client, answer)
            #expect(refused == .presentationInvalid)
            let line = rig.log.all.first { $0.contains("presentation refused") } ?? ""
            #expect(line.contains(unavailable ? "HTTP 503" : "did not arrive within"), "\(line)")
        }
    }

    @Test("a revoked credential whose list is slow: the wallet is told it is revoked; the app gets invalid_presentation")
    func revoked() async throws {
        let issuer = try EmulatedIssuer()
        try await Self.present(issuer, transport: SlowStatusList(issuer, delay: .milliseconds(200)), timeout: 5, fault: .revoked) {
            _, client, answer, _ in
            let told = CompanionService.Refusal.revoked.rawValue
            #expect(answer.steps.contains("the verifier refuses the answer (HTTP 400); the wallet shows \"\(told)\""), "\(answer.steps)")
            let refused = try await Self.refusal(client, answer)
            #expect(refused == .presentationInvalid)
        }
    }

    @Test("two credentials, two slow lists: read at once, so the wallet's wait is one list's, not the sum")
    func readAtOnce() async throws {
        let issuer = try EmulatedIssuer()
        let query = DCQLQuery(credentials: EmulatedWalletTests.query.credentials + EmulatedWalletMDocTests.query.credentials)
        let transport = SlowStatusList(issuer, delay: .milliseconds(500))
        try await Self.present(issuer, transport: transport, timeout: 10, query: query) { _, client, answer, took in
            #expect(await transport.inFlight.most == 2, "both lists were being fetched at once")
            #expect(took >= .milliseconds(500), "the wallet waited \(took)")
            let presentation = try await Self.redeemed(client, answer).get()
            #expect(Set(presentation.credentials.keys) == ["pid", "mdl"])
        }
    }
}
