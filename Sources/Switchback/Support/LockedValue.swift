import Foundation

/// A value behind an `NSLock`: the one lock box of this repository (`Synchronization.Mutex` needs
/// iOS 18 / macOS 15, above the package's floor). Not part of the supported API.
///
/// The value lives in memory of its own rather than in a stored property: the lock already makes each
/// access exclusive, and a class's stored property would add the runtime's own exclusivity bookkeeping to
/// every access (a thread-local lookup each time; it showed in the profile of an ID-token validation).
@_spi(SwitchbackInternals) public final class LockedValue<Value>: @unchecked Sendable {  // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private let value: UnsafeMutablePointer<Value>

    public init(_ value: Value) {
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value.pointee)
    }
}
