import Foundation
import Hummingbird
import ServiceLifecycle
public import UnixSignals
public import Logging
@_spi(SwitchbackInternals) public import Switchback
import SwitchbackHosting
import SwitchbackVerification

/// A local OpenID provider on loopback that behaves like the national eID providers, for offline
/// development and for tests. It is a real provider over real HTTP: discovery, JWKS, authorize with
/// HTML pages, token (PKCE S256, single-use short-lived codes), userinfo.
///
/// ```swift
/// let emulator = try await Emulator.start()
/// let client = OIDCClient(configuration: ..., provider: .discovery(issuer: emulator.issuer))
/// // … sign in …
/// await emulator.stop()
/// ```
///
/// In a test, `withStopping(try await Emulator.start(), stop: { await $0.stop() }) { emulator in … }`
/// (SwitchbackTesting) stops it however the test ends.
public final class Emulator: Sendable {
    /// The issuer identifier, `http://127.0.0.1:PORT`.
    public let issuer: String
    /// The port the server listens on.
    public let port: Int
    public let configuration: EmulatorConfiguration
    public let profile: Profile
    private let group: ServiceGroup
    private let server: Task<Void, any Error>
    private let listening: ListeningSockets
    let keys: SigningKeys
    private let faults: FaultBoard
    private let state: ProviderState
    private let clock: any WallClock

    private init(
        issuer: String, port: Int, profile: Profile, configuration: EmulatorConfiguration, keys: SigningKeys, faults: FaultBoard,
        state: ProviderState, clock: any WallClock, group: ServiceGroup, server: Task<Void, any Error>, listening: ListeningSockets
    ) {
        self.listening = listening
        self.faults = faults
        self.state = state
        self.clock = clock
        self.issuer = issuer
        self.port = port
        self.configuration = configuration
        self.profile = profile
        self.keys = keys
        self.group = group
        self.server = server
    }

    /// Starts an emulator on `host:port` (port 0 picks a free one) and returns once it accepts connections.
    ///
    /// `clock` is the provider's time: when its codes, orders and tokens were issued and when they expire.
    /// A test that must step past a deadline (a QR code going stale) passes a clock it moves itself.
    public static func start(
        profile: Profile = .generic,
        configuration: EmulatorConfiguration = .defaults,
        host: String = "127.0.0.1",
        port: Int = 0,
        clock: any WallClock = SystemClock(),
        shutdownSignals: [UnixSignal] = [],
        logger: Logger = Logger(label: "switchback.emulator")
    ) async throws -> Emulator {
        let keys = try await SigningKeys(given: configuration.signingKeys)
        let issuerBox = IssuerBox()
        let state = ProviderState(entropy: SystemEntropy(), now: { clock.now() })
        let faults = FaultBoard(configuration: configuration)
        let provider = Provider(
            configuration: configuration, profile: profile, keys: keys, state: state, clock: clock, issuer: issuerBox, faults: faults)
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let listening = ListeningSockets()
        let app = Application(
            router: provider.router(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "switchback-emulator"),
            onServerRunning: { channel in
                listening.add(channel)
                continuation.yield(channel.localAddress?.port ?? port)
                continuation.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(services: [app], gracefulShutdownSignals: shutdownSignals, logger: logger)
        let server = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next() else {
            server.cancel()
            _ = await server.result
            throw EmulatorStartError(description: "the emulator could not listen on \(host):\(port)")
        }
        let issuer = "http://\(URLHost.bracketed(host)):\(bound)"
        issuerBox.set(issuer)
        return Emulator(
            issuer: issuer, port: bound, profile: profile, configuration: configuration, keys: keys, faults: faults, state: state, clock: clock,
            group: group,
            server: server, listening: listening)
    }

    /// Stops the server gracefully (in-flight requests finish) and waits until it has closed its socket.
    public func stop() async {
        await listening.stopAccepting()
        await group.triggerGracefulShutdown()
        _ = await server.result
    }

    /// Waits until the server has stopped (after ``stop()`` or one of the shutdown signals).
    public func waitUntilStopped() async throws {
        try await server.value
    }

    /// Switches the faults on for one client, replacing those it had (an empty set switches them off).
    public func setFaults(_ faults: Set<Fault>, forClient clientID: String) async {
        await self.faults.set(faults, for: clientID)
    }

    /// How many refresh-token requests the token endpoint has answered (granted or refused).
    public func refreshRequestCount() async -> Int {
        await state.refreshRequests
    }

    /// A Back-Channel Logout token (Back-Channel Logout 1.0 §2.4) for `clientID`, as the provider posts to
    /// its `backchannel_logout_uri` when a user signs out: typed `logout+jwt`, signed with the client's ID
    /// token algorithm, with `iss`, `aud`, `iat`, `exp` (two minutes, §4), a fresh `jti`, the event, and
    /// `sub` and/or `sid`. `change` edits the claims first (a test's malformed token); it is signed all the same.
    public func logoutToken(
        forClient clientID: String, subject: String?, sessionID: String? = nil, change: (inout [String: JSONValue]) -> Void = { _ in }
    ) async throws -> String {
        guard let client = configuration.client(clientID) else { throw EmulatorStartError(description: "no client \(clientID)") }
        let now = clock.now().timeIntervalSince1970.rounded(.down)
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(clientID), "iat": .number(now), "exp": .number(now + 120),
            "jti": .string(UUID().uuidString), "events": .object([LogoutToken.event: .object([:])]),
        ]
        if let subject { claims["sub"] = .string(subject) }
        if let sessionID { claims["sid"] = .string(sessionID) }
        change(&claims)
        return try await keys.sign(claims, algorithm: client.idTokenAlgorithm, type: "logout+jwt")
    }

    /// The `sid`s of `subject`'s sign-ins that still hold a refresh token (what an ID token's `sid` names
    /// when the client has ``EmulatorConfiguration/Client/backChannelLogoutSession``).
    public func sessionIDs(of subject: String) async -> [String] {
        await state.families(of: subject)
    }

    /// Replaces the signing keys (new kids), as a provider rotating its keys does.
    public func rotateKeys() async throws {
        try await keys.rotate()
    }
}

/// The emulator could not start.
public struct EmulatorStartError: Error, CustomStringConvertible {
    public let description: String
}

/// The issuer, known once the port is bound; read by every handler.
struct IssuerBox: Sendable {
    private let value = LockedValue("")

    func set(_ issuer: String) { value.withLock { $0 = issuer } }
    var issuer: String { value.withLock { $0 } }
}
