import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// A transport that answers from a closure and records every request, for unit tests of one type.
public final class StubTransport: HTTPTransport {
    public typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse

    private let handler: Handler
    private let log = LockedValue<[HTTPRequest]>([])

    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// Every request sent so far, in order.
    public var requests: [HTTPRequest] { log.withLock { $0 } }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        log.withLock { $0.append(request) }
        return try await handler(request)
    }

    /// A JSON response.
    public static func json(_ status: Int = 200, _ body: String, contentType: String = "application/json") -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: Data(body.utf8))
    }

    /// A JSON response encoding a value.
    public static func json(_ status: Int = 200, _ value: some Encodable) throws -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(value))
    }
}
