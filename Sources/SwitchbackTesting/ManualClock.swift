public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// A clock that moves only when the test moves it. Sleepers wake when ``advance(by:)`` passes their
/// deadline, so timers (a grace period, a sign-in's time limit) fire exactly when a test says.
public final class ManualClock: FlowClock {
    private struct Sleeper {
        let id: UInt64
        let deadline: Date
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct Storage {
        var now: Date
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let storage: LockedValue<Storage>

    public init(_ now: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        storage = LockedValue(Storage(now: now))
    }

    public func now() -> Date { storage.withLock { $0.now } }

    /// Moves the clock forward (or back, with a negative interval) and wakes the sleepers now due.
    public func advance(by seconds: TimeInterval) {
        let due = storage.withLock { storage -> [Sleeper] in
            storage.now = storage.now.addingTimeInterval(seconds)
            let now = storage.now
            let due = storage.sleepers.filter { $0.deadline <= now }
            storage.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    public func set(_ date: Date) {
        advance(by: date.timeIntervalSince(now()))
    }

    /// When the earliest sleeper wakes, if any waits.
    public var nextDeadline: Date? { storage.withLock { $0.sleepers.map(\.deadline).min() } }

    /// How many sleepers are waiting (a test can wait for a timer to be armed before advancing).
    public var sleeperCount: Int { storage.withLock { $0.sleepers.count } }

    public func sleep(for seconds: TimeInterval) async throws {
        let id = storage.withLock { storage -> UInt64 in
            storage.nextID += 1
            return storage.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = storage.withLock { storage -> Bool in
                    if Task.isCancelled || seconds <= 0 { return true }
                    storage.sleepers.append(Sleeper(id: id, deadline: storage.now.addingTimeInterval(seconds), continuation: continuation))
                    return false
                }
                if resumeNow {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let cancelled = storage.withLock { storage -> Sleeper? in
                guard let index = storage.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return storage.sleepers.remove(at: index)
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }
}
