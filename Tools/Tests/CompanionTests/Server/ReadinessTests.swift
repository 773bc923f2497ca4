import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// A store in front of a real one that counts readiness probes and can be made to hang.
actor ProbedStore: CompanionStore {
    let inner: any CompanionStore
    private(set) var reads = 0
    var hangs = false

    init(_ inner: any CompanionStore) { self.inner = inner }

    func setHangs(_ value: Bool) { hangs = value }

    func read(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        reads += 1
        if hangs {
            // A database that never answers and ignores cancellation.
            await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
        }
        return try await inner.read(kind, digest: digest, now: now)
    }

    func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        try await inner.insert(kind, digest: digest, value: value, expiresAt: expiresAt)
    }
    func take(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? { try await inner.take(kind, digest: digest, now: now) }
    func purge(now: Date) async throws -> Int { try await inner.purge(now: now) }
    func count(_ kind: RecordKind, now: Date) async throws -> Int { try await inner.count(kind, now: now) }
    func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool {
        try await inner.replace(kind, digest: digest, value: value, expiresAt: expiresAt, now: now)
    }
}

/// `GET /ready` for a load balancer, and a graceful shutdown that answers the waiting requests first.
@Suite("Companion readiness and shutdown")
struct ReadinessTests {
    static func ready(_ rig: CompanionRig) async throws -> (status: Int, json: [String: Any]) {
        let response = try await rig.get(rig.url("/ready"))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    @Test("ready when the store answers and the provider's metadata is at hand; 503 naming the provider when it cannot be reached")
    func readyAndProviderDown() async throws {
        try await CompanionRig.with { rig in
            let answer = try await Self.ready(rig)
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

    @Test("a store that hangs makes the instance unavailable within the check's bound, not the request hang; a flood of checks reads the store once")
    func hangingStoreAndFlood() async throws {
        let store = ProbedStore(InMemoryCompanionStore())
        try await CompanionRig.with(store: store) { rig in
            let flood = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<50 { group.addTask { try await Self.ready(rig).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(flood.allSatisfy { $0 == 200 })
            #expect(await store.reads <= 2, "50 concurrent checks share one probe (two when they straddle its reuse window)")

            await store.setHangs(true)
            try await Task.sleep(for: .milliseconds(1100))  // past the reuse of the last answer
            let started = ContinuousClock.now
            let answer = try await Self.ready(rig)
            #expect(answer.status == 503)
            #expect(answer.json["store"] as? String == "failed")
            #expect(ContinuousClock.now - started < .seconds(5), "bounded by the 2 s check, not the store")
        }
    }

    @Test("a graceful shutdown answers a waiting status request at once (pending, so the app asks again) and ends well within the grace")
    func shutdownAnswersWaiters() async throws {
        let rig = try await CompanionRig.start(change: { $0.limits.shutdownGrace = 20 })
        let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
        let started = try await rig.post("/completion/start", ["flow_id": flowID])
        #expect(started.response.status == 200)
        let began = ContinuousClock.now
        async let waiting = rig.post("/completion/status", ["flow_id": flowID, "wait": 25])
        try await Task.sleep(for: .milliseconds(500))  // the request is waiting
        await rig.companion.stop()
        let answer = try await waiting
        let elapsed = ContinuousClock.now - began
        await rig.emulator.stop()
        #expect(answer.response.status == 202)
        #expect(answer.json["status"] as? String == "pending")
        #expect(elapsed < .seconds(10), "answered at the shutdown, not after its 25 s wait: \(elapsed)")
    }
}
