public import Foundation
import Hummingbird
import ServiceLifecycle
public import UnixSignals
public import Logging
import Switchback

/// The app's backend companion: it serves the app-link association files of the app's domain, and the
/// page a universal link shows when it opens in a browser instead of the app.
///
/// ```swift
/// let companion = try await Companion.start(associations: [AppAssociation(appIDs: ["TEAMID.com.example.app"], paths: ["/appswitch*"])])
/// ```
@available(macOS 14, iOS 17, *)
public final class Companion: Sendable {
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL
    public let port: Int
    private let group: ServiceGroup
    private let server: Task<Void, any Error>

    private init(baseURL: URL, port: Int, group: ServiceGroup, server: Task<Void, any Error>) {
        self.baseURL = baseURL
        self.port = port
        self.group = group
        self.server = server
    }

    /// Starts the companion on `host:port` (0 picks a free port) and returns once it accepts connections.
    public static func start(
        associations: [AppAssociation], host: String = "127.0.0.1", port: Int = 0, shutdownSignals: [UnixSignal] = [],
        logger: Logger = Logger(label: "switchback.server")
    ) async throws -> Companion {
        let router = Router()
        let apple = AppAssociation.appleDocument(associations).description
        let android = AppAssociation.androidDocument(associations).description
        router.get("/.well-known/apple-app-site-association") { _, _ in json(apple) }
        router.get("/.well-known/assetlinks.json") { _, _ in json(android) }
        // A universal link that opened in a browser (typed, or reached by a redirect): say so, and offer a
        // tap, which iOS does route to the app.
        router.get("**") { request, _ -> Response in
            guard associations.contains(where: { $0.claims(request.uri.path) }) else {
                return Response(status: .notFound, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "not found\n")))
            }
            let html = "<!doctype html>\n<html><body><h1>Open the app</h1><p>This link belongs to the app. <a id=\"return\" href=\"\(escape(request.uri.description))\">Open it in the app</a>.</p></body></html>\n"
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "switchback-server"),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? port)
                continuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: shutdownSignals, logger: logger)
        let server = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), let baseURL = URL(string: "http://\(host):\(bound)") else {
            server.cancel()
            _ = await server.result
            throw CompanionStartError(description: "the companion could not listen on \(host):\(port)")
        }
        return Companion(baseURL: baseURL, port: bound, group: group, server: server)
    }

    /// Stops the server gracefully and waits until it has closed its socket.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await server.result
    }

    public func waitUntilStopped() async throws {
        try await server.value
    }

    private static func json(_ body: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "<", with: "&lt;")
    }
}

/// The companion could not start.
public struct CompanionStartError: Error, CustomStringConvertible {
    public let description: String
}
