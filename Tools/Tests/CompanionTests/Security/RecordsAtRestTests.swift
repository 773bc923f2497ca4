import Foundation
import Logging
import NIOCore
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

extension CompanionRig {
    /// A session of `subject` issued straight into `store`, as an earlier sign-in on this browser made it.
    func session(in store: any CompanionStore, subject: String) async throws -> (id: String, cookie: String) {
        let now = clock.now()
        let record = SessionRecord(subject: subject, acr: nil, createdAt: now, expiresAt: now.addingTimeInterval(3600))
        let id = try await store.issue(.session, record, expiresAt: record.expiresAt)
        return (id, "__Host-switchback_session=\(id)")
    }
}

/// A store that keeps a copy of every value it is given, in front of a real one: what a database reader
/// would see.
actor RecordingStore: ForwardingStore {
    let inner: any CompanionStore
    private(set) var written: [(kind: RecordKind, value: Data)] = []

    init(_ inner: any CompanionStore) { self.inner = inner }

    func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        written.append((kind, value))
        try await inner.insert(kind, digest: digest, value: value, expiresAt: expiresAt)
    }

    func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool {
        written.append((kind, value))
        return try await inner.replace(kind, digest: digest, value: value, expiresAt: expiresAt, now: now)
    }
}

/// A store in front of a real one whose inserts of some kinds fail, as a database that is down does.
actor FailingInsertsStore: ForwardingStore {
    let inner: any CompanionStore
    private var failing: Set<RecordKind> = []

    init(_ inner: any CompanionStore) { self.inner = inner }

    func setFailing(_ kinds: Set<RecordKind>) { failing = kinds }

    func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        guard !failing.contains(kind) else { throw SwitchbackError(.storeFailed, "PostgreSQL query failed: the database is down") }
        try await inner.insert(kind, digest: digest, value: value, expiresAt: expiresAt)
    }
}

@Suite("Companion records at rest")
struct CompanionRecordsAtRestTests {
    @Test("a dump of the store holds no subject, state, verifier, nonce, token or session in any readable form", arguments: StoreKind.available)
    func nothingReadable(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let recording = RecordingStore(store)
            let rig = try await CompanionRig.start(store: recording, returns: .tokens)
            do {
                var secrets = ["9b1f7c2e-alice", "backend-secret", CompanionRig.binding]
                // Exchange with tokens, a hand-off and its redemption, a bridge and a completion.
                let started = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
                secrets.append(try #require(started.json["state"] as? String))
                guard case .redirect(let callback) = try await rig.signIn(try #require(started.json["authorization_url"] as? String)) else {
                    throw RigFailure("no redirect")
                }
                let exchanged = try await rig.post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
                let token = try #require(exchanged.json["access_token"] as? String)
                secrets += [token, try #require(exchanged.json["id_token"] as? String)]
                let issued = try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: ["Authorization": "Bearer \(token)"])
                let redeemText = try #require(issued.json["redeem_url"] as? String)
                let landing = try await rig.followRedeem(try #require(URL(string: redeemText)))
                let cookie = try #require(landing.headers["set-cookie"]?.split(separator: ";").first?.split(separator: "=").last)
                secrets.append(String(cookie))
                let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                secrets.append(flowID)
                let completion = try await rig.post("/completion/start", ["flow_id": flowID])
                guard case .redirect(let location) = try await rig.signIn(try #require(completion.json["authorization_url"] as? String)) else {
                    throw RigFailure("no redirect")
                }
                let finalPage = try #require(URL(string: location))
                _ = try await rig.get(finalPage)

                let written = await recording.written
                #expect(Set(written.map(\.kind)).isSuperset(of: [.authorization, .handOffCode, .session, .completion]))
                for record in written {
                    let raw = String(decoding: record.value, as: UTF8.self)
                    #expect(
                        (try? JSONSerialization.jsonObject(with: record.value, options: .fragmentsAllowed)) == nil,
                        "a \(record.kind.rawValue) record is readable JSON")
                    for secret in secrets {
                        #expect(
                            !raw.contains(secret)
                                && !record.value.base64EncodedString().contains(Data(secret.utf8).base64EncodedString().dropLast(4)))
                    }
                }
                await rig.stop()
            } catch {
                await rig.stop()
                throw error
            }
        }
    }

    @Test("a sealed value moved to another record's row, or altered, does not open: a typed store failure, never another record's data")
    func sealedValuesStayInTheirRow() async throws {
        let store = InMemoryCompanionStore()
        let now = Date()
        let first = try await store.issue(.session, ["subject": "alice"], expiresAt: now.addingTimeInterval(60))
        let second = try await store.issue(.session, ["subject": "bob"], expiresAt: now.addingTimeInterval(60))
        let firstValue = try #require(await store.read(.session, digest: Secrets.digest(first), now: now))
        // The attacker with write access copies alice's sealed value over bob's row.
        _ = await store.take(.session, digest: Secrets.digest(second), now: now)
        try await store.insert(.session, digest: Secrets.digest(second), value: firstValue, expiresAt: now.addingTimeInterval(60))
        await #expect(throws: TamperedRecord.self) { _ = try await store.lookUp(.session, secret: second, as: [String: String].self, now: now) }
        // Altered in place.
        var altered = firstValue
        altered[altered.count - 1] ^= 0x01
        _ = await store.take(.session, digest: Secrets.digest(first), now: now)
        try await store.insert(.session, digest: Secrets.digest(first), value: altered, expiresAt: now.addingTimeInterval(60))
        await #expect(throws: TamperedRecord.self) { _ = try await store.lookUp(.session, secret: first, as: [String: String].self, now: now) }
    }

    @Test(
        "a database writer cannot mint a session: a record sealed without the server's record key is refused with 401, counted, never a 5xx; the same record sealed by the server opens",
        arguments: StoreKind.available)
    func writerCannotMint(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let rig = try await CompanionRig.start(store: store, returns: .session)
            do {
                let now = rig.clock.now()
                let victim = SessionRecord(subject: "victim-sub", acr: nil, createdAt: now, expiresAt: now.addingTimeInterval(3600))
                // The attacker knows the format and picks the secret, but holds no record key of this server.
                let attacker = InMemoryCompanionStore()
                let forgedID = try await attacker.issue(.session, victim, expiresAt: now.addingTimeInterval(3600))
                let forged = try #require(await attacker.read(.session, digest: Secrets.digest(forgedID), now: now))
                try await store.insert(.session, digest: Secrets.digest(forgedID), value: forged, expiresAt: now.addingTimeInterval(3600))
                let refused = try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(forgedID)"])
                #expect(refused.status == 401, "a minted session was answered \(refused.status)")
                #expect(!String(decoding: refused.body, as: UTF8.self).contains("victim-sub"))
                #expect(rig.log.text.contains("sealed under no key this server holds"))
                #expect(try await store.read(.session, digest: Secrets.digest(forgedID), now: now) == nil, "the row that did not open is removed")
                // A record the first version sealed (no version byte, no key): refused the same way.
                let legacyID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                try await store.insert(
                    .session, digest: Secrets.digest(legacyID), value: Data(forged.dropFirst(5)), expiresAt: now.addingTimeInterval(3600))
                #expect(try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(legacyID)"]).status == 401)

                // A writer who moves a genuine session's row expiry forward: the sealed expiry still ends it.
                let endedID = try await store.issue(
                    .session, SessionRecord(subject: "victim-sub", acr: nil, createdAt: now - 7200, expiresAt: now - 3600),
                    expiresAt: now.addingTimeInterval(3600))
                #expect(try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(endedID)"]).status == 401)

                // The control: the server's own record for the same subject opens.
                let genuineID = try await store.issue(.session, victim, expiresAt: now.addingTimeInterval(3600))
                let genuine = try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(genuineID)"])
                #expect(genuine.status == 200 && String(decoding: genuine.body, as: UTF8.self).contains("victim-sub"))
                await rig.stop()
            } catch {
                await rig.stop()
                throw error
            }
        }
    }

    @Test("record keys rotate: a record sealed under the previous key opens while that key is listed; new records are sealed under the current one")
    func rotation() async throws {
        let old = Base64URL.encode(Data((0..<32).map { UInt8($0) }))
        let new = Base64URL.encode(Data((0..<32).map { UInt8(255 - $0) }))
        let now = Date()
        let before = InMemoryCompanionStore(recordKeys: try RecordKeys([old]))
        let secret = try await before.issue(.session, ["subject": "alice"], expiresAt: now.addingTimeInterval(60))
        let sealed = try #require(await before.read(.session, digest: Secrets.digest(secret), now: now))

        let rotating = InMemoryCompanionStore(recordKeys: try RecordKeys([new, old]))
        try await rotating.insert(.session, digest: Secrets.digest(secret), value: sealed, expiresAt: now.addingTimeInterval(60))
        #expect(try await rotating.lookUp(.session, secret: secret, as: [String: String].self, now: now) == ["subject": "alice"])
        let fresh = try await rotating.issue(.session, ["subject": "bob"], expiresAt: now.addingTimeInterval(60))
        let freshSealed = try #require(await rotating.read(.session, digest: Secrets.digest(fresh), now: now))
        #expect(Array(freshSealed.prefix(5)) == [2] + (try RecordKeys([new])).current.id, "sealed under the current key, which it names")

        let after = InMemoryCompanionStore(recordKeys: try RecordKeys([new]))
        try await after.insert(.session, digest: Secrets.digest(secret), value: sealed, expiresAt: now.addingTimeInterval(60))
        await #expect(throws: TamperedRecord.self, "the old key is gone") {
            _ = try await after.lookUp(.session, secret: secret, as: [String: String].self, now: now)
        }
        try await after.insert(.session, digest: Secrets.digest(fresh), value: freshSealed, expiresAt: now.addingTimeInterval(60))
        #expect(try await after.lookUp(.session, secret: fresh, as: [String: String].self, now: now) == ["subject": "bob"])

        // A key that is not 32 bytes, a key twice, or none: refused without repeating a key.
        for keys in [["c2hvcnQ"], [new, new], []] {
            #expect(throws: SwitchbackError.self) { try RecordKeys(keys) }
        }
        do {
            _ = try RecordKeys([new, "c2hvcnQ"])
        } catch let error as SwitchbackError {
            #expect(error.message.contains("key 2") && !error.message.contains(new))
        }
    }
}
