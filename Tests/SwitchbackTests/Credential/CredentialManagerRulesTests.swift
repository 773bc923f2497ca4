import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport
import SwitchbackTesting

/// ``CredentialManager``'s answers in the paths that used to sign users out or report the wrong reason, on
/// ``CrashWorld``'s provider (strict rotation, revocation) without faults.
@Suite("CredentialManager: what the app is told")
struct CredentialManagerRulesTests {
    /// A network that holds requests to one path until the test lets them go.
    final class HeldNetwork: HTTPTransport, @unchecked Sendable {  // @unchecked: every field is guarded by `lock`.
        private let lock = NSLock()
        private let base: CrashWorld.Network
        private let path: String
        private var held: [CheckedContinuation<Void, Never>] = []
        private var open = false
        private var seen: [String] = []

        init(_ base: CrashWorld.Network, holding path: String) {
            self.base = base
            self.path = path
        }

        var waiting: Int { lock.withLock { held.count } }
        var paths: [String] { lock.withLock { seen } }

        func release() {
            let waiters = lock.withLock {
                open = true
                defer { held = [] }
                return held
            }
            for waiter in waiters { waiter.resume() }
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            lock.withLock { seen.append(request.url.path) }
            if request.url.path == path {
                await withCheckedContinuation { continuation in
                    let now = lock.withLock {
                        if open { return true }
                        held.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
            }
            return try await base.send(request)
        }
    }

    struct World {
        let disk = CrashWorld.Disk()
        let provider = CrashWorld.Provider()
        let plan = CrashWorld.Plan()
        let store: CrashWorld.Store
        let network: HeldNetwork

        init(holding path: String = "/none") {
            store = CrashWorld.Store(disk, plan)
            network = HeldNetwork(CrashWorld.Network(provider: provider, plan: plan), holding: path)
        }

        var client: OIDCClient {
            OIDCClient(
                configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!, scopes: ["openid"]),
                provider: .static(CrashWorld.metadata), transport: network)
        }

        func manager(protectedData: (any ProtectedDataGate)? = nil) -> CredentialManager {
            CredentialManager(client: client, store: store, key: "alice", protectedData: protectedData)
        }

        func signedIn() async throws -> CredentialManager {
            let manager = manager()
            try await manager.save(CrashWorld.credential("alice", refreshToken: await provider.signIn("alice")))
            return manager
        }
    }

    /// Waits up to 5 s for `condition`; records an issue when it never holds.
    static func waitFor(_ condition: () async -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for _ in 0..<1000 where await !condition() { try await Task.sleep(nanoseconds: 5_000_000) }
        if await !condition() { Issue.record("the condition did not hold within 5 s", sourceLocation: sourceLocation) }
    }

    @Test("signed out is notSignedIn, not storeFailed; for validCredential, refresh and credential alike")
    func notSignedIn() async throws {
        let world = World()
        let manager = world.manager()
        await expectCode(.notSignedIn) { try await manager.validCredential() }
        await expectCode(.notSignedIn) { try await manager.refresh() }
        #expect(try await manager.credential() == nil)
    }

    @Test("a new sign-in while a refresh waits for the provider: the refresh's callers get the new credential, which stays stored")
    func signInDuringRefresh() async throws {
        let world = World(holding: "/token")
        let manager = try await world.signedIn()
        let refreshing = Task { try await manager.validCredential() }
        try await Self.waitFor { world.network.waiting == 1 }
        #expect(world.network.waiting == 1, "the refresh is at the provider")
        let newer = CrashWorld.credential("alice", refreshToken: await world.provider.signIn("alice"))
        let saving = Task { try await world.manager().save(newer) }
        try await Self.waitFor { await manager.slot.generation == 2 }
        world.network.release()
        try await saving.value
        #expect(try await refreshing.value.refreshToken == newer.refreshToken)
        #expect(await world.disk.credentials["alice"]?.refreshToken == newer.refreshToken)
    }

    @Test("sign-out: no refresh starts while revocation is on the network; one asked meanwhile is notSignedIn and reaches no token endpoint")
    func signOutStopsRefreshes() async throws {
        let world = World(holding: "/revoke")
        let manager = try await world.signedIn()
        let signingOut = Task { try await manager.signOut(signedInWith: .systemBrowser) }
        try await Self.waitFor { world.network.waiting == 1 }
        #expect(world.network.waiting == 1, "the revocation is on the network")
        // Another manager of the account (an API client's) needs a token now.
        let asking = Task { try await world.manager().validCredential() }
        try await Task.sleep(nanoseconds: 50_000_000)
        world.network.release()
        let signOut = try await signingOut.value
        #expect(signOut.revoked == ["refresh_token", "access_token"])
        let error = await expectFailure("a refresh during sign-out must not run") { try await asking.value }
        #expect(error?.code == .notSignedIn)
        #expect(!world.network.paths.contains("/token"), "nothing was refreshed during the sign-out")
        #expect(await world.provider.family("alice")?.revoked == true)
        #expect(await world.disk.credentials["alice"] == nil)
    }

    @Test("sign-out reports what was revoked before a later revocation failed, and why the end-session request could not be built")
    func signOutReportsPartly() async throws {
        // The provider revokes the refresh token, then refuses the access token's revocation.
        let disk = CrashWorld.Disk()
        let provider = CrashWorld.Provider()
        let network = StubTransport { request in
            guard request.url.path == "/revoke" else { return HTTPResponse(status: 404) }
            let body = String(decoding: request.body ?? Data(), as: UTF8.self)
            return body.contains("token_type_hint=access_token") ? CrashWorld.Provider.error("unsupported_token_type") : HTTPResponse(status: 200)
        }
        var metadata = CrashWorld.metadata
        metadata.endSessionEndpoint = URL(string: "https://id.example.test/logout")
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!, scopes: ["openid"]),
            provider: .static(metadata), transport: network)
        let manager = CredentialManager(client: client, store: CrashWorld.Store(disk, CrashWorld.Plan()), key: "alice")
        try await manager.save(CrashWorld.credential("alice", refreshToken: await provider.signIn("alice")))
        let signOut = try await manager.signOut(signedInWith: .systemBrowser)
        #expect(signOut.revoked == ["refresh_token"])
        #expect(signOut.revocationError?.oauthError?.error == "unsupported_token_type")
        #expect(signOut.endSession != nil)
        #expect(signOut.endSessionError == nil)
        #expect(await disk.credentials["alice"] == nil)
    }

    @Test("before the first unlock, a store that answers empty is not believed when the gate says protected data is unavailable")
    func emptyBeforeFirstUnlock() async throws {
        let world = World()
        _ = try await world.signedIn()
        let lying = EmptyWhileLocked(world.store)
        let gate = DeviceUnlock([])
        let manager = CredentialManager(client: world.client, store: lying, key: "alice", protectedData: gate)
        let asking = Task { try await manager.validCredential() }
        try await Self.waitFor { gate.waiting == 1 }
        #expect(gate.waiting == 1, "the manager waits instead of reporting a sign-out")
        await lying.unlock()
        await gate.unlock()
        #expect(try await asking.value.subject == "alice")
        // Without the gate, an empty answer is believed: signed out.
        await expectCode(.notSignedIn) {
            try await CredentialManager(client: world.client, store: EmptyWhileLocked(world.store), key: "alice").refresh()
        }
    }

    @Test("an app and its extension (two processes: two stores over one Keychain) holding one FileLock send one refresh between them")
    func acrossProcesses() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for _ in 0..<10 {
            let disk = CrashWorld.Disk()
            let provider = CrashWorld.Provider()
            let plan = CrashWorld.Plan()
            let network = CrashWorld.Network(provider: provider, plan: plan)
            // Two store objects: the registry cannot tell they share storage, as two processes cannot.
            func process() -> CredentialManager {
                CredentialManager(
                    client: CrashWorld.client(network), store: CrashWorld.Store(disk, plan), key: "alice",
                    interProcessLock: FileLock(directory: directory))
            }
            try await process().save(CrashWorld.credential("alice", refreshToken: await provider.signIn("alice")))
            let app = process()
            let widget = process()
            async let first = app.validCredential()
            async let second = widget.validCredential()
            let tokens = try await [first.refreshToken, second.refreshToken]
            #expect(await provider.refreshes == 1)
            #expect(await provider.family("alice")?.reuses == 0)
            #expect(tokens[0] == tokens[1])
        }
    }

    @Test("FileLock excludes a second holder until the first is done, and a cancelled waiter stops waiting")
    func fileLock() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let order = LockedValue<[String]>([])
        let holding = LockedValue(false)
        let first = Task {
            try await FileLock(directory: directory).withLock("alice.refreshing") {
                holding.withLock { $0 = true }
                try await Task.sleep(nanoseconds: 100_000_000)
                order.withLock { $0.append("first done") }
            }
        }
        try await Self.waitFor { holding.withLock { $0 } }
        let second = Task { try await FileLock(directory: directory).withLock("alice.refreshing") { order.withLock { $0.append("second") } } }
        try await first.value
        try await second.value
        #expect(order.withLock { $0 } == ["first done", "second"])

        let blocker = Task { try await FileLock(directory: directory).withLock("bob") { try await Task.sleep(nanoseconds: 2_000_000_000) } }
        try await Task.sleep(nanoseconds: 50_000_000)
        let waiter = Task { try await FileLock(directory: directory).withLock("bob") { "ran" } }
        try await Task.sleep(nanoseconds: 50_000_000)
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        blocker.cancel()
        let folder = directory.appendingPathComponent("switchback-locks")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.count == 2 && files.allSatisfy { $0.count == 37 && $0.hasSuffix(".lock") }, "named by a digest: \(files)")
        let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(files[0]).path)[.posixPermissions]
        #expect((mode as? NSNumber)?.intValue == 0o600)
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions]
        #expect((folderMode as? NSNumber)?.intValue == 0o700)
        // Any name works, and stays inside the folder.
        #expect(try await FileLock(directory: directory).withLock("../escape/user@example.com: main") { 1 } == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["switchback-locks"])
    }

    /// A Keychain that answers "not found" before the first unlock instead of `errSecInteractionNotAllowed`.
    actor EmptyWhileLocked: CredentialStore {
        let base: CrashWorld.Store
        var locked = true
        init(_ base: CrashWorld.Store) { self.base = base }
        func unlock() { locked = false }
        func load(key: String) async throws -> Credential? { locked ? nil : try await base.load(key: key) }
        func save(_ credential: Credential, key: String) async throws { try await base.save(credential, key: key) }
        func remove(key: String) async throws { try await base.remove(key: key) }
    }
}

/// A grace period after the user authenticated for the protected refresh token (Auth0.swift #443's request).
@Suite("RefreshTokenProtection: grace period")
struct GracePeriodTests {
    @Test("within the grace period a refresh asks nothing; after it, after endGracePeriod(), or after a sign-in, it asks again")
    func gracePeriod() async throws {
        let disk = CrashWorld.Disk()
        let provider = CrashWorld.Provider()
        let plan = CrashWorld.Plan()
        let clock = ManualClock(Date())
        let protection = RefreshTokenProtection(
            secrets: RotatingSecrets(items: CrashWorld.Items(disk: disk, plan: plan)), reason: "Unlock", gracePeriod: 300)
        let manager = CredentialManager(
            client: CrashWorld.client(CrashWorld.Network(provider: provider, plan: plan)), store: CrashWorld.Store(disk, plan), key: "alice",
            clock: clock, protection: protection)
        try await manager.save(CrashWorld.credential("alice", refreshToken: await provider.signIn("alice")))
        func prompts() async -> Int { await plan.steps.filter { $0.hasPrefix("item read") }.count }

        _ = try await manager.refresh()
        #expect(await prompts() == 1)
        _ = try await manager.refresh()
        _ = try await manager.refresh()
        #expect(await prompts() == 1, "within 300 s the user is not asked again")
        #expect(await provider.family("alice")?.reuses == 0, "the token kept in memory follows each rotation")
        clock.advance(by: 301)
        _ = try await manager.refresh()
        #expect(await prompts() == 2)
        await manager.endGracePeriod()
        _ = try await manager.refresh()
        #expect(await prompts() == 3)
        try await manager.save(CrashWorld.credential("alice", refreshToken: await provider.signIn("alice")))
        _ = try await manager.refresh()
        #expect(await prompts() == 4, "a new sign-in ends the grace period")
        #expect(await disk.secret("alice") == provider.family("alice")?.current)

        // Without a grace period every refresh asks.
        let strict = CredentialManager(
            client: CrashWorld.client(CrashWorld.Network(provider: provider, plan: plan)), store: CrashWorld.Store(disk, plan), key: "alice",
            clock: clock,
            protection: RefreshTokenProtection(secrets: RotatingSecrets(items: CrashWorld.Items(disk: disk, plan: plan)), reason: "Unlock"))
        await strict.endGracePeriod()
        _ = try await strict.refresh()
        _ = try await strict.refresh()
        #expect(await prompts() == 6)
    }
}
