import Foundation
import Logging
import PostgresNIO
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// A store in front of a real one whose change listener never hears a change and starts listening again
/// each time the test says so, as after a lost database connection.
final class RestartingListenerStore: ForwardingStore, Sendable {
    let inner: any CompanionStore
    private let restarts: AsyncStream<Void>
    private let trigger: AsyncStream<Void>.Continuation

    init(_ inner: any CompanionStore) {
        self.inner = inner
        (restarts, trigger) = AsyncStream.makeStream()
    }

    /// The listener starts again: `started` is called, as by a store that has just run `LISTEN` anew.
    func restart() { trigger.yield() }

    func listen(started: @escaping @Sendable () async -> Void, _ changed: @escaping @Sendable (RecordKind, String) async -> Void) async throws {
        for await _ in restarts { await started() }
    }
}

/// A store written against the protocol before `listen(started:_:)`: it implements only `listen(_:)`.
actor OlderListenStore: ForwardingStore {
    let inner: any CompanionStore

    init(_ inner: any CompanionStore) { self.inner = inner }

    func listen(_ changed: @escaping @Sendable (RecordKind, String) async -> Void) async throws {
        await changed(.completion, "announced")
        while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
    }
}

/// How a waiting status request learns of a completion that another instance finished.
@Suite("Completion wake-ups")
struct CompletionWakeTests {
    @Test("a store that implements only the older listen(_:) is still listened to: started runs, then its changes arrive")
    func olderListenForm() async throws {
        let store: any CompanionStore = OlderListenStore(InMemoryCompanionStore())
        let starts = LockedValue(0)
        let (heard, hear) = AsyncStream<String>.makeStream()
        let listening = Task { try await store.listen(started: { starts.withLock { $0 += 1 } }) { _, digest in hear.yield(digest) } }
        defer { listening.cancel() }
        var announcements = heard.makeAsyncIterator()
        #expect(await announcements.next() == "announced")
        #expect(starts.withLock { $0 } == 1)
    }

    @Test(
        "no wake-up is lost between a read and the sleep after it: a waiter just entered reads again first, a signal that finds it awake is kept for its next wait; wakeAll wakes the sleeping"
    )
    func signalWhileAwake() async throws {
        let waiters = CompletionWaiters(limit: 4)
        let ticket = try #require(await waiters.enter("flow"))
        // Each wait below would sleep 15 s if the wake-up were lost; a kept one returns at once.
        func timedWait() async -> Duration {
            let started = ContinuousClock.now
            await waiters.wait("flow", ticket, until: started + .seconds(15), recheck: nil)
            return ContinuousClock.now - started
        }
        #expect(await timedWait() < .seconds(10), "entered: a change since the caller's read reached no one, so it reads first")
        await waiters.signal("flow")  // while the request reads the store
        #expect(await timedWait() < .seconds(10), "the signal was kept for the next wait")
        async let asleep = timedWait()
        try await Attack.waitUntil("the waiter sleeps") { await waiters.sleeping == 1 }
        await waiters.wakeAll()
        #expect(await asleep < .seconds(10), "wakeAll woke it")
        await waiters.leave("flow", ticket)
        #expect(await waiters.count == 0)
    }

    @Test(
        "a completion finished on another instance while this one's listener was down is not missed: when the listener starts again, the waiting status request reads the store"
    )
    func listenerRestartWakesWaiters() async throws {
        // Two instances on one store: the rig's finishes the flow; the other's listener hears nothing
        // (as while its connection was lost) and has no store recheck (the default).
        let shared = InMemoryCompanionStore()
        let listening = RestartingListenerStore(shared)
        try await CompanionRig.with(store: shared) { rig in
            let other = try await Companion.start(
                CompanionRig.configuration(issuer: rig.emulator.issuer), store: listening,
                logger: Logger(label: "other") { _ in SwiftLogNoOpLogHandler() })
            try await withStopping(other, stop: { await $0.stop() }) { other in
                let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                let url = try #require(try await rig.post("/completion/start", ["flow_id": flowID]).json["authorization_url"] as? String)
                let transport = rig.transport
                let waiting = Task { try await Attack.timedStatus(transport, at: other, flowID: flowID, wait: 20) }
                try await Attack.waitUntil("the status request waits") { await other.waiters.count == 1 }
                guard case .redirect(let location) = try await rig.signIn(url) else { throw RigFailure("no redirect") }
                _ = try await rig.get(try #require(URL(string: location)))
                // The announcement reached no one: the request still waits.
                try await Task.sleep(for: .milliseconds(500))
                #expect(await other.waiters.count == 1, "nothing but the listener's restart can wake it before its deadline")
                let restarted = ContinuousClock.now
                listening.restart()
                let (response, elapsed) = try await waiting.value
                #expect(response.status == 202)
                #expect(String(decoding: response.body, as: UTF8.self).contains("awaiting_return"), "it read the finished flow")
                #expect(elapsed < .seconds(15), "woken by the restart, not the 20 s deadline: \(elapsed)")
                #expect(ContinuousClock.now - restarted < .seconds(10))
            }
        }
    }

    @Test(
        "PostgreSQL: started runs once LISTEN is in force (an announcement made from it is heard), and again after the listening connection is killed and replaced",
        .enabled(if: StoreKind.postgresURL != nil || StoreKind.runningInCI))
    func postgresListenerStarts() async throws {
        let url = try #require(StoreKind.postgresURL, "CI=true but SWITCHBACK_TEST_POSTGRES_URL is unset")
        try await StoreKind.postgres.with { store, second in
            let postgres = try #require(store as? PostgresCompanionStore)
            let announcer = try await second()
            let starts = LockedValue(0)
            let (heard, hear) = AsyncStream<String>.makeStream()
            // As the companion listens: again a moment after the connection fails.
            let listening = Task {
                while !Task.isCancelled {
                    try? await store.listen(started: {
                        let count = starts.withLock { count in
                            count += 1
                            return count
                        }
                        try? await announcer.announce(.completion, digest: "started-\(count)")
                    }) { _, digest in hear.yield(digest) }
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            // An announcement never heard ends the wait with nil, not a hung test.
            let watchdog = Task {
                try? await Task.sleep(for: .seconds(60))
                hear.finish()
            }
            defer {
                listening.cancel()
                watchdog.cancel()
            }
            var announcements = heard.makeAsyncIterator()
            #expect(await announcements.next() == "started-1", "announced from started, and heard: LISTEN was in force")

            // The listening connection dies (a failover, an idle-connection reaper): another takes its place.
            let admin = PostgresClient(configuration: try PostgresCompanionStore.configuration(url))
            let running = Task { await admin.run() }
            defer { running.cancel() }
            let rows = try await admin.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = \(#"LISTEN ""# + postgres.channel + #"";"#)",
                logger: Logger(label: "admin") { _ in SwiftLogNoOpLogHandler() })
            var terminated = 0
            for try await (killed) in rows.decode(Bool.self) where killed { terminated += 1 }
            #expect(terminated == 1, "one connection listened on the channel")
            #expect(await announcements.next() == "started-2", "listening again, started ran again, after LISTEN")
            #expect(starts.withLock { $0 } == 2)
        }
    }
}
