import Foundation

/// A value behind an `NSLock`. `Synchronization.Mutex` needs iOS 18 / macOS 15, above our floor.
final class LockedValue<Value>: @unchecked Sendable {  // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
