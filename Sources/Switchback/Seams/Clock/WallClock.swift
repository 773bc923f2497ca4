public import Foundation

/// The source of the current time. Pass a fixed clock in tests.
public protocol WallClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that can also wait: the sign-in flow's grace period and time limit run on it. Pass a manual
/// clock in tests to fire them deterministically.
public protocol FlowClock: WallClock {
    /// Returns after `seconds` have passed on this clock; throws `CancellationError` when cancelled first.
    func sleep(for seconds: TimeInterval) async throws
}

extension SystemClock: FlowClock {
    public func sleep(for seconds: TimeInterval) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(seconds, 0) * 1_000_000_000))
    }
}
