package import Foundation
package import SwitchbackServer

/// A test store in front of a real one: every call goes on to `inner`, except those a double implements
/// itself (to record what it is given, to fail, to hang).
package protocol ForwardingStore: CompanionStore {
    var inner: any CompanionStore { get }
}

extension ForwardingStore {
    package var recordKeys: RecordKeys { inner.recordKeys }

    package func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        try await inner.insert(kind, digest: digest, value: value, expiresAt: expiresAt)
    }

    package func take(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? { try await inner.take(kind, digest: digest, now: now) }
    package func read(_ kind: RecordKind, digest: String, now: Date) async throws -> Data? { try await inner.read(kind, digest: digest, now: now) }
    package func purge(now: Date) async throws -> Int { try await inner.purge(now: now) }
    package func count(_ kind: RecordKind, now: Date) async throws -> Int { try await inner.count(kind, now: now) }

    package func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool {
        try await inner.replace(kind, digest: digest, value: value, expiresAt: expiresAt, now: now)
    }
}
