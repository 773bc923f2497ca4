import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// A store in front of a real one that counts readiness probes and can be made to hang.
actor ProbedStore: ForwardingStore {
    let inner: any CompanionStore
    private(set) var reads = 0
    var hangs = false
    /// How long each read takes.
    var delay: Duration = .zero

    init(_ inner: any CompanionStore) { self.inner = inner }

    func setHangs(_ value: Bool) { hangs = value }
    func setDelay(_ value: Duration) { delay = value }

    func read(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        reads += 1
        if delay > .zero { try await Task.sleep(for: delay) }
        if hangs {
            // A database that never answers and ignores cancellation.
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
        }
        return try await inner.read(kind, digest: digest, now: now)
    }

}

/// `GET /ready` for a load balancer, and a graceful shutdown that answers the waiting requests first.
@Suite("Companion readiness and shutdown")
struct ReadinessTests {
    static func ready(_ rig: CompanionRig) async throws -> (status: Int, json: [String: Any]) {
        let response = try await rig.get(rig.url("/ready"))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    /// `GET /ready` until it answers 200, for at most 30 s. The first check fetches the provider's metadata,
    /// which a loaded machine can take longer than the check's 2 s to do: that check answers pending, and a
    /// later one sees the same fetch end.
    static func readyOnceWarm(_ rig: CompanionRig) async throws -> (status: Int, json: [String: Any]) {
        let deadline = ContinuousClock.now + .seconds(30)
        var answer = try await ready(rig)
        while answer.status != 200, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            answer = try await ready(rig)
        }
        return answer
    }

    @Test("ready when the store answers and the provider's metadata is at hand; 503 naming the provider when it cannot be reached")
    func readyAndProviderDown() async throws {
        try await CompanionRig.with { rig in
            let answer = try await Self.readyOnceWarm(rig)
            #expect(answer.status == 200)
            #expect(answer.json["status"] as? String == "ready")
            #expect(answer.json["store"] as? String == "ok" && answer.json["provider"] as? String == "ok")
            #expect(try await rig.get(rig.url("/ready")).headers["cache-control"]?.contains("no-store") == true)
        }
        // No metadata fetched yet, and the provider is gone: not ready, and the answer says which part.
        try await CompanionRig.with { rig in
            await rig.emulator.stop()
            var answer = try await Self.ready(rig)
            #expect(answer.status == 503)
            #expect(answer.json["status"] as? String == "unavailable")
            #expect(answer.json["store"] as? String == "ok")
            // The HTTP client retries a refused connection until its connect timeout (10 s), which is longer
            // than the check's bound: the part is pending until the fetch gives up, then failed.
            let deadline = ContinuousClock.now + .seconds(30)
            while answer.json["provider"] as? String == "pending", ContinuousClock.now < deadline {
                #expect(answer.status == 503, "not ready while the fetch is under way")
                try await Task.sleep(for: .milliseconds(250))
                answer = try await Self.ready(rig)
            }
            #expect(answer.status == 503)
            #expect(answer.json["provider"] as? String == "failed", "\(answer.json)")
        }
    }

    @Test("a provider that stops answering after its metadata was read makes the part stale, and the instance stays ready")
    func providerStale() async throws {
        try await CompanionRig.with { rig in
            #expect(try await Self.readyOnceWarm(rig).json["provider"] as? String == "ok")
            await rig.emulator.stop()
            rig.clock.advance(by: 3601)  // past the metadata's cache
            try await Task.sleep(for: .milliseconds(1100))  // past the reuse of the last answer
            let answer = try await Self.ready(rig)
            #expect(answer.status == 200 && answer.json["provider"] as? String == "stale", "\(answer.json)")
        }
    }

    @Test("a store that hangs makes the instance unavailable within the check's bound; the request does not hang")
    func hangingStore() async throws {
        let store = ProbedStore(InMemoryCompanionStore())
        try await CompanionRig.with(store: store) { rig in
            #expect(try await Self.readyOnceWarm(rig).status == 200)
            await store.setHangs(true)
            try await Task.sleep(for: .milliseconds(1100))  // past the reuse of the last answer
            let started = ContinuousClock.now
            let answer = try await Self.ready(rig)
            #expect(answer.status == 503)
            #expect(answer.json["store"] as? String == "failed")
            #expect(ContinuousClock.now - started < .seconds(10), "bounded by the 2 s check, not the store")
        }
    }

    @Test("concurrent checks share one probe, and an answer is reused: 50 checks read the store once")
    func checksCoalesce() async throws {
        let store = ProbedStore(InMemoryCompanionStore())
        // Every probe waits until the test lets it go: all the checks arrive while the first is under way
        // (or after it, within the reuse), however loaded the machine is.
        await store.setDelay(.seconds(1))
        let readiness = Readiness(store: store, provider: nil, clock: SystemClock(), timeout: .seconds(60), reuse: .seconds(60))
        let reports = await withTaskGroup(of: Readiness.Report.self) { group in
            for _ in 0..<50 { group.addTask { await readiness.report() } }
            return await group.reduce(into: [Readiness.Report]()) { $0.append($1) }
        }
        #expect(reports.count == 50 && reports.allSatisfy(\.ready))
        #expect(await store.reads == 1)
        await readiness.beginDraining()
        let draining = await readiness.report()
        #expect(!draining.ready && draining.status == "draining")
    }

    /// A provider whose discovery document takes `delays[n]` to arrive for its `n`-th request (the last
    /// delay for any later one), and the readiness of an instance in front of it. Records which requests
    /// were cancelled.
    static func slowProvider(_ delays: [Duration], fetchLimit: Duration = .seconds(30)) async throws -> (Readiness, StubTransport, LockedValue<Int>) {
        let issuer = "https://id.example.test"
        let cancelled = LockedValue(0)
        let asked = LockedValue(0)
        let transport = StubTransport { request in
            let index = asked.withLock { count in
                defer { count += 1 }
                return count
            }
            do {
                try await Task.sleep(for: delays[min(index, delays.count - 1)])
            } catch {
                cancelled.withLock { $0 += 1 }
                throw error
            }
            #expect(request.url.absoluteString == issuer + "/.well-known/openid-configuration")
            return StubTransport.json(
                200,
                """
                {"issuer": "\(issuer)", "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
                 "jwks_uri": "\(issuer)/jwks"}
                """)
        }
        let provider = try await ProviderAccess(
            .init(issuer: issuer, clientID: "backend", clientSecret: "secret"), transport: transport, clock: SystemClock(), entropy: SystemEntropy(),
            logger: Logger(label: "test"))
        let readiness = Readiness(
            store: InMemoryCompanionStore(), provider: provider, clock: SystemClock(), timeout: .milliseconds(200), reuse: .zero,
            fetchLimit: fetchLimit)
        return (readiness, transport, cancelled)
    }

    /// Reports until the provider's part is `ok`, for at most 90 s; the parts seen on the way, in order, once
    /// each. The bound is wide because each report is a dozen task hops, and while the whole suite runs, the
    /// two threads of Swift's pool can keep a hop waiting for seconds; it only matters when the test fails.
    static func untilProviderOK(_ readiness: Readiness) async throws -> [Readiness.Report.Part] {
        let began = ContinuousClock.now
        let deadline = began + .seconds(90)
        var seen: [Readiness.Report.Part] = []
        var reports = 0
        while ContinuousClock.now < deadline {
            let part = await readiness.report().provider
            reports += 1
            if seen.last != part { seen.append(part) }
            if part == .ok { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        if seen.last != .ok { print("untilProviderOK: \(reports) reports in \(ContinuousClock.now - began): \(seen)") }
        return seen
    }

    @Test(
        "a provider slower than the check's bound: the check answers pending (not ready) and later checks wait on the same fetch, which makes the instance ready"
    )
    func slowProviderBecomesReady() async throws {
        let (readiness, transport, cancelled) = try await Self.slowProvider([.milliseconds(1200)])
        let first = await readiness.report()
        #expect(first.provider == .pending && !first.ready && first.status == "unavailable")
        // Pending until the fetch ends (a loaded machine may let it end before the next look), never failed.
        let seen = try await Self.untilProviderOK(readiness)
        #expect(seen.last == .ok && seen.allSatisfy { $0 == .pending || $0 == .ok }, "\(seen)")
        #expect(await readiness.report().ready)
        // Cancelling at each check's bound and asking again would never reach the 1.2 s the answer takes.
        #expect(transport.requests.count == 1, "one fetch, kept across the checks: \(transport.requests.count)")
        #expect(cancelled.withLock { $0 } == 0)
    }

    @Test("a fetch of the provider's metadata still under way after fetchLimit is cancelled, and the next check asks again")
    func hungFetchReplaced() async throws {
        let (readiness, transport, cancelled) = try await Self.slowProvider([.seconds(600), .zero], fetchLimit: .seconds(1))
        let seen = try await Self.untilProviderOK(readiness)
        #expect(seen == [.pending, .ok], "\(seen)")
        #expect(transport.requests.count == 2)
        #expect(cancelled.withLock { $0 } == 1, "the hung request was cancelled")
    }

    @Test(
        "a graceful shutdown stops listening at once, lets a request in flight run for limits.shutdownGrace, then cancels it; the stop does not wait for the store"
    )
    func shutdownDrainsWithinGrace() async throws {
        let store = ProbedStore(InMemoryCompanionStore())
        let rig = try await CompanionRig.start(store: store, change: { $0.limits.shutdownGrace = 2 })
        #expect(try await rig.get(rig.url("/health")).status == 200)
        // A request in flight: its session read takes a minute, far past the grace.
        await store.setDelay(.seconds(60))
        let session = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
        let url = rig.url("/session")
        let transport = rig.transport
        let inFlight = Task {
            let started = ContinuousClock.now
            let answer: Result<HTTPResponse, any Error>
            do {
                answer = .success(try await transport.send(HTTPRequest(method: .get, url: url, headers: ["Authorization": "Session \(session)"])))
            } catch {
                answer = .failure(error)
            }
            return (answer, ContinuousClock.now - started)
        }
        try await Attack.waitUntil("the request reads the store") { await store.reads >= 1 }
        let stopping = ContinuousClock.now
        let stop = Task { await rig.companion.stop() }
        // The listening socket goes at the shutdown's start, while the request still runs. Read from the
        // kernel's socket table, not by connecting: a connection accepted during the shutdown and cancelled
        // at the grace's end before the server took it trips NIO's trap (swift-nio#3481, Deployment.md).
        #if os(Linux)
            let port = rig.companion.port
            var closedAfter: Duration?
            while ContinuousClock.now - stopping < .seconds(10) {
                if !Self.listening(port: port) {
                    closedAfter = ContinuousClock.now - stopping
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        #endif
        let (answer, requestTook) = await inFlight.value
        await stop.value
        let stopTook = ContinuousClock.now - stopping
        await rig.emulator.stop()
        #if os(Linux)
            let closed = try #require(closedAfter, "still listening 10 s into the shutdown")
            #expect(closed < requestTook, "stopped listening while the request still ran: \(closed), the request \(requestTook)")
        #endif
        // Cancelled at the grace: not answered from the store, which would have taken a minute.
        if case .success(let response) = answer { #expect(response.status != 200, "no answer from a cancelled request") }
        #expect(requestTook < .seconds(30), "the request ended at the grace, not after its minute: \(requestTook)")
        #expect(stopTook >= .milliseconds(1500), "the request had its grace: \(stopTook)")
        #expect(stopTook < .seconds(30), "the stop ended within the grace and the cancellation's bound: \(stopTook)")
    }

    #if os(Linux)
        /// Whether a socket listens on `port` (any address), from /proc/net/tcp and tcp6: state 0A.
        static func listening(port: Int) -> Bool {
            let wanted = String(format: ":%04X", port)
            return ["/proc/net/tcp", "/proc/net/tcp6"].contains { table in
                guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { return false }
                return text.split(separator: "\n").dropFirst().contains { line in
                    let fields = line.split(separator: " ")
                    return fields.count > 3 && fields[1].hasSuffix(wanted) && fields[3] == "0A"
                }
            }
        }
    #endif

    @Test("a graceful shutdown answers a waiting status request (pending, so the app asks again) instead of holding it through the grace")
    func shutdownAnswersWaiters() async throws {
        let rig = try await CompanionRig.start(change: { $0.limits.shutdownGrace = 20 })
        let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
        let started = try await rig.post("/completion/start", ["flow_id": flowID])
        #expect(started.response.status == 200)
        async let waiting = rig.post("/completion/status", ["flow_id": flowID, "wait": 25])
        try await Attack.waitUntil("the status request waits") { await rig.companion.waiters.count == 1 }
        let stopping = ContinuousClock.now
        await rig.companion.stop()
        let answer = try await waiting
        let elapsed = ContinuousClock.now - stopping
        await rig.emulator.stop()
        // Without the drain the server would hold the request through the 20 s grace and then cancel it: no
        // answer at all. The timing bound leaves a loaded machine room; the answer itself is the proof.
        #expect(answer.response.status == 202)
        #expect(answer.json["status"] as? String == "pending")
        #expect(elapsed < .seconds(20), "answered at the shutdown, within the grace: \(elapsed)")
    }
}
