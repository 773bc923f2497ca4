import Foundation
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

    /// `GET /ready` until it answers 200, for at most 30 s. The first check fetches the provider's metadata
    /// within the check's 2 s bound, which a loaded machine can overrun once; the metadata then arrives
    /// for a later check.
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
            let answer = try await Self.ready(rig)
            #expect(answer.status == 503)
            #expect(answer.json["status"] as? String == "unavailable")
            #expect(answer.json["provider"] as? String == "failed")
            #expect(answer.json["store"] as? String == "ok")
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

    @Test("a graceful shutdown answers a waiting status request (pending, so the app asks again) instead of holding it through the grace")
    func shutdownAnswersWaiters() async throws {
        let rig = try await CompanionRig.start(change: { $0.limits.shutdownGrace = 20 })
        let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
        let started = try await rig.post("/completion/start", ["flow_id": flowID])
        #expect(started.response.status == 200)
        async let waiting = rig.post("/completion/status", ["flow_id": flowID, "wait": 25])
        try await CompanionAttackTests.waitUntil("the status request waits") { await rig.companion.waiters.count == 1 }
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
