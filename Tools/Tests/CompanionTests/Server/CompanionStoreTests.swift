import Crypto
import Foundation
import Logging
import PostgresNIO
import SwiftASN1
import X509
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// One-time records on both stores: single use under concurrency, expiry, digests only, and (for
/// PostgreSQL) two pools standing for two server instances.
@Suite("CompanionStore")
struct CompanionStoreTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func grant(lifetime: TimeInterval = 60) -> HandOffGrant {
        HandOffGrant(subject: "9b1f7c2e-alice", clientID: "native-rs", issuedAt: now, expiresAt: now.addingTimeInterval(lifetime))
    }

    @Test("200 concurrent redemptions of one code: exactly one gets the grant", arguments: StoreKind.available)
    func concurrentRedeem(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let code = try await store.issue(Self.grant())
            let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<200 {
                    group.addTask { try await store.redeem(code, now: Self.now) != nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(successes == 1)
        }
    }

    @Test("200 concurrent redemptions split over two instances sharing the store: exactly one succeeds", arguments: StoreKind.available)
    func concurrentRedeemAcrossInstances(kind: StoreKind) async throws {
        try await kind.with { store, second in
            let other = try await second()
            let code = try await store.issue(Self.grant())
            let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    let target = index.isMultiple(of: 2) ? store : other
                    group.addTask { try await target.redeem(code, now: Self.now) != nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(successes == 1)
        }
    }

    @Test(
        "600 concurrent inserts then takes of 150 keys in two kinds, each twice at once: one insert and one take of each succeed, with the winner's value",
        arguments: StoreKind.available)
    func concurrentManyKeys(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let keys = (0..<150).map { "key-\($0)" }
            let kinds: [RecordKind] = [.session, .handOffCode]
            // Every tenth key has expired by the time it is taken: its take finds nothing.
            func expiry(_ key: String) -> Date { Self.now.addingTimeInterval(key.hasSuffix("0") ? -1 : 60) }
            func value(_ key: String, _ kind: RecordKind, _ attempt: Int) -> Data { Data("\(key)/\(kind.rawValue)/\(attempt)".utf8) }
            let winners = try await withThrowingTaskGroup(of: (String, Data)?.self) { group in
                for key in keys {
                    for recordKind in kinds {
                        for attempt in 0..<2 {
                            group.addTask {
                                do {
                                    try await store.insert(recordKind, digest: key, value: value(key, recordKind, attempt), expiresAt: expiry(key))
                                    return ("\(recordKind.rawValue) \(key)", value(key, recordKind, attempt))
                                } catch let error as SwitchbackError where error.code == .storeFailed {
                                    return nil
                                }
                            }
                        }
                    }
                }
                return try await group.reduce(into: [String: [Data]]()) { winners, won in
                    if let (name, data) = won { winners[name, default: []].append(data) }
                }
            }
            #expect(winners.count == keys.count * kinds.count && winners.values.allSatisfy { $0.count == 1 }, "one insert of each key")
            let taken = try await withThrowingTaskGroup(of: (String, Data?).self) { group in
                for key in keys {
                    for recordKind in kinds {
                        for _ in 0..<2 {
                            group.addTask { ("\(recordKind.rawValue) \(key)", try await store.take(recordKind, digest: key, now: Self.now)) }
                        }
                    }
                }
                return try await group.reduce(into: [String: [Data]]()) { taken, took in
                    if let data = took.1 { taken[took.0, default: []].append(data) }
                }
            }
            for key in keys {
                for recordKind in kinds {
                    let name = "\(recordKind.rawValue) \(key)"
                    #expect(taken[name] == (key.hasSuffix("0") ? nil : winners[name]), "\(name)")
                }
            }
            if let postgres = store as? PostgresCompanionStore {
                let (statements, requests) = postgres.batching
                #expect(requests == 1_200 && statements < requests, "requests went together: \(requests) in \(statements) statements")
            }
        }
    }

    @Test(
        "many requests for a few keys, in opposite orders on two instances at once: none fails; one insert and one take of each key succeed",
        arguments: StoreKind.available)
    func contendedKeys(kind: StoreKind) async throws {
        try await kind.with { store, second in
            let other = try await second()
            let keys = (0..<8).map { "contended-\($0)" }
            for round in 0..<3 {
                // Each task walks the keys from its own starting point, forwards or backwards, so batches on two
                // instances meet the same rows in opposite orders.
                func order(_ task: Int) -> [String] {
                    let rotated = Array(keys[(task % 8)...] + keys[..<(task % 8)])
                    return task.isMultiple(of: 2) ? rotated : rotated.reversed()
                }
                let inserted = try await withThrowingTaskGroup(of: Int.self) { group in
                    for task in 0..<64 {
                        let target = task.isMultiple(of: 3) ? other : store
                        group.addTask {
                            var wins = 0
                            for key in order(task) {
                                do {
                                    try await target.insert(
                                        .handOffCode, digest: "\(round)-\(key)", value: Data(key.utf8), expiresAt: Self.now.addingTimeInterval(60))
                                    wins += 1
                                } catch let error as SwitchbackError where error.message.contains("already exists") {}
                            }
                            return wins
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(inserted == keys.count, "round \(round)")
                let taken = try await withThrowingTaskGroup(of: Int.self) { group in
                    for task in 0..<64 {
                        let target = task.isMultiple(of: 3) ? other : store
                        group.addTask {
                            var found = 0
                            for key in order(task)
                            where try await target.take(.handOffCode, digest: "\(round)-\(key)", now: Self.now) == Data(key.utf8) {
                                found += 1
                            }
                            return found
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(taken == keys.count, "round \(round)")
            }
        }
    }

    @Test("a reused, expired, unknown or malformed code gets nothing", arguments: StoreKind.available)
    func refused(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let code = try await store.issue(Self.grant())
            #expect(try await store.redeem(code, now: Self.now) == Self.grant())
            #expect(try await store.redeem(code, now: Self.now) == nil, "reused")
            let short = try await store.issue(Self.grant(lifetime: 60))
            #expect(try await store.redeem(short, now: Self.now.addingTimeInterval(60)) == nil, "expired at its expiry instant")
            #expect(try await store.redeem(String(repeating: "A", count: 43), now: Self.now) == nil, "unknown")
            #expect(try await store.redeem("../../etc", now: Self.now) == nil, "malformed")
        }
    }

    @Test("codes carry 256 random bits and differ; expired ones are purged", arguments: StoreKind.available)
    func issueAndPurge(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let first = try await store.issue(Self.grant(lifetime: 10))
            let second = try await store.issue(Self.grant(lifetime: 100))
            #expect(first != second)
            #expect(first.count == 43)
            #expect(try await store.purge(now: Self.now.addingTimeInterval(50)) == 1)
            #expect(try await store.redeem(second, now: Self.now.addingTimeInterval(50)) != nil)
        }
    }

    @Test("kinds are separate namespaces; a key cannot be stored twice; read does not consume", arguments: StoreKind.available)
    func namespaces(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let state = "state-0123456789abcdef"
            try await store.insert(.authorization, secret: state, ["flow": "one"], expiresAt: Self.now.addingTimeInterval(60))
            await #expect(throws: SwitchbackError.self) {
                try await store.insert(.authorization, secret: state, ["flow": "two"], expiresAt: Self.now.addingTimeInterval(60))
            }
            #expect(try await store.redeem(.completion, secret: state, as: [String: String].self, now: Self.now) == nil, "another kind")
            #expect(try await store.lookUp(.authorization, secret: state, as: [String: String].self, now: Self.now) == ["flow": "one"])
            #expect(try await store.redeem(.authorization, secret: state, as: [String: String].self, now: Self.now) == ["flow": "one"])
            #expect(try await store.lookUp(.authorization, secret: state, as: [String: String].self, now: Self.now) == nil)
        }
    }

    @Test(
        "replace changes a live record of its kind in place and nothing else: not a missing, expired or other-kind one",
        arguments: StoreKind.available)
    func replaceInPlace(kind: StoreKind) async throws {
        try await kind.with { store, shared in
            let digest = Secrets.digest("flow-0123456789abcdef")
            let later = Self.now.addingTimeInterval(60)
            #expect(
                try await !store.replace(.completion, digest: digest, value: Data("new".utf8), expiresAt: later, now: Self.now), "nothing to replace")
            try await store.insert(.completion, digest: digest, value: Data("old".utf8), expiresAt: later)
            #expect(try await !store.replace(.authorization, digest: digest, value: Data("x".utf8), expiresAt: later, now: Self.now), "another kind")
            #expect(try await store.replace(.completion, digest: digest, value: Data("new".utf8), expiresAt: later, now: Self.now))
            // Another instance sees the new value; past the record's expiry nothing is replaced or read.
            #expect(try await shared().read(.completion, digest: digest, now: Self.now) == Data("new".utf8))
            #expect(try await !store.replace(.completion, digest: digest, value: Data("late".utf8), expiresAt: later, now: later))
            #expect(try await store.read(.completion, digest: digest, now: later) == nil)
            #expect(try await store.take(.completion, digest: digest, now: Self.now) == Data("new".utf8))
        }
    }

    @Test("the store holds the digest of a secret, never the secret", arguments: StoreKind.available)
    func digestsOnly(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let code = try await store.issue(Self.grant())
            #expect(try await store.read(.handOffCode, digest: code, now: Self.now) == nil)
            #expect(try await store.read(.handOffCode, digest: Secrets.digest(code), now: Self.now) != nil)
        }
    }

    /// Grants and sessions are written by `JSONObjectWriter` and read by `JSONReader` now; records written by
    /// the previous version (Foundation's coders) must still open, and its instances must open the new ones.
    @Test("hand-off grants, sessions, requests and answers read and write the same JSON as Foundation's coders, both ways")
    func flatRecordsMatchFoundation() throws {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let names = ["alice", "", "Ünïcødé \u{1F600}", "quote \" back \\ slash / tab \t nul \u{0}", String(repeating: "x", count: 300)]
        let times = [0, 1_764_150_000, 1_764_150_000.123_456, 4_102_444_800.5, 1e-3]
        for (index, name) in names.enumerated() {
            for (offset, time) in times.enumerated() {
                let at = Date(timeIntervalSince1970: time)
                let grants = [
                    HandOffGrant(subject: name, clientID: "app", issuedAt: at, expiresAt: at.addingTimeInterval(60)),
                    HandOffGrant(
                        subject: "s\(index)", clientID: name, issuedAt: at, expiresAt: at, displayName: name,
                        tokenExpiresAt: at.addingTimeInterval(0.25)),
                ]
                for grant in grants {
                    #expect(try decoder.decode(HandOffGrant.self, from: grant.json()) == grant)
                    #expect(HandOffGrant.read(try Secrets.encoder.encode(grant)) == grant)
                }
                let sessions = [
                    SessionRecord(subject: name, acr: nil, createdAt: at, expiresAt: at.addingTimeInterval(3600)),
                    SessionRecord(
                        subject: name, acr: "urn:acr:\(offset)", createdAt: at, expiresAt: at, issuer: "https://id.example/\(name)", sessionID: name,
                        signedInAt: at.addingTimeInterval(-1.5)),
                ]
                for session in sessions {
                    #expect(try decoder.decode(SessionRecord.self, from: session.json()) == session)
                    #expect(SessionRecord.read(try Secrets.encoder.encode(session)) == session)
                }
            }
        }
        // The hand-off route's request and answer, which the app reads with Foundation's decoder.
        for goto in [nil, "https://web.example.com/app?x=1&y=%2F", "\u{1F600}\"\\"] {
            let request = CompanionAPI.HandOffRequest(goto: goto)
            #expect(try JSONDecoder().decode(CompanionAPI.HandOffRequest.self, from: request.json()) == request)
            #expect(CompanionAPI.HandOffRequest.read(try JSONEncoder().encode(request)) == request)
            let answer = CompanionAPI.HandOffIssued(handoffotp: "code-\(goto?.count ?? 0)", expiresIn: 60, redeemURL: goto)
            #expect(try JSONDecoder().decode(CompanionAPI.HandOffIssued.self, from: answer.json()) == answer)
            #expect(CompanionAPI.HandOffIssued.read(try JSONEncoder().encode(answer)) == answer)
        }
        // A record missing what it must have, or with a member of the wrong type, does not open.
        #expect(throws: (any Error).self) { try HandOffGrant(json: JSONMembers(["subject": "a", "clientID": "b", "issuedAt": .number(1)])) }
        #expect(throws: (any Error).self) {
            try SessionRecord(json: JSONMembers(["subject": .number(1), "createdAt": .number(1), "expiresAt": .number(2)]))
        }
    }

    /// Records already stored (and instances still running the same keys) must keep opening: the derivation
    /// keys its extract once per server key, and must stay exactly HKDF-SHA256 as swift-crypto gives it.
    @Test(
        "a record key is exactly HKDF-SHA256 of the secret, the server's record key as salt and the kind, for every kind and secrets of every shape")
    func recordKeyIsHKDF() throws {
        let salt = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
        let keys = try RecordKeys([Base64URL.encode(salt)])
        var secrets = ["", "a", String(repeating: "x", count: 64), String(repeating: "y", count: 65), "é ü \u{1F600}"]
        secrets += (0..<40).map { Base64URL.encode((0..<(1 + $0 * 7)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }) }
        for kind in RecordKind.allCases {
            for secret in secrets {
                let expected = HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: SymmetricKey(data: Data(secret.utf8)), salt: salt, info: Data(kind.rawValue.utf8), outputByteCount: 32)
                #expect(RecordSealing.key(for: secret, kind: kind, under: keys.current).key == expected, "\(kind) \(secret.prefix(12))")
            }
        }
    }
}

@Suite("PostgresCompanionStore configuration")
struct PostgresCompanionStoreConfigurationTests {
    @Test(
        "a schema name that is not a plain identifier (or is PostgreSQL's, or too long for its channel) and a URL that is not postgres:// are refused"
    )
    func refusesBadConfiguration() {
        #expect(throws: SwitchbackError.self) { try PostgresCompanionStore(url: "postgres://u@127.0.0.1/db", schema: "x; DROP TABLE y") }
        #expect(throws: SwitchbackError.self) { try PostgresCompanionStore(url: "postgres://u@127.0.0.1/db", schema: "pg_catalog") }
        #expect(throws: SwitchbackError.self) {
            try PostgresCompanionStore(url: "postgres://u@127.0.0.1/db", schema: String(repeating: "a", count: 37))
        }
        #expect(throws: SwitchbackError.self) { try PostgresCompanionStore(url: "mysql://u@127.0.0.1/db") }
        #expect(throws: SwitchbackError.self) { try PostgresCompanionStore(url: "postgres://127.0.0.1/db") }
    }

    @Test(
        "an unreachable server is tried again until the start's timeout (a database still starting), then fails typed, naming the refused connection")
    func unreachable() async throws {
        let store = try PostgresCompanionStore(
            url: "postgres://switchback@127.0.0.1:1/switchback", logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let started = ContinuousClock.now
        let error = await #expect(throws: SwitchbackError.self) { try await store.start(timeout: .seconds(2)) }
        #expect(ContinuousClock.now - started >= .seconds(2), "tried until the timeout")
        #expect(
            error?.message.contains("no connection within") == true && error?.message.contains("Connection refused") == true,
            "\(String(describing: error))")
    }

    @Test(
        "a role or a database the server does not have fails start with the server's reason",
        .enabled(if: StoreKind.postgresURL != nil || StoreKind.runningInCI))
    func startReasons() async throws {
        let url = try #require(StoreKind.postgresURL, "CI=true but SWITCHBACK_TEST_POSTGRES_URL is unset")
        for (change, reason) in [
            ({ (url: inout URLComponents) in url.user = "nobody" }, #"role "nobody" does not exist"#),
            ({ (url: inout URLComponents) in url.path = "/nosuchdb" }, #"database "nosuchdb" does not exist"#),
        ] {
            var components = try #require(URLComponents(string: url))
            change(&components)
            let store = try PostgresCompanionStore(
                url: try #require(components.string), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            // The server's answer to the first connection, not the start's timeout, which names no reason.
            let error = await #expect(throws: SwitchbackError.self) { try await store.start(timeout: .seconds(30)) }
            #expect(error?.code == .storeFailed && error?.message.contains(reason) == true, "\(String(describing: error))")
        }
    }

    /// Starts a store on `url` with a 2 s timeout, and expects the first connection's refusal, which
    /// names `sqlState`, to have been taken as one that may pass: tried again until the timeout, then named.
    static func expectRetriedUntilTimeout(_ url: String, naming sqlState: String) async throws {
        let log = CapturingLogHandler.Sink()
        let store = try PostgresCompanionStore(url: url, logger: CapturingLogHandler.logger(log, label: "store"))
        let began = ContinuousClock.now
        let error = await #expect(throws: SwitchbackError.self) { try await store.start(timeout: .seconds(2)) }
        let message = error?.message ?? ""
        #expect(ContinuousClock.now - began >= .milliseconds(1900), "waited out the timeout, not refused at once")
        #expect(message.contains("accepted no connection within") && message.contains(sqlState), "\(message)")
        #expect(log.text.contains("trying again"), "tried again: \(log.text)")
    }

    @Test(
        "a role at its connection limit (53300, which may pass) is tried again until the start timeout, then named",
        .enabled(if: StoreKind.postgresURL != nil || StoreKind.runningInCI))
    func tooManyConnections() async throws {
        let url = try #require(StoreKind.postgresURL, "CI=true but SWITCHBACK_TEST_POSTGRES_URL is unset")
        let quiet = Logger(label: "admin") { _ in SwiftLogNoOpLogHandler() }
        let admin = PostgresClient(configuration: try PostgresCompanionStore.configuration(url))
        let running = Task { await admin.run() }
        defer { running.cancel() }
        func run(_ sql: String) async throws {
            for try await _ in try await admin.query(PostgresQuery(unsafeSQL: sql), logger: quiet) {}
        }
        // A role of its own (not a superuser, whom the limit does not bind) that may hold no connection.
        let role = "switchback_limited_" + SystemEntropy().randomBytes(count: 6).map { String(format: "%02x", $0) }.joined()
        try await run("CREATE ROLE \(role) LOGIN CONNECTION LIMIT 0")
        do {
            var components = try #require(URLComponents(string: url))
            components.user = role
            components.password = nil
            try await Self.expectRetriedUntilTimeout(try #require(components.string), naming: "53300")
        } catch {
            try? await run("DROP ROLE \(role)")
            throw error
        }
        try await run("DROP ROLE \(role)")
    }
}

/// `sslmode` as libpq reads it, and TLS required beyond loopback (issue 33).
@Suite("PostgreSQL sslmode")
struct PostgresTLSTests {
    static func tls(_ url: String) throws -> PostgresTLS {
        try PostgresTLS(try #require(URLComponents(string: url)))
    }

    @Test("each sslmode means what it means to libpq; verify-full checks the certificate and the host")
    func modes() throws {
        #expect(try Self.tls("postgres://u@db.internal/x?sslmode=verify-full") == .require(.certificateAndHost, rootCertificate: nil))
        #expect(try Self.tls("postgres://u@127.0.0.1/x?sslmode=verify-ca") == .require(.certificate, rootCertificate: nil))
        #expect(try Self.tls("postgres://u@localhost/x?sslmode=require") == .require(.none, rootCertificate: nil))
        #expect(try Self.tls("postgres://u@127.0.0.1/x?sslmode=disable") == .disable)
        #expect(try Self.tls("postgres://u@127.0.0.1/x") == .prefer, "libpq's default is prefer")
        #expect(try Self.tls("postgres://u@localhost/x?sslmode=allow") == .prefer)
        // With a CA file, require checks the chain, as libpq does.
        let ca = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-ca-\(UUID().uuidString).pem")
        try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: ca)
        defer { try? FileManager.default.removeItem(at: ca) }
        #expect(try Self.tls("postgres://u@db.internal/x?sslmode=require&sslrootcert=\(ca.path)") == .require(.certificate, rootCertificate: ca.path))
        #expect(
            try Self.tls("postgres://u@db.internal/x?sslmode=verify-full&sslrootcert=\(ca.path)")
                == .require(.certificateAndHost, rootCertificate: ca.path))
        #expect(
            try Self.tls("postgres://u@db.internal/x?sslmode=verify-ca&sslrootcert=\(ca.path)") == .require(.certificate, rootCertificate: ca.path))
    }

    @Test(
        "beyond loopback a server whose certificate is not verified is refused: require, and verify-ca without sslrootcert; the message suggests verify-full only"
    )
    func unverifiedRefused() {
        for url in [
            "postgres://u@db.internal/x?sslmode=require", "postgres://u@10.0.0.5/x?sslmode=verify-ca", "postgres://u@[2001:db8::1]/x?sslmode=require",
        ] {
            do {
                _ = try Self.tls(url)
                Issue.record("\(url) was accepted")
            } catch let error as SwitchbackError {
                #expect(error.code == .invalidConfiguration)
                #expect(error.message.contains("Use sslmode=verify-full") && !error.message.contains("or verify-ca"), "\(error.message)")
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test("beyond loopback, no TLS or a downgradable one is refused; unknown, repeated or missing values are refused")
    func refused() {
        for url in [
            "postgres://u@db.internal/x", "postgres://u@db.internal/x?sslmode=prefer", "postgres://u@db.internal/x?sslmode=allow",
            "postgres://u@db.internal/x?sslmode=disable", "postgres://u@10.0.0.5/x?sslmode=disable",
            "postgres://u@db.internal/x?sslmode=verify_full", "postgres://u@127.0.0.1/x?sslmode=Require",
            "postgres://u@db.internal/x?sslmode=require&sslmode=disable",
            "postgres://u@db.internal/x?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        ] {
            #expect(throws: SwitchbackError.self, "\(url)") { try Self.tls(url) }
        }
    }

    @Test("the pool: 20 connections unless pool_max_conns says 1 to 200, once; a bad value refuses the URL")
    func poolSize() throws {
        func size(_ url: String) throws -> Int { try PostgresCompanionStore.poolSize(URLComponents(string: url)!) }
        #expect(try size("postgres://u@127.0.0.1/x") == 20)
        #expect(try size("postgres://u@127.0.0.1/x?pool_max_conns=64") == 64)
        #expect(try size("postgres://u@db.internal/x?sslmode=verify-full&pool_max_conns=1") == 1)
        for url in [
            "postgres://u@127.0.0.1/x?pool_max_conns=0", "postgres://u@127.0.0.1/x?pool_max_conns=201",
            "postgres://u@127.0.0.1/x?pool_max_conns=many",
            "postgres://u@127.0.0.1/x?pool_max_conns=8&pool_max_conns=9", "postgres://u@127.0.0.1/x?pool_max_conns=",
        ] {
            #expect(throws: SwitchbackError.self, "\(url)") { try size(url) }
            #expect(throws: SwitchbackError.self, "\(url)") { try PostgresCompanionStore.configuration(url) }
        }
    }

    @Test("a URL parameter the store does not read is refused by name, never by value: a password there would be ignored and printed")
    func unknownParameters() throws {
        for (url, named) in [
            ("postgres://u@127.0.0.1/x?password=hunter2", "password"), ("postgres://u@127.0.0.1/x?connect_timeout=5", "connect_timeout"),
            ("postgres://u@127.0.0.1/x?sslmode=disable&application_name=app", "application_name"),
        ] {
            do {
                _ = try PostgresCompanionStore.configuration(url)
                Issue.record("\(url) was accepted")
            } catch let error as SwitchbackError {
                #expect(
                    error.code == .invalidConfiguration && error.message.contains(named) && !error.message.contains("hunter2"), "\(error.message)")
            }
        }
        _ = try PostgresCompanionStore.configuration("postgres://u@127.0.0.1/x?sslmode=disable&pool_max_conns=4")
    }

    static let caFile = ProcessInfo.processInfo.environment["SWITCHBACK_TEST_POSTGRES_CA"]

    @Test(
        "a real TLS connection: verify-full to the name on the certificate with its CA works; by an address it does not name, or with another CA, the start fails naming why; verify-ca accepts the address, not another CA",
        .enabled(if: caFile != nil || StoreKind.runningInCI))
    func realTLS() async throws {
        let ca = try #require(Self.caFile, "CI=true but SWITCHBACK_TEST_POSTGRES_CA is unset; scripts/postgres.sh makes the server's CA")
        let base = try #require(StoreKind.postgresURL)
        let port = try #require(URLComponents(string: base)?.port)
        func store(_ host: String, _ query: String) throws -> PostgresCompanionStore {
            try PostgresCompanionStore(
                url: "postgres://switchback@\(host):\(port)/switchback?\(query)",
                schema: "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))
        }
        let verified = try store("localhost", "sslmode=verify-full&sslrootcert=\(ca)")
        try await verified.start(timeout: .seconds(45))
        let code = try await verified.issue(CompanionStoreTests.grant(), entropy: SystemEntropy())
        #expect(try await verified.redeem(code, now: CompanionStoreTests.now) != nil, "the store works over the verified connection")
        await verified.stop()

        // The certificate names localhost only: the same server by its address is not the server it names.
        let wrongHost = try store("127.0.0.1", "sslmode=verify-full&sslrootcert=\(ca)")
        let hostError = await #expect(throws: SwitchbackError.self) { try await wrongHost.start(timeout: .seconds(5)) }
        #expect(hostError?.code == .storeFailed, "\(String(describing: hostError))")
        #expect(hostError?.message.contains("refused the first connection") == true, "the TLS failure is named: \(String(describing: hostError))")
        // verify-ca checks the chain and not the name: the same address is accepted.
        let caOnly = try store("127.0.0.1", "sslmode=verify-ca&sslrootcert=\(ca)")
        try await caOnly.start(timeout: .seconds(45))
        await caOnly.stop()

        // Another CA: the server's certificate does not chain to it.
        let otherKey = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("Another CA") }
        let other = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(otherKey.publicKey), notValidBefore: Date() - 3600, notValidAfter: Date() + 86400,
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)) },
            issuerPrivateKey: .init(otherKey))
        let otherFile = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-other-ca-\(UUID().uuidString).pem")
        try other.serializeAsPEM().pemString.write(to: otherFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: otherFile) }
        let wrongCA = try store("localhost", "sslmode=verify-full&sslrootcert=\(otherFile.path)")
        let caError = await #expect(throws: SwitchbackError.self) { try await wrongCA.start(timeout: .seconds(5)) }
        #expect(caError?.code == .storeFailed, "\(String(describing: caError))")
        #expect(caError?.message.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(String(describing: caError))")
        #expect(caError?.message.contains("refused the first connection") == true, "a TLS failure is not tried again")
        let caOnlyWrongCA = try store("127.0.0.1", "sslmode=verify-ca&sslrootcert=\(otherFile.path)")
        await #expect(throws: SwitchbackError.self, "verify-ca still checks the chain") { try await caOnlyWrongCA.start(timeout: .seconds(5)) }

        // require encrypts without checking who answers (libpq's meaning): it connects to this server too.
        let encrypted = try store("127.0.0.1", "sslmode=require")
        try await encrypted.start(timeout: .seconds(45))
        await encrypted.stop()
    }
}
