import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Whether this instance should be sent traffic (`GET /ready`): its store answers, the provider's metadata
/// is at hand (cached, or fetched now), and it is not draining for a shutdown.
///
/// A provider that stops answering after this instance has once read its metadata makes the part
/// `stale`, not `failed`: the instance stays ready, because an outage of the provider would otherwise take
/// every instance out of the load balancer at once, with the routes that do not need the provider (a
/// hand-off's redeem, sessions, logout, a completion's status).
///
/// The route is anonymous, so a flood of it must not become a flood of the database or the provider: one
/// check runs at a time, every request arriving meanwhile shares its answer, and an answer is reused for
/// ``reuse``. Each check is bounded by ``timeout``: a store that hangs makes the instance not ready, not
/// the request hang.
///
/// A fetch of the provider's metadata that outlasts ``timeout`` is not cancelled: the check answers
/// `pending`, and the next check waits on the same fetch. A provider that takes longer than the bound to
/// answer (a slow network, a loaded host) still makes the instance ready once it has, where cancelling
/// and starting over at every probe would keep it out of the load balancer for good. A fetch still under
/// way after ``fetchLimit`` is cancelled and the next check starts another, whatever the transport's own
/// deadline.
actor Readiness {
    struct Report: Sendable, Equatable {
        enum Part: String, Sendable { case ok, stale, pending, failed, absent }
        var store: Part
        var provider: Part
        var draining = false
        var ready: Bool { !draining && store == .ok && provider != .failed && provider != .pending }
        var status: String { draining ? "draining" : ready ? "ready" : "unavailable" }
    }

    private let store: any CompanionStore
    private let provider: ProviderAccess?
    private let clock: any WallClock
    let timeout: Duration
    let reuse: Duration
    private var draining = false
    private var last: (at: ContinuousClock.Instant, report: Report)?
    private var running: Task<Report, Never>?
    /// Whether the provider's metadata was read once.
    private var providerSeen = false
    /// The fetch of the provider's metadata under way, kept from a check that gave up waiting on it.
    private var metadataFetch: (task: Task<Void, any Error>, began: ContinuousClock.Instant)?
    /// How long a kept fetch may stay under way before a check cancels it and starts another.
    let fetchLimit: Duration

    init(
        store: any CompanionStore, provider: ProviderAccess?, clock: any WallClock, timeout: Duration = .seconds(2), reuse: Duration = .seconds(1),
        fetchLimit: Duration = .seconds(30)
    ) {
        self.store = store
        self.provider = provider
        self.clock = clock
        self.timeout = timeout
        self.reuse = reuse
        self.fetchLimit = fetchLimit
    }

    /// From now on the instance answers not ready, so a load balancer stops sending it new requests.
    func beginDraining() { draining = true }

    func report() async -> Report {
        // Draining, the last parts seen are shown, and nothing is checked any more.
        var report = draining ? (last?.report ?? Report(store: .absent, provider: .absent)) : await current()
        report.draining = draining
        return report
    }

    /// The last answer while it is fresh, the check under way, or a new check.
    private func current() async -> Report {
        if let last, ContinuousClock.now - last.at < reuse { return last.report }
        if let running { return await running.value }
        let check = Task { await self.check() }
        running = check
        let report = await check.value
        running = nil
        last = (ContinuousClock.now, report)
        return report
    }

    private func check() async -> Report {
        let store = self.store
        let provider = self.provider
        let now = clock.now()
        // An indexed read of a key no record has: the connection and the table answer, nothing is written.
        async let storeAnswers = within(timeout) { _ = try await store.read(.session, digest: "readiness-probe", now: now) }
        if let kept = metadataFetch, ContinuousClock.now - kept.began > fetchLimit {
            kept.task.cancel()
            metadataFetch = nil
        }
        // Its own task, so that giving up on it (`within` cancels what it waited on) leaves it running.
        if let provider, metadataFetch == nil {
            metadataFetch = (Task { _ = try await provider.anyClient().metadata() }, ContinuousClock.now)
        }
        let fetch = metadataFetch?.task
        async let metadataAtHand = within(timeout) { try await fetch?.value }
        let (storeResult, providerResult) = await (storeAnswers, metadataAtHand)
        // A fetch that ended, either way, is not waited on again: the next check asks anew (from the cache
        // while it is fresh).
        if providerResult != nil { metadataFetch = nil }
        let storeOK = (try? storeResult?.get()) != nil
        let providerOK = (try? providerResult?.get()) != nil
        if providerOK, provider != nil { providerSeen = true }
        // Every caller sharing this check sees the same verdict, stale included.
        let providerPart: Report.Part =
            if provider == nil { .absent } else if providerOK { .ok } else if providerSeen { .stale } else if providerResult == nil { .pending } else
            { .failed }
        return Report(store: storeOK ? .ok : .failed, provider: providerPart)
    }
}
