public import Foundation

/// The one seam through which the core talks HTTP.
///
/// Apps already have a networking stack; pass your own conformance to route Switchback's requests
/// through it. ``URLSessionTransport`` is the default.
public protocol HTTPTransport: Sendable {
    /// Sends a request and returns the response without following redirects on the client's behalf.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// An HTTP request the core wants sent.
public struct HTTPRequest: Sendable, Equatable {
    /// The HTTP method.
    public enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
        case put = "PUT"
        case patch = "PATCH"
        case delete = "DELETE"
    }

    public var method: Method
    public var url: URL
    /// Header fields; names are compared case-insensitively by servers.
    public var headers: [String: String]
    public var body: Data?

    public init(method: Method, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// A `POST` with an `application/x-www-form-urlencoded` body.
    public static func form(_ url: URL, _ fields: [(String, String)], headers: [String: String] = [:]) -> HTTPRequest {
        var headers = headers
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        headers["Accept"] = headers["Accept"] ?? "application/json"
        return HTTPRequest(method: .post, url: url, headers: headers, body: Data(FormEncoding.encode(fields).utf8))
    }
}

/// An HTTP response handed back by a transport.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header fields with lower-cased names.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// The media type of the body without parameters, lower-cased (`application/json`).
    public var mediaType: String? {
        headers["content-type"].map {
            $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        }
    }
}
