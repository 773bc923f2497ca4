public import Foundation
@_spi(SwitchbackInternals) import Switchback

// The session cookie and the limits on the anonymous routes.
extension ServerConfiguration {
    /// The first-party session and its cookie.
    public struct Session: Sendable, Codable, Equatable {
        public var lifetime: TimeInterval
        public var cookieName: String
        /// `Lax` (the default) or `Strict`; `None` is refused.
        public var sameSite: String
        public var cookiePath: String
        /// Name the cookie `__Host-<cookieName>` when the path is `/` (the default): a browser then keeps it
        /// only from this exact host over https, never set by a sibling subdomain (RFC 6265bis §4.1.3.2).
        public var hostPrefix: Bool

        public init(
            lifetime: TimeInterval = 3600, cookieName: String = "switchback_session", sameSite: String = "Lax", cookiePath: String = "/",
            hostPrefix: Bool = true
        ) {
            self.lifetime = lifetime
            self.cookieName = cookieName
            self.sameSite = sameSite
            self.cookiePath = cookiePath
            self.hostPrefix = hostPrefix
        }

        /// The cookie's name as sent: with the `__Host-` prefix where the path allows it.
        public var effectiveCookieName: String {
            hostPrefix && cookiePath == "/" && !cookieName.hasPrefix("__") ? "__Host-" + cookieName : cookieName
        }
    }

    /// What an anonymous client may ask of the routes that store a record or call the provider (the
    /// starts, `/exchange`, `/handoff`, the attestation and wallet routes: those the banner marks
    /// `[rate-limited]`), how many status requests may wait at once, and the limits of every connection.
    /// Past a rate limit or a cap the answer is `429` with `Retry-After`.
    public struct Limits: Sendable, Codable, Equatable {
        /// Start requests per minute from one client address, an IPv6 /64 (0: no limit). A client's coarser
        /// networks (an IPv6 /56 and /48, an IPv4 /24) and its requests within flows get multiples of it
        /// (Deployment.md, "Rate limits").
        public var startsPerMinutePerAddress: Int
        /// Requests per minute to each rate-limited start route on this instance, four times that to each
        /// route within a flow (0: no limit).
        public var startsPerMinute: Int
        /// Authorizations waiting for the provider's answer, across every instance sharing the store.
        public var pendingAuthorizations: Int
        /// `POST /completion/status` requests waiting at once on this instance (one per flow in any case).
        public var waitingStatusRequests: Int
        /// The header that carries the client's address when the server runs behind reverse proxies that
        /// append to it (`X-Forwarded-For`). Nil: the connection's address. Set it only when every request
        /// comes through those proxies: a client reaching the server directly could write the header itself.
        public var clientAddressHeader: String?
        /// How many proxies of yours append to ``clientAddressHeader``: the entry this many from the end is the
        /// client's address (1: a load balancer; 2: a CDN in front of it).
        public var trustedHops: Int
        /// The addresses of your proxies (`10.0.1.0/24`, `2001:db8:1::/64`, or single addresses): the header
        /// is read only on connections from them, so a client that reaches the server directly cannot write
        /// it. Required with ``clientAddressHeader``; `/0` is refused, and a network wider than an IPv4 /16 or
        /// an IPv6 /56 is warned of at start (``proxyWarnings``): every host in it (every pod of a cluster)
        /// may choose the address the rate limits see.
        public var trustedProxies: [String]
        /// Clients connect to this server directly (no proxy in front): their connection address is theirs.
        /// A server that listens beyond loopback must say either this or ``clientAddressHeader``: behind a
        /// proxy without the header, every client would share the proxy's address and its limits.
        public var directClients: Bool
        /// The longest a graceful shutdown (SIGTERM, ``Companion/stop()``) waits for requests in flight once
        /// it has stopped accepting connections and answered the waiting status requests; past it they
        /// are cancelled. Seconds.
        public var shutdownGrace: TimeInterval
        /// How long a connection may go without sending any part of a request before the server closes it:
        /// a keep-alive connection left open, or a client that sends a request's head a byte at a time
        /// (slowloris). A request that was read and is being answered (a waiting status request) is not
        /// idle. Keep it above your load balancer's own idle timeout (AWS ALB: 60 s), or the balancer may
        /// reuse a connection the companion is closing and answer 502. Seconds.
        public var idleTimeout: TimeInterval
        /// How long a request's body may take to arrive, from its head to its end, before the server
        /// closes the connection: a client sending a body a byte at a time is activity to the idle timer,
        /// so this is what bounds it. Bodies here are at most 16 KiB, except Apple's identity responses
        /// (`/wallet/apple/verify`, up to 384 KiB). Seconds.
        public var bodyTimeout: TimeInterval
        /// How long an answer may wait on a client that reads none of it (the connection's buffers full)
        /// before the server closes the connection. The idle timer does not run while a request is being
        /// answered, so this is what bounds a client that stops reading. Seconds.
        public var writeTimeout: TimeInterval
        /// The most connections this instance holds open at once (0: no cap). A connection past it is
        /// closed as soon as it is accepted. It must exceed ``waitingStatusRequests``, each of which holds a
        /// connection, and stay below the process's open-file limit (`ulimit -n`), which the database pool
        /// and the metrics listener share.
        public var maxConnections: Int

        public init(
            startsPerMinutePerAddress: Int = 30, startsPerMinute: Int = 1200, pendingAuthorizations: Int = 20_000, waitingStatusRequests: Int = 2000,
            clientAddressHeader: String? = nil, trustedHops: Int = 1, trustedProxies: [String] = [], directClients: Bool = false,
            shutdownGrace: TimeInterval = 10, idleTimeout: TimeInterval = 75, bodyTimeout: TimeInterval = 30, writeTimeout: TimeInterval = 30,
            maxConnections: Int = 10_000
        ) {
            self.shutdownGrace = shutdownGrace
            self.idleTimeout = idleTimeout
            self.bodyTimeout = bodyTimeout
            self.writeTimeout = writeTimeout
            self.maxConnections = maxConnections
            self.trustedProxies = trustedProxies
            self.directClients = directClients
            self.startsPerMinutePerAddress = startsPerMinutePerAddress
            self.startsPerMinute = startsPerMinute
            self.pendingAuthorizations = pendingAuthorizations
            self.waitingStatusRequests = waitingStatusRequests
            self.clientAddressHeader = clientAddressHeader
            self.trustedHops = trustedHops
        }

        /// One line for the printed configuration.
        public var summary: String {
            let perAddress = startsPerMinutePerAddress == 0 ? "unlimited" : "\(startsPerMinutePerAddress)/min"
            let total = startsPerMinute == 0 ? "unlimited" : "\(startsPerMinute)/min"
            let by =
                clientAddressHeader.map {
                    "\($0) from \(trustedProxies.joined(separator: ", ")), \(trustedHops) trusted hop\(trustedHops == 1 ? "" : "s")"
                }
                ?? "connection address"
            let connections = maxConnections == 0 ? "unlimited connections" : "at most \(maxConnections) connections"
            return "rate-limited routes \(perAddress) per address (by \(by); IPv6 /64, multiples for /56, /48 and IPv4 /24), \(total) per route; "
                + "at most \(pendingAuthorizations) pending authorizations, \(waitingStatusRequests) waiting status requests; "
                + "\(connections), idle \(Int(idleTimeout)) s, a body within \(Int(bodyTimeout)) s, a stalled answer \(Int(writeTimeout)) s"
        }
    }
}

extension ServerConfiguration.Session {
    private enum Keys: String, CodingKey { case lifetime, cookieName, sameSite, cookiePath, hostPrefix }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            lifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .lifetime) ?? 3600,
            cookieName: try c.decodeIfPresent(String.self, forKey: .cookieName) ?? "switchback_session",
            sameSite: try c.decodeIfPresent(String.self, forKey: .sameSite) ?? "Lax",
            cookiePath: try c.decodeIfPresent(String.self, forKey: .cookiePath) ?? "/",
            hostPrefix: try c.decodeIfPresent(Bool.self, forKey: .hostPrefix) ?? true
        )
    }
}

extension ServerConfiguration.Limits {
    private enum Keys: String, CodingKey {
        case startsPerMinutePerAddress, startsPerMinute, pendingAuthorizations, waitingStatusRequests, clientAddressHeader, trustedHops
        case trustedProxies, directClients, shutdownGrace, idleTimeout, bodyTimeout, writeTimeout, maxConnections
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let defaults = Self()
        self.init(
            startsPerMinutePerAddress: try c.decodeIfPresent(Int.self, forKey: .startsPerMinutePerAddress) ?? defaults.startsPerMinutePerAddress,
            startsPerMinute: try c.decodeIfPresent(Int.self, forKey: .startsPerMinute) ?? defaults.startsPerMinute,
            pendingAuthorizations: try c.decodeIfPresent(Int.self, forKey: .pendingAuthorizations) ?? defaults.pendingAuthorizations,
            waitingStatusRequests: try c.decodeIfPresent(Int.self, forKey: .waitingStatusRequests) ?? defaults.waitingStatusRequests,
            clientAddressHeader: try c.decodeIfPresent(String.self, forKey: .clientAddressHeader),
            trustedHops: try c.decodeIfPresent(Int.self, forKey: .trustedHops) ?? defaults.trustedHops,
            trustedProxies: try c.decodeIfPresent([String].self, forKey: .trustedProxies) ?? [],
            directClients: try c.decodeIfPresent(Bool.self, forKey: .directClients) ?? false,
            shutdownGrace: try c.decodeIfPresent(TimeInterval.self, forKey: .shutdownGrace) ?? defaults.shutdownGrace,
            idleTimeout: try c.decodeIfPresent(TimeInterval.self, forKey: .idleTimeout) ?? defaults.idleTimeout,
            bodyTimeout: try c.decodeIfPresent(TimeInterval.self, forKey: .bodyTimeout) ?? defaults.bodyTimeout,
            writeTimeout: try c.decodeIfPresent(TimeInterval.self, forKey: .writeTimeout) ?? defaults.writeTimeout,
            maxConnections: try c.decodeIfPresent(Int.self, forKey: .maxConnections) ?? defaults.maxConnections
        )
    }
}

extension ServerConfiguration.Limits {
    /// What the start warns of in ``trustedProxies``: each network wider than an IPv4 /16 or an IPv6 /56.
    public var proxyWarnings: [String] {
        trustedProxies.compactMap { text in
            guard let network = ClientAddress.Network(text) else { return nil }
            let widest = if case .v4 = network.base.value { 16 } else { 56 }
            guard network.prefixLength < widest else { return nil }
            return
                "limits.trustedProxies: \(text) trusts every host in it to write \(clientAddressHeader ?? "the client address header"), so each of them may choose the address the rate limits see; name your load balancers' own addresses or subnet"
        }
    }
}
