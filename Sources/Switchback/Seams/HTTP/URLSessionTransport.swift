public import Foundation
#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The default transport: `URLSession`, with redirects not followed and a response size limit that stops
/// reading as soon as it is passed (a declared `Content-Length` over the limit is refused before any body
/// is read).
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
            session: URLSession(
                configuration: configuration, delegate: TransportDelegate(maximumResponseBytes: maximumResponseBytes), delegateQueue: nil),
            maximumResponseBytes: maximumResponseBytes
        )
    }

    /// Creates a transport over a session the app already configured. With a session of its own delegate
    /// the limit is checked once the body has arrived.
    public init(session: URLSession, maximumResponseBytes: Int = 1 << 20) {
        self.session = session
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Runs one data task. With this transport's own delegate the body is read piece by piece and the task
    /// cancelled once it passes the limit; a cancelled authentication challenge comes back as its `401`.
    private func perform(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let started = StartedTask()
        let delegate = session.delegate as? TransportDelegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if let delegate {
                    let task = session.dataTask(with: request)
                    delegate.track(task.taskIdentifier, continuation)
                    started.set(task)
                    task.resume()
                    return
                }
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
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
        let (data, response): (Data, URLResponse)
        do {
            (data, response) = try await perform(urlRequest)
        } catch is ResponseTooLarge {
            throw SwitchbackError(.responseTooLarge, "the response from \(Redaction.describe(request.url)) exceeds \(maximumResponseBytes) bytes")
        }
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

/// The body passed the limit; reading stopped.
private struct ResponseTooLarge: Error {}

/// Refuses every redirect so that a token or discovery request never silently lands elsewhere, answers
/// no authentication challenge, and collects each task's body up to the limit. A `401` with
/// `WWW-Authenticate` (which RFC 6749 §5.2 requires for a refused client_secret_basic) would otherwise be
/// retried with stored credentials or, in FoundationNetworking, wait forever; the challenge is cancelled
/// and its response handed back as the answer.
private final class TransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let maximumResponseBytes: Int
    private let tasks = LockedTasks()

    init(maximumResponseBytes: Int) {
        self.maximumResponseBytes = maximumResponseBytes
    }

    /// Starts collecting the body of task `id` for `continuation`, which is resumed exactly once.
    func track(_ id: Int, _ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        tasks.start(id, continuation)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if let response = challenge.failureResponse as? HTTPURLResponse { tasks.challenged(task.taskIdentifier, response) }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if response.expectedContentLength > Int64(maximumResponseBytes) {
            tasks.tooLarge(dataTask.taskIdentifier)
            completionHandler(.cancel)
            return
        }
        tasks.received(dataTask.taskIdentifier, response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if !tasks.append(dataTask.taskIdentifier, data, limit: maximumResponseBytes) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        tasks.finish(task.taskIdentifier, error: error)
    }

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

/// What each running task has received so far, by task identifier.
private final class LockedTasks: @unchecked Sendable {  // @unchecked: `tasks` is guarded by `lock`.
    private struct Collected {
        var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        var response: URLResponse?
        var challenged: HTTPURLResponse?
        var body = Data()
        var tooLarge = false
    }

    private let lock = NSLock()
    private var tasks: [Int: Collected] = [:]

    func start(_ id: Int, _ continuation: CheckedContinuation<(Data, URLResponse), any Error>) {
        lock.withLock { tasks[id, default: Collected()].continuation = continuation }
    }

    func received(_ id: Int, _ response: URLResponse) { lock.withLock { tasks[id, default: Collected()].response = response } }
    func challenged(_ id: Int, _ response: HTTPURLResponse) { lock.withLock { tasks[id, default: Collected()].challenged = response } }
    func tooLarge(_ id: Int) { lock.withLock { tasks[id, default: Collected()].tooLarge = true } }

    /// Adds `data`; false (and the task marked too large) once the body passes `limit`.
    func append(_ id: Int, _ data: Data, limit: Int) -> Bool {
        lock.withLock {
            guard !(tasks[id]?.tooLarge ?? false) else { return false }
            tasks[id, default: Collected()].body.append(data)
            guard (tasks[id]?.body.count ?? 0) <= limit else {
                tasks[id]?.tooLarge = true
                tasks[id]?.body = Data()
                return false
            }
            return true
        }
    }

    /// Resumes the task's continuation with its body, its challenged `401`, or its failure.
    func finish(_ id: Int, error: (any Error)?) {
        guard let collected = lock.withLock({ tasks.removeValue(forKey: id) }), let continuation = collected.continuation else { return }
        if collected.tooLarge {
            continuation.resume(throwing: ResponseTooLarge())
        } else if let challenged = collected.challenged, error != nil {
            continuation.resume(returning: (Data(), challenged))
        } else if let error {
            continuation.resume(throwing: error)
        } else if let response = collected.response {
            continuation.resume(returning: (collected.body, response))
        } else {
            continuation.resume(throwing: URLError(.badServerResponse))
        }
    }
}

/// The data task of one `send`, so that Swift task cancellation can cancel it.
private struct StartedTask: Sendable {
    private let state = LockedValue<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

    func set(_ task: URLSessionDataTask) {
        let cancelNow = state.withLock {
            $0.task = task
            return $0.cancelled
        }
        if cancelNow { task.cancel() }
    }

    var identifier: Int? { state.withLock { $0.task?.taskIdentifier } }

    func cancel() {
        let task = state.withLock {
            $0.cancelled = true
            return $0.task
        }
        task?.cancel()
    }
}
