import Foundation

/// A value behind an `NSLock`: the one lock box of this repository (`Synchronization.Mutex` needs
/// iOS 18 / macOS 15, above the package's floor). Not part of the supported API.
@_spi(SwitchbackInternals) public final class LockedValue<Value>: @unchecked Sendable {  // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
