import Foundation
import Tracing
@_spi(SwitchbackInternals) import Switchback

/// The companion's store, timed (``CompanionMetrics``) and traced (a client span per call, swift-distributed-tracing):
/// the span names the operation and the record kind, never a digest or a value.
struct InstrumentedStore: CompanionStore {
    let inner: any CompanionStore
    let metrics: CompanionMetrics

    var recordKeys: RecordKeys { inner.recordKeys }

    private func measure<T: Sendable>(_ operation: String, _ kind: RecordKind?, _ body: () async throws -> T) async throws -> T {
        guard metrics.enabled || metrics.tracing else { return try await body() }
        guard metrics.tracing else { return try await timed(operation, body) }
        return try await withSpan("store." + operation, ofKind: .client) { span in
            span.attributes["db.operation.name"] = operation
            if let kind { span.attributes["switchback.record_kind"] = kind.rawValue }
            do {
                return try await timed(operation, body)
            } catch {
                span.setStatus(SpanStatus(code: .error))
                throw error
            }
        }
    }

    /// `body`, its duration recorded with its outcome.
    private func timed<T: Sendable>(_ operation: String, _ body: () async throws -> T) async throws -> T {
        let start = ContinuousClock.now
        do {
            let result = try await body()
            metrics.storeCall(operation, failed: false, since: start)
            return result
        } catch {
            metrics.storeCall(operation, failed: true, since: start)
            throw error
        }
    }

    func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        try await measure("insert", kind) { try await inner.insert(kind, digest: digest, value: value, expiresAt: expiresAt) }
    }

    func take(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        let value = try await measure("take", kind) { try await inner.take(kind, digest: digest, now: now) }
        if value != nil { CompanionService.admission?.recognise() }
        return value
    }

    func read(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? {
        let value = try await measure("read", kind) { try await inner.read(kind, digest: digest, now: now) }
        if value != nil { CompanionService.admission?.recognise() }
        return value
    }

    func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool {
        try await measure("replace", kind) { try await inner.replace(kind, digest: digest, value: value, expiresAt: expiresAt, now: now) }
    }

    func purge(now: Date) async throws -> Int {
        try await measure("purge", nil) { try await inner.purge(now: now) }
    }

    func count(_ kind: RecordKind, now: Date) async throws -> Int {
        try await measure("count", kind) { try await inner.count(kind, now: now) }
    }

    func announce(_ kind: RecordKind, digest: String) async throws {
        try await measure("announce", kind) { try await inner.announce(kind, digest: digest) }
    }

    func listen(started: @escaping @Sendable () async -> Void, _ changed: @escaping @Sendable (RecordKind, String) async -> Void) async throws {
        try await inner.listen(started: started, changed)
    }
}

/// The companion's requests to the provider, timed by host and status and traced (a client span naming
/// the method and host; never the path, query or body, which can carry codes, identifiers and secrets).
struct InstrumentedTransport: HTTPTransport {
    let inner: any HTTPTransport
    let metrics: CompanionMetrics

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard metrics.enabled || metrics.tracing else { return try await inner.send(request) }
        let host = request.url.host ?? "?"
        guard metrics.tracing else { return try await timed(request, host: host) }
        return try await withSpan("provider " + request.method.rawValue, ofKind: .client) { span in
            span.attributes["http.request.method"] = request.method.rawValue
            span.attributes["server.address"] = host
            do {
                let response = try await timed(request, host: host)
                span.attributes["http.response.status_code"] = response.status
                if response.status >= 500 { span.setStatus(SpanStatus(code: .error)) }
                return response
            } catch {
                span.setStatus(SpanStatus(code: .error))
                throw error
            }
        }
    }

    /// The request sent, its duration recorded with its status (or its failure).
    private func timed(_ request: HTTPRequest, host: String) async throws -> HTTPResponse {
        let start = ContinuousClock.now
        do {
            let response = try await inner.send(request)
            metrics.providerCall(host: host, status: response.status, since: start)
            return response
        } catch {
            metrics.providerCall(host: host, status: nil, since: start)
            throw error
        }
    }
}
