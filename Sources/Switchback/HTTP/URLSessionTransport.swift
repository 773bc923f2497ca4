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

    /// Runs one data task; a cancelled authentication challenge comes back as its `401` response
    /// (without a body, which the cancelled task never read).
    private func perform(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let started = StartedTask()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let delegate = session.delegate as? NoRedirects
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        if let id = started.identifier, let challenged = delegate?.takeChallengedResponse(for: id) {
                            continuation.resume(returning: (Data(), challenged))
                        } else {
                            continuation.resume(throwing: error)
                        }
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                started.set(task)
                task.resume()
            }
        } onCancel: {
            started.cancel()
        }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        let (data, response) = try await perform(urlRequest)
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

/// Refuses every redirect so that a token or discovery request never silently lands elsewhere, and
/// answers no authentication challenge. A `401` with `WWW-Authenticate` (which RFC 6749 §5.2 requires
/// for a refused client_secret_basic) would otherwise be retried with stored credentials or, in
/// FoundationNetworking, wait forever; the challenge is cancelled and its response remembered so
/// that the transport can hand the `401` back.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    private let challenged = LockedResponses()

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if let response = challenge.failureResponse as? HTTPURLResponse { challenged.set(response, for: task.taskIdentifier) }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    /// The response whose challenge was cancelled for this task, if any.
    func takeChallengedResponse(for task: Int) -> HTTPURLResponse? { challenged.take(task) }

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

/// The data task of one `send`, so that Swift task cancellation can cancel it.
private final class StartedTask: @unchecked Sendable {  // @unchecked: fields are guarded by `lock`.
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func set(_ task: URLSessionDataTask) {
        let cancelNow = lock.withLock {
            self.task = task
            return cancelled
        }
        if cancelNow { task.cancel() }
    }

    var identifier: Int? { lock.withLock { task?.taskIdentifier } }

    func cancel() {
        let task = lock.withLock {
            cancelled = true
            return self.task
        }
        task?.cancel()
    }
}

/// Responses to cancelled authentication challenges, by task identifier.
private final class LockedResponses: @unchecked Sendable {  // @unchecked: `responses` is guarded by `lock`.
    private let lock = NSLock()
    private var responses: [Int: HTTPURLResponse] = [:]

    func set(_ response: HTTPURLResponse, for task: Int) { lock.withLock { responses[task] = response } }
    func take(_ task: Int) -> HTTPURLResponse? { lock.withLock { responses.removeValue(forKey: task) } }
}
