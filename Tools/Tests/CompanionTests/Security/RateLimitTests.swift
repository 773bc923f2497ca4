import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// The rate limits as an attacker meets them (issue 50): one network that holds many addresses, a flood of
/// distinct addresses, a flood of one route, and flows already in progress while the instance is busy.
/// Each test fails on the limiter before the redesign (one bucket per /64 or IPv4 address, one bucket for
/// every route, and new addresses unlimited once 10 000 were tracked).
///
/// The floods are tight loops over an actor that is never contended, so they would hold a thread of the
/// cooperative pool (two, on two cores) for their whole run and stall every other test's HTTP: the suite
/// runs one test at a time, and each loop yields between bursts.
@Suite("Rate limits", .serialized)
struct RateLimitTests {
    static let start = RateLimiter.Route(name: "POST /bridge/start", kind: .start, answersKnown: false)
    static let otherStart = RateLimiter.Route(name: "POST /exchange/start", kind: .start, answersKnown: false)
    static let flow = RateLimiter.Route(name: "GET /wallet/request/{state}", kind: .flow, answersKnown: true)

    static func address(_ text: String) -> ClientAddress { ClientAddress(text)! }

    /// `count` IPv4 addresses, each in a /24 of its own.
    static func spreadIPv4(_ count: Int, offset: Int = 0) -> [ClientAddress] {
        (0..<count).map { index in
            let n = index + offset
            return ClientAddress("\(11 + n / 65_536).\(n / 256 % 256).\(n % 256).9")!
        }
    }

    @Test("one client cycling the 256 /64s of its /56 gets the /56's budget, and a client elsewhere is never refused")
    func delegationCycling() async {
        // The review's reproduction, with the defaults: 30 a minute per address, 1 200 for the instance.
        let clock = ManualClock()
        let limiter = RateLimiter(perAddress: 30, global: 1200, clock: clock)
        var attacker = (allowed: 0, refused: 0)
        var legitimate = (allowed: 0, refused: 0)
        // 20 seconds: the attacker sends 640 requests a second, a /64 at a time; the legitimate client one
        // every two seconds from another network.
        for tick in 0..<200 {
            for burst in 0..<64 {
                let subnet = (tick * 64 + burst) % 256
                let decision = await limiter.admit(Self.address("2001:db8:aa:\(String(subnet, radix: 16))::1"), route: Self.start)
                if decision == .allowed { attacker.allowed += 1 } else { attacker.refused += 1 }
            }
            if tick % 20 == 0 {
                let decision = await limiter.admit(Self.address("2001:db8:bb:1::7"), route: Self.start)
                if decision == .allowed { legitimate.allowed += 1 } else { legitimate.refused += 1 }
            }
            clock.advance(by: 0.1)
            await Task.yield()
        }
        #expect(legitimate == (10, 0), "the other network's client: \(legitimate)")
        // The /56 holds 4 × 30 and refills 120 a minute: at most 160 in 20 s, where 256 /64s of 30 each
        // (the old limiter) would have taken the instance's whole 1 200 and more.
        #expect(attacker.allowed <= 161, "\(attacker)")
        #expect(attacker.allowed >= 150, "the /56's budget is spent, not less: \(attacker)")
    }

    @Test("a /48's many /56s share the /48's budget; an IPv4 /24 shares a softer one")
    func coarserTiers() async {
        let clock = ManualClock()
        let limiter = RateLimiter(perAddress: 10, global: 0, clock: clock)
        var allowed = 0
        for subnet in 0..<256 {
            for _ in 0..<10 where await limiter.admit(Self.address("2001:db8:cc:\(String(subnet, radix: 16))00::1"), route: Self.start) == .allowed {
                allowed += 1
            }
        }
        #expect(allowed == 160, "16 × 10 for the /48: \(allowed)")
        var fromOneBlock = 0
        for host in 1...255 where await limiter.admit(Self.address("198.51.100.\(host)"), route: Self.start) == .allowed { fromOneBlock += 1 }
        #expect(fromOneBlock == 80, "8 × 10 for the /24: \(fromOneBlock)")
        // One address alone still gets its own 10.
        var single = 0
        for _ in 0..<20 where await limiter.admit(Self.address("203.0.113.5"), route: Self.start) == .allowed { single += 1 }
        #expect(single == 10)
    }

    @Test("no address escapes its limit because many others were seen: a spent client stays refused through a flood of 60 000 new ones")
    func noEscapeWhenFull() async {
        let clock = ManualClock()
        let limiter = RateLimiter(perAddress: 5, global: 0, clock: clock)
        let spent = Self.address("203.0.113.77")
        for _ in 0..<5 { _ = await limiter.admit(spent, route: Self.start) }
        #expect(await limiter.admit(spent, route: Self.start) != .allowed)
        for (index, client) in Self.spreadIPv4(60_000).enumerated() {
            _ = await limiter.admit(client, route: Self.start)
            if index % 500 == 0 { await Task.yield() }
        }
        #expect(await limiter.admit(spent, route: Self.start) != .allowed, "forgotten in the flood")
        // A newcomer after the flood is counted like any other: refused after five. (A newcomer whose counters
        // were all touched by the flood may get one fewer: shared counters err towards refusing.)
        let newcomer = Self.address("192.0.2.200")
        var admitted = 0
        for _ in 0..<10 where await limiter.admit(newcomer, route: Self.start) == .allowed { admitted += 1 }
        #expect((4...5).contains(admitted), "\(admitted)")
        // A minute later the spent client may start again.
        clock.advance(by: 60)
        #expect(await limiter.admit(spent, route: Self.start) == .allowed)
    }

    @Test("shared counters refuse few innocents: with 10 000 clients at their limit, under 1 % of new clients is refused")
    func sharedCounters() async {
        let clock = ManualClock()
        let limiter = RateLimiter(perAddress: 3, global: 0, clock: clock)
        for (index, client) in Self.spreadIPv4(10_000).enumerated() {
            for _ in 0..<4 { _ = await limiter.admit(client, route: Self.start) }
            if index % 200 == 0 { await Task.yield() }
        }
        var refused = 0
        for client in Self.spreadIPv4(5_000, offset: 100_000) where await limiter.admit(client, route: Self.start) != .allowed { refused += 1 }
        #expect(refused < 50, "\(refused) of 5 000 new clients refused")
    }

    @Test("each route has its own budget for the instance: a flood of one start leaves the others and the flows answerable")
    func perRouteBudgets() async {
        let clock = ManualClock()
        let limiter = RateLimiter(perAddress: 2, global: 100, clock: clock)
        // A spread flood (a client per /24) spends the instance's budget of one start route.
        var flooded = 0
        for client in Self.spreadIPv4(150) where await limiter.admit(client, route: Self.start) == .allowed { flooded += 1 }
        #expect(flooded == 100)
        let client = Self.address("192.0.2.10")
        #expect(await limiter.admit(client, route: Self.start) == .limited(retryAfter: 1))
        #expect(await limiter.admit(client, route: Self.otherStart) == .allowed, "another start route")
        #expect(await limiter.admit(client, route: Self.flow) == .allowed, "a flow in progress")
    }

    @Test("a flow route over the instance's budget answers only what it recognises; a client's own budget still refuses outright")
    func knownFlowsOnly() async {
        let clock = ManualClock()
        let limiter = RateLimiter(perAddress: 2, global: 10, clock: clock)
        // The flow routes' budgets are four times the starts': 40 for the instance, 8 per address.
        var allowed = 0
        for client in Self.spreadIPv4(45) where await limiter.admit(client, route: Self.flow) == .allowed { allowed += 1 }
        #expect(allowed == 40)
        guard case .knownOnly(let retryAfter) = await limiter.admit(Self.address("192.0.2.10"), route: Self.flow) else {
            Issue.record("a flow request over the instance's budget was not left to the handler")
            return
        }
        #expect(retryAfter >= 1)
        let single = Self.address("192.0.2.11")
        var decisions: [RateLimiter.Decision] = []
        for _ in 0..<9 { decisions.append(await limiter.admit(single, route: Self.flow)) }
        #expect(decisions.prefix(8).allSatisfy { if case .knownOnly = $0 { true } else { false } })
        #expect(decisions.last.map { if case .limited = $0 { true } else { false } } == true, "\(decisions)")
    }

    @Test(
        "with App Attest optional, an attested start route over the instance's budget refuses every start: a start without an assertion is not recognisable"
    )
    func optionalAttestationStarts() async throws {
        let authority = try SoftwareAppAttest.Authority()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-attest-root-\(UUID().uuidString).pem")
        try authority.rootPEM.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await CompanionRig.with(change: {
            $0.appAttest = .init(appIDs: [AppAttestTests.appID], required: false, rootCertificateFile: file.path)
            $0.limits.startsPerMinute = 1
            $0.limits.startsPerMinutePerAddress = 0
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            #expect(try await rig.post("/bridge/start", body).response.status == 200)
            #expect(try await rig.post("/bridge/start", body).response.status == 429, "an unattested start over the budget")
        }
    }

    @Test(
        "an app-started /exchange redeems a code nobody here issued: it costs a start, not a flow request, and never reaches the provider past the limit"
    )
    func appCodeExchangeIsAStart() async throws {
        try await CompanionRig.with(change: { $0.limits.startsPerMinutePerAddress = 1 }) { rig in
            let code: [String: Any] = [
                "code": "made-up-code", "code_verifier": String(repeating: "v", count: 43), "redirect_uri": CompanionRig.appRedirect,
                "nonce": "nonce-0123456789abcdef",
            ]
            let first = try await rig.post("/exchange", code)
            #expect(first.response.status != 429, "\(first.json)")
            let second = try await rig.post("/exchange", code)
            #expect(second.response.status == 429, "the network's one start a minute: \(second.json)")
            // A callback for a flow the server started is still a flow request, with its own budget.
            let callback = try await rig.post(
                "/exchange", ["callback_url": "com.example.app:/oauth/callback?code=c&state=s", "binding": CompanionRig.binding])
            #expect(callback.response.status == 400)
        }
    }

    @Test("clients with no readable address share one bucket")
    func unknownAddresses() async {
        let limiter = RateLimiter(perAddress: 2, global: 0, clock: ManualClock())
        #expect(await limiter.admit(nil, route: Self.start) == .allowed)
        #expect(await limiter.admit(nil, route: Self.start) == .allowed)
        #expect(await limiter.admit(nil, route: Self.start) != .allowed)
        #expect(await limiter.admit(Self.address("192.0.2.1"), route: Self.start) == .allowed)
    }
}
