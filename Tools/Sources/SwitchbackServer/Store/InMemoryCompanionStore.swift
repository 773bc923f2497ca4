public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// The companion's records in memory: the embedded default, for one server instance.
public actor InMemoryCompanionStore: CompanionStore {
    private struct Key: Hashable {
        let kind: RecordKind
        let digest: String
    }

    private var records: [Key: (value: Data, expiresAt: Date)] = [:]
    public nonisolated let recordKeys: RecordKeys

    /// `recordKeys` defaults to a key of this process: nothing else reads these records.
    public init(recordKeys: RecordKeys = .random()) {
        self.recordKeys = recordKeys
    }

    public func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) throws {
        let key = Key(kind: kind, digest: digest)
        guard records[key] == nil else { throw SwitchbackError(.storeFailed, "a \(kind.rawValue) record with this key already exists") }
        records[key] = (value, expiresAt)
    }

    public func take(_ kind: RecordKind, digest: String, now: Date) -> Data? {
        guard let record = records.removeValue(forKey: Key(kind: kind, digest: digest)), record.expiresAt > now else { return nil }
        return record.value
    }

    public func read(_ kind: RecordKind, digest: String, now: Date) -> Data? {
        guard let record = records[Key(kind: kind, digest: digest)], record.expiresAt > now else { return nil }
        return record.value
    }

    public func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) -> Bool {
        let key = Key(kind: kind, digest: digest)
        guard let record = records[key], record.expiresAt > now else { return false }
        records[key] = (value, expiresAt)
        return true
    }

    public func count(_ kind: RecordKind, now: Date) -> Int {
        records.lazy.filter { $0.key.kind == kind && $0.value.expiresAt > now }.count
    }

    @discardableResult
    public func purge(now: Date) -> Int {
        let expired = records.filter { $0.value.expiresAt <= now }.map(\.key)
        for key in expired { records[key] = nil }
        return expired.count
    }
}
