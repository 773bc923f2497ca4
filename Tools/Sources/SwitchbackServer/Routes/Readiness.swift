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
actor Readiness {
    struct Report: Sendable, Equatable {
        enum Part: String, Sendable { case ok, stale, failed, absent }
        var store: Part
        var provider: Part
        var draining = false
        var ready: Bool { !draining && store == .ok && provider != .failed }
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

    init(store: any CompanionStore, provider: ProviderAccess?, clock: any WallClock, timeout: Duration = .seconds(2), reuse: Duration = .seconds(1)) {
        self.store = store
        self.provider = provider
        self.clock = clock
        self.timeout = timeout
        self.reuse = reuse
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
        async let metadataAtHand = within(timeout) {
            if let provider { _ = try await provider.anyClient().metadata() }
        }
        let (storeResult, providerResult) = await (storeAnswers, metadataAtHand)
        let storeOK = (try? storeResult?.get()) != nil
        let providerOK = (try? providerResult?.get()) != nil
        if providerOK, provider != nil { providerSeen = true }
        // Every caller sharing this check sees the same verdict, stale included.
        let providerPart: Report.Part = provider == nil ? .absent : providerOK ? .ok : providerSeen ? .stale : .failed
        return Report(store: storeOK ? .ok : .failed, provider: providerPart)
    }
}
