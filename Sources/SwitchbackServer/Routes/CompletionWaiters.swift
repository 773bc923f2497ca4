import Foundation

/// The status requests waiting for a backend completion, woken when the flow's record changes.
///
/// At most one request waits per flow (a second gets `nil` from ``enter(_:)``), and at most `limit` in all,
/// so an anonymous client cannot hold an unbounded number of connections and store reads. A waiter sleeps
/// until ``signal(_:)`` (this instance finished the flow, or the store announced another instance did),
/// its deadline, or the recheck interval, whichever comes first; every continuation is resumed exactly once.
actor CompletionWaiters {
    private struct Waiter {
        let ticket: UInt64
        var continuation: CheckedContinuation<Void, Never>?
    }

    let limit: Int
    private var waiters: [String: Waiter] = [:]
    private var nextTicket: UInt64 = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// How many requests wait now.
    var count: Int { waiters.count }

    /// Registers the one waiter for `digest`; nil when the flow already has one or the server is full.
    func enter(_ digest: String) -> UInt64? {
        guard waiters[digest] == nil, waiters.count < limit else { return nil }
        nextTicket += 1
        waiters[digest] = Waiter(ticket: nextTicket, continuation: nil)
        return nextTicket
    }

    /// Ends the waiter's registration (resuming it if it still sleeps).
    func leave(_ digest: String, _ ticket: UInt64) {
        guard let waiter = waiters[digest], waiter.ticket == ticket else { return }
        waiters[digest] = nil
        waiter.continuation?.resume()
    }

    /// Sleeps until a signal for `digest`, `deadline` or `recheck` from now, or the task's cancellation.
    func wait(_ digest: String, _ ticket: UInt64, until deadline: ContinuousClock.Instant, recheck: Duration) async {
        let wake = min(deadline, ContinuousClock.now + recheck)
        guard waiters[digest]?.ticket == ticket, ContinuousClock.now < wake else { return }
        let timer = Task { [weak self] in
            try? await Task.sleep(until: wake, clock: .continuous)
            await self?.wake(digest, ticket)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled || waiters[digest]?.ticket != ticket {
                    continuation.resume()
                } else {
                    waiters[digest]?.continuation = continuation
                }
            }
        } onCancel: {
            Task { await self.wake(digest, ticket) }
        }
        timer.cancel()
    }

    /// Wakes the waiter for `digest`, if one sleeps.
    func signal(_ digest: String) {
        guard let continuation = waiters[digest]?.continuation else { return }
        waiters[digest]?.continuation = nil
        continuation.resume()
    }

    private func wake(_ digest: String, _ ticket: UInt64) {
        guard waiters[digest]?.ticket == ticket else { return }
        signal(digest)
    }
}
