public import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOSSL
import HummingbirdTLS
import ServiceLifecycle
public import UnixSignals
public import Logging
@_spi(SwitchbackInternals) public import Switchback
import SwitchbackHosting

/// The app's backend companion: backend code exchange, the BankID permission proxy, the native-callback
/// bridge, session hand-off, backend completion and the app-link association files — each on when its
/// section of ``ServerConfiguration`` is present.
///
/// ```swift
/// let companion = try await Companion.start(ServerConfiguration(
///     provider: .init(issuer: "https://id.example.com", clientID: "backend", clientSecret: secret),
///     handOff: .init(audience: "https://auth.example.com", allowedRedirects: ["https://web.example.com/app"])
/// ))
/// ```
public final class Companion: Sendable {
    /// The server's public base URL: the configured `publicURL`, else `http://host:port` as bound.
    public let baseURL: URL
    public let port: Int
    /// The port `GET /metrics` is served on, when the configuration has a `metrics` section.
    public let metricsPort: Int?
    /// The routes this configuration turned on.
    public let routes: [Route]
    private let group: ServiceGroup
    private let server: Task<Void, any Error>
    private let janitor: Task<Void, Never>
    private let ownedStore: PostgresCompanionStore?
    private let ownedTransport: ServerTransport?
    /// The status requests waiting on this instance (tests wait for one to be waiting, not for a time).
    let waiters: CompletionWaiters

    /// One route: its method, path and what it is for.
    public struct Route: Sendable, CustomStringConvertible {
        public let method: String
        public let path: String
        public let purpose: String
        public var description: String {
            "\(method.padding(toLength: 5, withPad: " ", startingAt: 0)) \(path.padding(toLength: 42, withPad: " ", startingAt: 0)) \(purpose)"
        }
    }

    private init(
        baseURL: URL, port: Int, metricsPort: Int?, routes: [Route], group: ServiceGroup, server: Task<Void, any Error>,
        janitor: Task<Void, Never>, ownedStore: PostgresCompanionStore?, ownedTransport: ServerTransport?, waiters: CompletionWaiters
    ) {
        self.metricsPort = metricsPort
        self.waiters = waiters
        self.ownedTransport = ownedTransport
        self.baseURL = baseURL
        self.port = port
        self.routes = routes
        self.group = group
        self.server = server
        self.janitor = janitor
        self.ownedStore = ownedStore
    }

    /// Only the association files (and the page a universal link shows in a browser).
    public static func start(
        associations: [AppAssociation], host: String = "127.0.0.1", port: Int = 0, shutdownSignals: [UnixSignal] = [],
        logger: Logger = Logger(label: "switchback.server")
    ) async throws -> Companion {
        try await start(ServerConfiguration(host: host, port: port, associations: associations), shutdownSignals: shutdownSignals, logger: logger)
    }

    /// Validates `configuration`, opens the store (`store`, else PostgreSQL when the configuration names
    /// it, else memory) and starts listening; returns once the server accepts connections.
    /// `transport` defaults to a ``ServerTransport`` of the companion's own, closed when it stops.
    public static func start(
        _ configuration: ServerConfiguration, store: (any CompanionStore)? = nil, transport: (any HTTPTransport)? = nil,
        clock: any WallClock = SystemClock(), entropy: any EntropySource = KernelEntropy(), shutdownSignals: [UnixSignal] = [],
        logger: Logger = Logger(label: "switchback.server")
    ) async throws -> Companion {
        try configuration.validate()
        // The listener's certificate and key before anything is opened: a file that does not serve ends the start here.
        let tls = try configuration.tls?.serverConfiguration()
        if let warning = OpenFileLimit.warning(maxConnections: configuration.limits.maxConnections, limit: OpenFileLimit.current()) {
            logger.warning("\(warning)")
        }
        for warning in configuration.limits.proxyWarnings { logger.warning("\(warning)") }
        var ownedStore: PostgresCompanionStore?
        let chosenStore: any CompanionStore
        if let store {
            chosenStore = store
        } else if let url = configuration.postgresURL {
            // The store first: a database that cannot be reached ends the start here, with nothing else
            // opened yet to close (an HTTP client left open would stop the process when it is released).
            let postgres = try PostgresCompanionStore(url: url, recordKeys: try RecordKeys(configuration.recordKeys), logger: logger)
            do {
                try await postgres.start()
            } catch let error as SwitchbackError {
                // Where, as the URL names it, without its user info (the password).
                let components = URLComponents(string: url)
                let host = components?.host.map(URLHost.bracketed) ?? "?"
                let place = "\(host):\(components?.port ?? 5432), database \(components?.path.dropFirst() ?? "")"
                throw SwitchbackError(.storeFailed, "the PostgreSQL store (\(place)) did not start: \(error.message)", underlying: error)
            }
            ownedStore = postgres
            chosenStore = postgres
        } else {
            chosenStore = InMemoryCompanionStore(recordKeys: configuration.recordKeys.isEmpty ? .random() : try RecordKeys(configuration.recordKeys))
        }
        let ownedTransport = transport == nil ? ServerTransport() : nil
        let transport: any HTTPTransport = transport ?? ownedTransport!
        do {
            return try await listen(
                configuration, tls: tls, store: chosenStore, ownedStore: ownedStore, transport: transport, ownedTransport: ownedTransport,
                clock: clock,
                entropy: entropy,
                shutdownSignals: shutdownSignals, logger: logger
            )
        } catch {
            await ownedStore?.stop()
            await ownedTransport?.shutdown()
            throw error
        }
    }

    private static func listen(
        _ configuration: ServerConfiguration, tls: TLSConfiguration?, store: any CompanionStore, ownedStore: PostgresCompanionStore?,
        transport: any HTTPTransport,
        ownedTransport: ServerTransport?, clock: any WallClock, entropy: any EntropySource, shutdownSignals: [UnixSignal], logger: Logger
    ) async throws -> Companion {
        let metrics = configuration.metrics == nil ? CompanionMetrics.bootstrapped() : CompanionMetrics.prometheus()
        let store = InstrumentedStore(inner: store, metrics: metrics)
        var provider: ProviderAccess?
        if let section = configuration.provider {
            provider = try await ProviderAccess(
                section, transport: InstrumentedTransport(inner: transport, metrics: metrics), clock: clock, entropy: entropy, logger: logger)
        }
        let allowList = try configuration.handOff.map { try RedirectAllowList($0.allowedRedirects) }
        let attestation = try configuration.appAttest.map(AppAttestVerifier.init(configuration:))
        let playIntegrity = try configuration.playIntegrity.map(PlayIntegrityVerifier.init(configuration:))
        let wallet = try configuration.wallet.map {
            try CompanionService.WalletVerifier(
                $0, publicURL: configuration.publicURL.flatMap(URL.init(string:)),
                transport: InstrumentedTransport(inner: transport, metrics: metrics),
                clock: clock)
        }
        let appleIdentity = try configuration.appleIdentity.map {
            try CompanionService.AppleIdentityVerifier($0, transport: InstrumentedTransport(inner: transport, metrics: metrics), clock: clock)
        }
        let access = provider
        let waiters = CompletionWaiters(limit: configuration.limits.waitingStatusRequests)
        let shared = SharedService(configuration.publicURL.flatMap(URL.init(string:))) { baseURL in
            CompanionService(
                configuration: configuration, baseURL: baseURL, store: store, provider: access, allowList: allowList, waiters: waiters,
                clock: clock, entropy: entropy, logger: logger, metrics: metrics, attestation: attestation,
                playIntegrity: playIntegrity, wallet: wallet, appleIdentity: appleIdentity
            )
        }
        let router = Router(context: CompanionContext.self)
        router.add(middleware: RequestLog(logger: logger))
        let limiter = RateLimiter(
            perAddress: configuration.limits.startsPerMinutePerAddress, global: configuration.limits.startsPerMinute, clock: clock)
        let readiness = Readiness(store: store, provider: provider, clock: clock)
        let routes = register(on: router, configuration: configuration, limiter: limiter, readiness: readiness, metrics: metrics) {
            shared.service
        }
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let listening = ListeningSockets()
        let host = configuration.host
        let limits = configuration.limits
        /// HTTP/1 with the idle timeout and one ``ConnectionGuard`` per connection (the closure runs for
        /// each), all sharing `connections`; over TLS when `tls` is given.
        func guarded(_ connections: ConnectionCount, _ listener: CompanionMetrics.Listener, tls: TLSConfiguration? = nil) throws
            -> HTTPServerBuilder
        {
            func amount(_ seconds: TimeInterval) -> TimeAmount { .milliseconds(Int64(seconds * 1000)) }
            let (body, write) = (amount(limits.bodyTimeout), amount(limits.writeTimeout))
            let http: HTTPServerBuilder = .http1(
                configuration: .init(
                    additionalChannelHandlers: [
                        ConnectionGuard(connections: connections, bodyTimeout: body, writeTimeout: write, metrics: metrics, listener: listener)
                    ],
                    idleTimeout: amount(limits.idleTimeout)))
            guard let tls else { return http }
            return try .tls(http, tlsConfiguration: tls)
        }
        let app = Application(
            router: router,
            server: try guarded(ConnectionCount(limit: limits.maxConnections), .public, tls: tls),
            configuration: ApplicationConfiguration(address: .hostname(host, port: configuration.port), serverName: "switchback-server"),
            onServerRunning: { channel in
                listening.add(channel)
                continuation.yield(channel.localAddress?.port ?? configuration.port)
                continuation.finish()
            },
            logger: logger
        )
        // A graceful shutdown ends the services last to first: the drain first (not ready, waiting status
        // requests answered), then the server (stops accepting, finishes what is in flight), within the grace.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: app), .init(service: Drain(listening: listening, readiness: readiness, waiters: waiters, logger: logger)),
        ]
        // The metrics listener stops last, so that a scrape during the drain still answers.
        let (metricsPorts, metricsContinuation) = AsyncStream<Int>.makeStream()
        if let section = configuration.metrics {
            let metricsRouter = Router()
            metricsRouter.get("/metrics") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
            }
            // The same idle and body limits as the public listener, and a small cap of its own: a scraper
            // needs a connection or two, and this listener's connections must not take the public one's.
            let exporter = Application(
                router: metricsRouter,
                server: try guarded(ConnectionCount(limit: Self.metricsConnections), .metrics),
                configuration: ApplicationConfiguration(address: .hostname(section.host, port: section.port), serverName: "switchback-metrics"),
                onServerRunning: { channel in
                    listening.add(channel)
                    metricsContinuation.yield(channel.localAddress?.port ?? section.port)
                    metricsContinuation.finish()
                },
                logger: logger
            )
            services.insert(.init(service: exporter), at: 0)
        } else {
            metricsContinuation.finish()
        }
        var groupConfiguration = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: shutdownSignals, logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int(configuration.limits.shutdownGrace * 1000))
        groupConfiguration.maximumCancellationDuration = .seconds(5)
        let group = ServiceGroup(configuration: groupConfiguration)
        let server = Task { try await group.run() }
        // A listener that fails to bind ends the group: the start must not wait for its port forever.
        Task {
            _ = await server.result
            continuation.finish()
            metricsContinuation.finish()
        }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next(), let bindURL = URL(string: "\(tls == nil ? "http" : "https")://\(URLHost.bracketed(host)):\(bound)")
        else {
            server.cancel()
            _ = await server.result
            throw CompanionStartError(description: "the companion could not listen on \(host):\(configuration.port)")
        }
        shared.setIfUnset(bindURL)
        var metricsIterator = metricsPorts.makeAsyncIterator()
        let metricsPort = await metricsIterator.next()
        if configuration.metrics != nil, metricsPort == nil {
            await group.triggerGracefulShutdown()
            _ = await server.result
            throw CompanionStartError(
                description: "the metrics listener could not listen on \(configuration.metrics?.host ?? ""):\(configuration.metrics?.port ?? 0)")
        }
        let janitor = Task {
            // Another instance finishing a flow wakes this instance's waiter for it.
            let listener = Task {
                while !Task.isCancelled {
                    do {
                        // Listening (again): what was announced before reached no one, so every waiter reads again.
                        try await store.listen(started: { await waiters.wakeAll() }) { kind, digest in
                            if kind == .completion { await waiters.signal(digest) }
                        }
                    } catch is CancellationError {
                        return
                    } catch {
                        guard !Task.isCancelled else { return }
                        logger.notice("the store's change notifications stopped; listening again", metadata: ["error": "\(type(of: error))"])
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(60))
                _ = try? await store.purge(now: clock.now())
            }
            listener.cancel()
            _ = await listener.result
        }
        return Companion(
            baseURL: shared.value, port: bound, metricsPort: metricsPort, routes: routes, group: group, server: server, janitor: janitor,
            ownedStore: ownedStore,
            ownedTransport: ownedTransport,
            waiters: waiters
        )
    }

    /// The most connections the metrics listener holds at once.
    static let metricsConnections = 16

    /// Stops the server gracefully and waits until it has closed its socket and its store.
    public func stop() async {
        janitor.cancel()
        await group.triggerGracefulShutdown()
        _ = await server.result
        _ = await janitor.result
        await ownedStore?.stop()
        await ownedTransport?.shutdown()
    }

    public func waitUntilStopped() async throws {
        try await server.value
        janitor.cancel()
        _ = await janitor.result
        await ownedStore?.stop()
        await ownedTransport?.shutdown()
    }
}

/// The first service a graceful shutdown ends: the instance says it is not ready, and the status requests
/// waiting on it answer now, before the server stops accepting connections and drains the rest.
private struct Drain: Service {
    let listening: ListeningSockets
    let readiness: Readiness
    let waiters: CompletionWaiters
    let logger: Logger

    func run() async throws {
        // Returns when a graceful shutdown begins; throws when the group is cancelled instead (nothing to drain).
        do { try await gracefulShutdown() } catch { return }
        // No new connections from here (the servers close their listeners after this service ends).
        await listening.stopAccepting()
        await readiness.beginDraining()
        let waiting = await waiters.count
        await waiters.drain()
        logger.notice("draining: not ready; waiting status requests answered", metadata: ["waiting": "\(waiting)"])
    }
}

/// The companion could not start.
public struct CompanionStartError: Error, CustomStringConvertible {
    public let description: String
}

/// The routes' one ``CompanionService``, made for the public base URL, which is known only once the server
/// is bound when no `publicURL` is configured.
private struct SharedService: Sendable {
    private let state: LockedValue<(url: URL?, service: CompanionService?)>
    private let make: @Sendable (URL) -> CompanionService

    init(_ url: URL?, make: @escaping @Sendable (URL) -> CompanionService) {
        state = LockedValue((url, nil))
        self.make = make
    }

    var value: URL { state.withLock { $0.url ?? Self.unbound } }

    /// The service for the current base URL, made on first use.
    var service: CompanionService {
        state.withLock { state in
            if let service = state.service { return service }
            let service = make(state.url ?? Self.unbound)
            state.service = service
            return service
        }
    }

    func setIfUnset(_ bound: URL) {
        state.withLock { state in
            guard state.url == nil else { return }
            state = (bound, nil)
        }
    }

    private static let unbound = URL(string: "http://127.0.0.1")!
}

/// Logs each request's method, route template and status: never its path or query, which can hold a
/// secret (a wallet request's `state` is its path's last segment; codes travel in queries).
private struct RequestLog<Context: RequestContext>: RouterMiddleware {
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        logger.info(
            "request",
            metadata: ["method": "\(request.method)", "route": "\(context.endpointPath ?? "unmatched")", "status": "\(response.status.code)"])
        return response
    }
}
