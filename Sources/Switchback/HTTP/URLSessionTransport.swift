public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// The default transport: `URLSession`, with redirects not followed and a response size limit.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let maximumResponseBytes: Int

    /// Creates a transport over an ephemeral session (no cookies, no cache).
    public convenience init(timeout: TimeInterval = 30, maximumResponseBytes: Int = 1 << 20) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        self.init(
            session: URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil),
            maximumResponseBytes: maximumResponseBytes
        )
    }

    /// Creates a transport over a session the app already configured.
    public init(session: URLSession, maximumResponseBytes: Int = 1 << 20) {
        self.session = session
        self.maximumResponseBytes = maximumResponseBytes
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await session.data(for: urlRequest)
        guard let http = response as? HTTPURLResponse else {
            throw SwitchbackError(.transportFailed, "the response to \(Redaction.describe(request.url)) is not HTTP")
        }
        guard data.count <= maximumResponseBytes else {
            throw SwitchbackError(.responseTooLarge, "the response from \(Redaction.describe(request.url)) exceeds \(maximumResponseBytes) bytes")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data)
    }
}

/// Refuses every redirect so that a token or discovery request never silently lands elsewhere.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
