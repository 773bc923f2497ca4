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
/// A signal that finds its waiter awake (reading the store) is kept, and its next ``wait(_:_:until:recheck:)``
/// returns at once: no change is lost between a read and the sleep after it.
actor CompletionWaiters {
    private struct Waiter {
        let ticket: UInt64
        var continuation: CheckedContinuation<Void, Never>?
        /// Signalled while awake: the next wait reads the store again instead of sleeping.
        var woken: Bool
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

    /// How many of them are asleep (the others are reading the store).
    var sleeping: Int { waiters.values.filter { $0.continuation != nil }.count }

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
        // Woken from the start: a change between the caller's read and this registration signalled no one,
        // so the first wait returns at once and the caller reads again.
        waiters[digest] = Waiter(ticket: nextTicket, continuation: nil, woken: true)
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
        if waiters[digest]?.woken == true {
            waiters[digest]?.woken = false
            return
        }
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
        for digest in Array(waiters.keys) { signal(digest) }
    }

    /// Wakes the waiter for `digest`: at once if it sleeps, at its next wait if it is reading the store.
    func signal(_ digest: String) {
        guard let continuation = waiters[digest]?.continuation else {
            waiters[digest]?.woken = true
            return
        }
        waiters[digest]?.continuation = nil
        continuation.resume()
    }

    private func wake(_ digest: String, _ ticket: UInt64) {
        guard waiters[digest]?.ticket == ticket else { return }
        signal(digest)
    }
}
