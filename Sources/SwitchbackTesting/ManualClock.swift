public import Foundation
public import Switchback


/// A wall clock that moves only when the test moves it.
public final class ManualClock: WallClock {
    private let current: LockedValue<Date>

    public init(_ now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        current = LockedValue(now)
    }

    public func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward (or back, with a negative interval).
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}
