import Foundation

/// The status requests waiting for a backend completion, woken when the flow's record changes.
///
/// At most one request waits per flow, and at most `limit` in all, so an anonymous client cannot hold an
/// unbounded number of connections and store reads. A new request for a flow takes the place of the one
/// waiting (which answers at once): a client whose connection dropped mid-poll (the server is not told)
/// asks again without being refused, and only the flow ID's holder can ask. A waiter sleeps until
/// ``signal(_:)`` (this instance finished the flow, or the store announced another instance did),
/// ``wakeAll()`` (the store's listener started again, after announcements it may have missed), its deadline,
/// or the configured recheck interval, whichever comes first; every continuation is resumed exactly once.
actor CompletionWaiters {
    private struct Waiter {
        let ticket: UInt64
        var continuation: CheckedContinuation<Void, Never>?
    }

    let limit: Int
    private var waiters: [String: Waiter] = [:]
    private var nextTicket: UInt64 = 0
    /// Set by ``drain()``: no request waits any more.
    private var draining = false

    init(limit: Int) {
        self.limit = limit
    }

    /// How many requests wait now.
    var count: Int { waiters.count }

    /// Registers the one waiter for `digest`, ending the wait of the one before it; nil when the server is full.
    func enter(_ digest: String) -> UInt64? {
        if draining {
            // A ticket that is never current: the request answers with what the store holds now.
            nextTicket += 1
            return nextTicket
        }
        if let previous = waiters.removeValue(forKey: digest) {
            previous.continuation?.resume()
        } else if waiters.count >= limit {
            return nil
        }
        nextTicket += 1
        waiters[digest] = Waiter(ticket: nextTicket, continuation: nil)
        return nextTicket
    }

    /// Whether `ticket` is still the waiter of `digest` (false once a newer request took its place).
    func isCurrent(_ digest: String, _ ticket: UInt64) -> Bool {
        waiters[digest]?.ticket == ticket
    }

    /// Ends the waiter's registration (resuming it if it still sleeps).
    func leave(_ digest: String, _ ticket: UInt64) {
        guard let waiter = waiters[digest], waiter.ticket == ticket else { return }
        waiters[digest] = nil
        waiter.continuation?.resume()
    }

    /// Sleeps until a signal for `digest`, `deadline` or `recheck` from now (when given), or the task's
    /// cancellation.
    func wait(_ digest: String, _ ticket: UInt64, until deadline: ContinuousClock.Instant, recheck: Duration?) async {
        let wake = recheck.map { min(deadline, ContinuousClock.now + $0) } ?? deadline
        guard waiters[digest]?.ticket == ticket, ContinuousClock.now < wake else { return }
        let timer = Task { [weak self] in
            guard (try? await Task.sleep(until: wake, clock: .continuous)) != nil else { return }
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

    /// For a shutdown: every waiting request wakes and answers with what the store holds now (the app asks
    /// again, reaching another instance), and no request waits from now on.
    func drain() {
        draining = true
        let all = waiters.values.compactMap(\.continuation)
        waiters.removeAll()
        all.forEach { $0.resume() }
    }

    /// Wakes every sleeping waiter, each to read the store again and sleep on (the store's listener started
    /// listening again, and an announcement made before then reached no one).
    func wakeAll() {
        let sleeping = waiters.keys.filter { waiters[$0]?.continuation != nil }
        for digest in sleeping { signal(digest) }
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
