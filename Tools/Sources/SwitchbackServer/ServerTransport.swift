import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
@_spi(SwitchbackInternals) public import Switchback

/// The companion's HTTP client to the provider: AsyncHTTPClient (SwiftNIO), which reads a response body
/// only as fast as it is consumed, so a body past ``maximumResponseBytes`` stops the reading at once
/// (FoundationNetworking's URLSession on Linux keeps reading after a cancel). Redirects are never
/// followed; no cookies or credentials are kept.
public final class ServerTransport: HTTPTransport {
    private let client: HTTPClient
    private let timeout: TimeAmount
    public let maximumResponseBytes: Int

    /// A client of its own, shut down by ``shutdown()``.
    public init(timeout: TimeInterval = 30, maximumResponseBytes: Int = 1 << 20) {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(Int64(timeout))))
        configuration.decompression = .disabled
        // The companion's own client span (InstrumentedTransport) names the method and host only; the
        // client's spans would name the full URL, which may one day carry a query worth keeping out of traces.
        configuration.tracing.tracer = nil
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = .seconds(Int64(timeout))
        self.maximumResponseBytes = maximumResponseBytes
    }

    public func send(_ request: Switchback.HTTPRequest) async throws -> Switchback.HTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = .init(rawValue: request.method.rawValue)
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: timeout)
        } catch {
            throw SwitchbackError(.transportFailed, "\(Redaction.describe(request.url)) could not be reached", underlying: error)
        }
        if let declared = response.headers.first(name: "content-length").flatMap(Int.init), declared > maximumResponseBytes {
            throw tooLarge(request.url)
        }
        var body = Data()
        do {
            for try await part in response.body {
                guard body.count + part.readableBytes <= maximumResponseBytes else { throw tooLarge(request.url) }
                body.append(contentsOf: part.readableBytesView)
            }
        } catch let error as SwitchbackError {
            throw error
        } catch {
            throw SwitchbackError(.transportFailed, "the response from \(Redaction.describe(request.url)) was cut off", underlying: error)
        }
        var headers: [String: String] = [:]
        for (name, value) in response.headers { headers[name.lowercased()] = headers[name.lowercased()].map { $0 + ", " + value } ?? value }
        return Switchback.HTTPResponse(status: Int(response.status.code), headers: headers, body: body)
    }

    /// Closes the client's connections.
    public func shutdown() async {
        try? await client.shutdown()
    }

    private func tooLarge(_ url: URL) -> SwitchbackError {
        SwitchbackError(.responseTooLarge, "the response from \(Redaction.describe(url)) exceeds \(maximumResponseBytes) bytes")
    }
}
