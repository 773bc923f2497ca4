import Foundation
import Testing
@testable import Switchback
import SwitchbackServer

/// One-time hand-off codes: single use under concurrency, expiry, and only digests kept.
@Suite("HandOffCodeStore (in memory)")
struct HandOffCodeStoreTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func grant(lifetime: TimeInterval = 60) -> HandOffGrant {
        HandOffGrant(subject: "9b1f7c2e-alice", clientID: "native-rs", issuedAt: now, expiresAt: now.addingTimeInterval(lifetime))
    }

    @Test("200 concurrent redemptions of one code: exactly one gets the grant")
    func concurrentRedeem() async throws {
        let store = InMemoryHandOffCodeStore()
        let code = try await store.issue(Self.grant())
        let successes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 {
                group.addTask { try await store.redeem(code, now: Self.now) != nil }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(successes == 1)
    }

    @Test("a reused, expired, unknown or malformed code gets nothing")
    func refused() async throws {
        let store = InMemoryHandOffCodeStore()
        let code = try await store.issue(Self.grant())
        #expect(try await store.redeem(code, now: Self.now) == Self.grant())
        #expect(try await store.redeem(code, now: Self.now) == nil, "reused")
        let short = try await store.issue(Self.grant(lifetime: 60))
        #expect(try await store.redeem(short, now: Self.now.addingTimeInterval(60)) == nil, "expired at its expiry instant")
        #expect(try await store.redeem(String(repeating: "A", count: 43), now: Self.now) == nil, "unknown")
        #expect(try await store.redeem("../../etc", now: Self.now) == nil, "malformed")
    }

    @Test("codes carry 256 random bits and differ; expired ones are purged")
    func issueAndPurge() async throws {
        let store = InMemoryHandOffCodeStore()
        let first = try await store.issue(Self.grant(lifetime: 10))
        let second = try await store.issue(Self.grant(lifetime: 100))
        #expect(first != second)
        #expect(first.count == 43)
        #expect(try await store.purge(now: Self.now.addingTimeInterval(50)) == 1)
        #expect(try await store.redeem(second, now: Self.now.addingTimeInterval(50)) != nil)
    }
}
