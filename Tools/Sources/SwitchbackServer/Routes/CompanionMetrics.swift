import CoreMetrics
import Foundation
import Instrumentation
import Prometheus
import Tracing
@_spi(SwitchbackInternals) import Switchback

/// What the companion counts and times (swift-metrics), exported for Prometheus when the configuration has
/// a `metrics` section, else handed to whatever factory the embedding process bootstrapped.
///
/// Every label comes from a small, fixed set: route templates (`/handoff`, never a requested path), status
/// codes, the companion's refusal codes, store operations and outcomes, sign-in routes, event names, the
/// listener and reason of a closed connection, and the hosts the companion calls (the first
/// ``Handles/hostLabels``; any later one is `other`). No token, code, state, flow ID, session or subject is ever a label.
///
/// | name | labels | what |
/// | --- | --- | --- |
/// | `switchback_requests_total` | `route`, `method`, `status` | answered requests |
/// | `switchback_request_duration_seconds` | `route`, `method` | time to answer |
/// | `switchback_refusals_total` | `route`, `reason` | refusals by code (`rate_limited` are the rate-limit hits) |
/// | `switchback_events_total` | `event` | codes issued and redeemed, sign-ins started, completed, failed, sessions, logouts |
/// | `switchback_connections_closed_total` | `listener`, `reason` | connections closed by a limit (``ConnectionCut``) |
/// | `switchback_provider_duration_seconds` | `host`, `status` | each request to the provider |
/// | `switchback_store_duration_seconds` | `operation`, `outcome` | each store call |
struct CompanionMetrics: Sendable {
    let factory: any MetricsFactory
    /// The registry `GET /metrics` prints, when the companion exports metrics itself.
    let registry: PrometheusCollectorRegistry?
    /// False when nothing would receive the figures (no `metrics` section, nothing bootstrapped): every
    /// call returns at once, so that an unobserved companion pays nothing for them.
    let enabled: Bool
    /// Whether a tracer was bootstrapped: without one, no span is made (swift-distributed-tracing's no-op
    /// tracer would still cost a context and a span per call).
    let tracing: Bool
    private let handles = Handles()

    init(factory: any MetricsFactory, registry: PrometheusCollectorRegistry?, tracing: Bool = !(InstrumentationSystem.tracer is NoOpTracer)) {
        self.factory = factory
        self.registry = registry
        self.enabled = registry != nil || !(factory is NOOPMetricsHandler)
        self.tracing = tracing
    }

    /// Exported on the companion's own metrics listener.
    static func prometheus() -> CompanionMetrics {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Seconds, from a loopback request to a slow provider call.
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30),
        ]
        return CompanionMetrics(factory: factory, registry: registry)
    }

    /// Whatever the process bootstrapped (`MetricsSystem.bootstrap`); a no-op unless it did.
    static func bootstrapped() -> CompanionMetrics {
        CompanionMetrics(factory: MetricsSystem.factory, registry: nil)
    }

    func request(route: String, method: String, status: Int, since start: ContinuousClock.Instant) {
        guard enabled else { return }
        handles.counter(.init(.requests, route, method, status)) {
            CoreMetrics.Counter(
                label: "switchback_requests_total", dimensions: [("route", route), ("method", method), ("status", "\(status)")], factory: factory)
        }.increment()
        handles.timer(.init(.requestDuration, route, method)) {
            CoreMetrics.Timer(label: "switchback_request_duration_seconds", dimensions: [("route", route), ("method", method)], factory: factory)
        }.recordNanoseconds(Self.nanoseconds(since: start))
    }

    func refused(route: String, reason: String) {
        guard enabled else { return }
        handles.counter(.init(.refusals, route, reason)) {
            CoreMetrics.Counter(label: "switchback_refusals_total", dimensions: [("route", route), ("reason", reason)], factory: factory)
        }.increment()
    }

    /// A named event, from ``Event``.
    func record(_ event: Event) {
        guard enabled else { return }
        handles.counter(.init(.events, event.rawValue)) {
            CoreMetrics.Counter(label: "switchback_events_total", dimensions: [("event", event.rawValue)], factory: factory)
        }.increment()
    }

    /// A connection closed by one of the limits ``ConnectionGuard`` keeps, on the public listener or the
    /// metrics one.
    func connectionClosed(_ cut: ConnectionCut, listener: Listener) {
        guard enabled else { return }
        handles.counter(.init(.connections, listener.rawValue, cut.rawValue)) {
            CoreMetrics.Counter(
                label: "switchback_connections_closed_total", dimensions: [("listener", listener.rawValue), ("reason", cut.rawValue)],
                factory: factory)
        }.increment()
    }

    func providerCall(host requested: String, status: Int?, since start: ContinuousClock.Instant) {
        guard enabled else { return }
        let host = handles.hostLabel(requested)
        let shown = status.map { "\($0)" } ?? "failed"
        handles.timer(.init(.provider, host, shown)) {
            CoreMetrics.Timer(label: "switchback_provider_duration_seconds", dimensions: [("host", host), ("status", shown)], factory: factory)
        }.recordNanoseconds(Self.nanoseconds(since: start))
    }

    func storeCall(_ operation: String, failed: Bool, since start: ContinuousClock.Instant) {
        guard enabled else { return }
        let outcome = failed ? "error" : "ok"
        handles.timer(.init(.store, operation, outcome)) {
            CoreMetrics.Timer(
                label: "switchback_store_duration_seconds", dimensions: [("operation", operation), ("outcome", outcome)], factory: factory)
        }.recordNanoseconds(Self.nanoseconds(since: start))
    }

    /// Each counter and timer made once and kept: a request looks its handles up (one lock, no allocation)
    /// instead of building label arrays and asking the factory every time. The keys come from fixed sets.
    final class Handles: Sendable {
        struct Key: Hashable {
            enum Name: UInt8 { case requests, requestDuration, refusals, events, connections, provider, store }
            let name: Name
            let first: String
            let second: String
            let code: Int

            init(_ name: Name, _ first: String, _ second: String = "", _ code: Int = 0) {
                self.name = name
                self.first = first
                self.second = second
                self.code = code
            }
        }

        private let counters = LockedValue<[Key: CoreMetrics.Counter]>([:])
        private let timers = LockedValue<[Key: CoreMetrics.Timer]>([:])
        private let hosts = LockedValue<Set<String>>([])

        /// The most hosts `switchback_provider_duration_seconds` names one by one. The provider's hosts come
        /// from its metadata, but a credential's status list, and a redirect from it, can name any host; past
        /// this many, a new host is counted as `other`, so that no input grows the registry without bound.
        static let hostLabels = 32

        /// `host` as a label: itself while fewer than ``hostLabels`` hosts have been seen, else `other`.
        func hostLabel(_ host: String) -> String {
            hosts.withLock { seen in
                if seen.contains(host) { return host }
                guard seen.count < Self.hostLabels else { return "other" }
                seen.insert(host)
                return host
            }
        }

        func counter(_ key: Key, _ make: () -> CoreMetrics.Counter) -> CoreMetrics.Counter { Self.kept(key, in: counters, make) }

        func timer(_ key: Key, _ make: () -> CoreMetrics.Timer) -> CoreMetrics.Timer { Self.kept(key, in: timers, make) }

        /// The handle under `key`, made by `make` the first time.
        private static func kept<Handle>(_ key: Key, in handles: LockedValue<[Key: Handle]>, _ make: () -> Handle) -> Handle {
            handles.withLock { kept in
                if let handle = kept[key] { return handle }
                let handle = make()
                kept[key] = handle
                return handle
            }
        }
    }

    /// The Prometheus text exposition of everything recorded.
    func exposition() -> [UInt8] {
        registry?.emitToBuffer() ?? []
    }

    private static func nanoseconds(since start: ContinuousClock.Instant) -> Int64 {
        let elapsed = (ContinuousClock.now - start).components
        return elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
    }

    /// What `switchback_events_total` counts.
    enum Event: String, Sendable {
        case signInStarted = "sign_in_started"
        case signInCompleted = "sign_in_completed"
        case signInFailed = "sign_in_failed"
        case sessionIssued = "session_issued"
        case sessionEnded = "session_ended"
        case handOffIssued = "handoff_issued"
        case handOffRedeemed = "handoff_redeemed"
        case bridgeCodeIssued = "bridge_code_issued"
        case bridgeCodeRedeemed = "bridge_code_redeemed"
        case backChannelLogout = "backchannel_logout"
        case revocation = "token_revoked"
        case keyAttested = "app_attest_key_attested"
        case attestationRefused = "app_attest_refused"
        case playIntegrityRefused = "play_integrity_refused"
        case presentationVerified = "presentation_verified"
        case presentationRefused = "presentation_refused"
    }

    /// Why `switchback_connections_closed_total` counts a connection.
    enum ConnectionCut: String, Sendable {
        /// Closed as soon as it was accepted: the listener's cap (`limits.maxConnections`, or the metrics
        /// listener's 16) were open.
        case overCap = "over_cap"
        /// A request's body did not arrive within `limits.bodyTimeout`.
        case bodyTimeout = "body_timeout"
        /// Its client read none of an answer for `limits.writeTimeout`.
        case writeTimeout = "write_timeout"
    }

    /// Which of the companion's listeners a connection came to.
    enum Listener: String, Sendable {
        case `public`
        case metrics
    }
}
