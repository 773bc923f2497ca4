import Foundation
import InMemoryTracing
import Instrumentation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import Tracing

/// Metrics (Prometheus, on a listener of their own) and traces (swift-distributed-tracing) of real requests,
/// and what never appears in either: tokens, codes, states, sessions, subjects.
@Suite("Companion metrics and traces")
struct ObservabilityTests {
    /// The process's tracer, bootstrapped once (swift-distributed-tracing allows one bootstrap per process);
    /// each test follows its own trace ID.
    static let tracer: InMemoryTracer = {
        let tracer = InMemoryTracer()
        InstrumentationSystem.bootstrap(tracer)
        return tracer
    }()

    static func scrape(_ rig: CompanionRig) async throws -> String {
        let port = try #require(rig.companion.metricsPort)
        let answer = try await rig.get(try #require(URL(string: "http://127.0.0.1:\(port)/metrics")))
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        return answer.text
    }

    @Test(
        "/metrics counts requests by route and status, refusals by reason, events, store and provider calls; it holds no secret and is not on the public port"
    )
    func prometheus() async throws {
        try await CompanionRig.with(returns: .tokens, change: { $0.metrics = .init(host: "127.0.0.1", port: 0) }) { rig in
            let token = try await rig.accessToken()
            let issued = try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: ["Authorization": "Bearer \(token)"])
            let code = try #require(issued.json["handoffotp"] as? String)
            let redeemURL = try #require(issued.json["redeem_url"] as? String)
            let landing = try await rig.followRedeem(try #require(URL(string: redeemURL)))
            let cookie = try #require(landing.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
            _ = try await rig.post("/handoff", [:], headers: ["Authorization": "Bearer forged-token-0123456789"])

            let text = try await Self.scrape(rig)
            for line in [
                #"switchback_requests_total{route="/handoff",method="POST",status="201"} 1"#,
                #"switchback_requests_total{route="/handoff",method="POST",status="401"} 1"#,
                #"switchback_refusals_total{route="/handoff",reason="invalid_token"} 1"#,
                #"switchback_events_total{event="handoff_issued"} 1"#,
                #"switchback_events_total{event="handoff_redeemed"} 1"#,
                #"switchback_events_total{event="session_issued"} 1"#,
                #"switchback_events_total{event="sign_in_completed"} 1"#,
            ] {
                #expect(text.contains(line), "missing: \(line)")
            }
            #expect(text.contains(#"switchback_store_duration_seconds_count{operation="insert",outcome="ok"}"#))
            #expect(text.contains(#"switchback_provider_duration_seconds_count{host="127.0.0.1",status="200"}"#))
            #expect(text.contains(#"switchback_request_duration_seconds_bucket{route="/exchange",method="POST""#))
            for secret in [token, code, cookie, String(cookie.split(separator: "=").last ?? ""), "9b1f7c2e-alice", CompanionRig.binding] {
                #expect(!text.contains(secret), "a secret in the metrics")
            }
            #expect(try await rig.get(rig.url("/metrics")).status == 404, "metrics are not served on the public listener")
        }
    }

    @Test("the rate-limit hits are refusals with their own reason")
    func rateLimitHits() async throws {
        try await CompanionRig.with(change: {
            $0.metrics = .init(host: "127.0.0.1", port: 0)
            $0.limits.startsPerMinutePerAddress = 1
        }) { rig in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            _ = try await rig.post("/bridge/start", body)
            #expect(try await rig.post("/bridge/start", body).response.status == 429)
            let text = try await Self.scrape(rig)
            #expect(text.contains(#"switchback_refusals_total{route="/bridge/start",reason="rate_limited"} 1"#), "\(text)")
        }
    }

    @Test("a request's server span continues the caller's trace; store and provider calls are its children; no span carries a secret or a query")
    func traces() async throws {
        let tracer = Self.tracer
        try await CompanionRig.with(returns: .tokens) { rig in
            let token = try await rig.accessToken()
            let traceID = "trace-\(UUID().uuidString)"
            let issued = try await rig.post(
                "/handoff", ["goto": CompanionRig.webApp],
                headers: ["Authorization": "Bearer \(token)", InMemoryTracer.traceIDKey: traceID, InMemoryTracer.spanIDKey: "caller-span"])
            let code = try #require(issued.json["handoffotp"] as? String)
            // The server span ends after the answer is written: give it a moment.
            var spans: [FinishedInMemorySpan] = []
            for _ in 0..<1000 {
                spans = tracer.finishedSpans.filter { $0.traceID == traceID }
                if spans.contains(where: { $0.operationName == "POST /handoff" }) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let server = try #require(spans.first { $0.operationName == "POST /handoff" })
            #expect(server.kind == .server)
            #expect(server.parentSpanID == "caller-span", "the caller's span is the parent")
            let children = spans.filter { $0.parentSpanID == server.spanID }
            #expect(children.contains { $0.operationName == "store.insert" && $0.kind == .client })
            #expect(children.contains { $0.operationName == "provider POST" && $0.kind == .client }, "the introspection request")
            for span in spans {
                let shown = "\(span.operationName) \(span.attributes)"
                for secret in [token, code, "9b1f7c2e-alice", "backend-secret"] {
                    #expect(!shown.contains(secret), "\(span.operationName) shows a secret")
                }
                #expect(span.attributes["url.query"] == nil && span.attributes["url.path"] == nil, "\(shown)")
            }
        }
    }

    @Test("the host label names at most 32 hosts: a 33rd and later ones, however many, are counted as other")
    func hostLabelsBounded() {
        let metrics = CompanionMetrics.prometheus()
        for index in 0..<40 {
            metrics.providerCall(host: "status-\(index).example", status: 200, since: .now)
        }
        metrics.providerCall(host: "status-0.example", status: 200, since: .now)
        let text = String(decoding: metrics.exposition(), as: UTF8.self)
        let named = Set((0..<40).filter { text.contains(#"host="status-\#($0).example""#) })
        #expect(named == Set(0..<CompanionMetrics.Handles.hostLabels), "the first 32, by name: \(named.sorted())")
        #expect(text.contains(#"switchback_provider_duration_seconds_count{host="other",status="200"} 8"#), "\(text.prefix(2000))")
        #expect(text.contains(#"switchback_provider_duration_seconds_count{host="status-0.example",status="200"} 2"#), "a known host stays itself")
    }
}
