public import Foundation
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackTesting

/// The web app a hybrid app shows, as a real site over HTTP: server-rendered pages and its own session
/// cookie. Its sign-in link is the bridge's trigger, carrying a binding the web app keeps in its session;
/// its return page redeems the one-time code with the companion, server to server, once, with that binding.
public final class HybridWebApp: Sendable {
    struct Session: Sendable {
        let binding: String
        var subject: String?
        /// Every string field the companion's redemption returned (tokens, when it returns tokens).
        var received: [String: String] = [:]
    }

    public let baseURL: URL
    private let sessions: LockedValue<[String: Session]>
    private let server: Task<Void, any Error>

    /// The values the companion handed over, for the test to look for in URLs.
    public var received: [String: String] { sessions.withLock { $0.values.reduce(into: [:]) { $0.merge($1.received) { first, _ in first } } } }
    /// The bindings the web app made, which must never travel in a URL of its own (only in the trigger).
    public var bindings: [String] { sessions.withLock { $0.values.map(\.binding) } }

    private init(baseURL: URL, sessions: LockedValue<[String: Session]>, server: Task<Void, any Error>) {
        self.baseURL = baseURL
        self.sessions = sessions
        self.server = server
    }

    /// Starts the web app on loopback; `companion` is where it redeems codes (server to server), and
    /// `trigger` adds to the sign-in link's query (`&response_mode=form_post`). `secureCookie` marks its
    /// session cookie `Secure`: right behind https, but a real engine loading it over plain loopback http
    /// would drop it.
    public static func start(companion: URL, trigger extra: String = "", secureCookie: Bool = true) async throws -> HybridWebApp {
        let sessions = LockedValue<[String: Session]>([:])
        let transport = URLSessionTransport()
        let router = Router()
        router.get("/") { request, _ -> Response in
            let (id, session, cookie) = Self.session(of: request, in: sessions, secure: secureCookie)
            let trigger = "switchback://sign-in?return=/home&binding=\(session.binding)\(extra)"
            return Self.page(
                "Web app", "<p><a id=\"sign-in\" href=\"\(trigger.replacingOccurrences(of: "&", with: "&amp;"))\">Sign in</a></p>",
                cookie: id == nil ? cookie : nil)
        }
        router.get("/home") { request, _ -> Response in
            let (_, session, _) = Self.session(of: request, in: sessions, secure: secureCookie)
            let query = Dictionary(FormEncoding.decode(request.uri.query ?? "", plusIsSpace: true) ?? [], uniquingKeysWith: { first, _ in first })
            if let error = query["error"] { return Self.page("Sign-in failed: \(error)", "") }
            guard let code = query["handoffotp"] else {
                return Self.page(session.subject.map { "Signed in as \($0)" } ?? "Not signed in", "")
            }
            let body = try JSONSerialization.data(withJSONObject: ["handoffotp": code, "binding": session.binding])
            let answer = try await transport.send(
                Switchback.HTTPRequest(
                    method: .post, url: companion.appendingPathComponent("bridge/redeem"), headers: ["Content-Type": "application/json"], body: body)
            )
            guard answer.status == 200, let json = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any],
                let subject = json["sub"] as? String
            else {
                return Self.page("Sign-in failed: redeem refused (HTTP \(answer.status))", "")
            }
            let key = Self.cookieValue(request)
            sessions.withLock {
                guard let key else { return }
                $0[key]?.subject = subject
                $0[key]?.received = json.compactMapValues { $0 as? String }
            }
            return Self.page("Signed in as \(subject)", "")
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "hybrid-web-app"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            // Cancelling the server at the end of a test is not worth an error line.
            logger: Logger(label: "hybrid-web-app") { _ in SwiftLogNoOpLogHandler() }
        )
        let server = Task { try await app.runService() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), let url = URL(string: "http://127.0.0.1:\(port)") else {
            server.cancel()
            throw SwitchbackError(.transportFailed, "the web app did not start")
        }
        return HybridWebApp(baseURL: url, sessions: sessions, server: server)
    }

    public func stop() async {
        server.cancel()
        _ = await server.result
    }

    private static func cookieValue(_ request: Request) -> String? {
        request.headers[.cookie]?.split(separator: ";").lazy.map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix("webapp=") }.map { String($0.dropFirst(7)) }
    }

    /// The visitor's session, made on first sight: (nil when it already existed, the session, its Set-Cookie).
    private static func session(of request: Request, in sessions: LockedValue<[String: Session]>, secure: Bool) -> (String?, Session, String) {
        if let id = cookieValue(request), let existing = sessions.withLock({ $0[id] }) { return (id, existing, "") }
        let id = UUID().uuidString
        let session = Session(binding: "binding-" + UUID().uuidString.lowercased())
        sessions.withLock { $0[id] = session }
        return (nil, session, "webapp=\(id); Path=/; \(secure ? "Secure; " : "")HttpOnly; SameSite=Lax")
    }

    private static func page(_ heading: String, _ body: String, cookie: String? = nil) -> Response {
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"]
        if let cookie { headers[.setCookie] = cookie }
        let escaped = heading.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "<!doctype html><h1>\(escaped)</h1>\(body)")))
    }
}
