@_spi(SwitchbackInternals) import Switchback

/// Who runs the next statement of one kind, and with which requests: a state machine that does no I/O.
///
/// Up to `lanes` statements run at once. A request that finds a lane free runs a statement at once, alone or
/// with the requests that were already waiting; one that finds every lane busy waits, and the next statement
/// to finish hands its lane to the first waiter, who runs the waiters that have gathered since, up to
/// `largest`. A request alone never waits for a partner, and under load many requests share one statement.
/// At most `queued` requests wait; one more is turned away at once, so a flood costs time and memory only up
/// to that bound.
struct BatchQueue<Item, Waiter> {
    /// What an arriving request does.
    enum Arrival: Equatable {
        /// It takes a free lane and leads a statement now.
        case lead
        /// Every lane is busy: it ``wait(_:_:)``s.
        case wait
        /// Every lane is busy and `queued` requests already wait: it is turned away.
        case full
    }

    /// How many statements may run at once.
    let lanes: Int
    /// How many requests one statement carries at most.
    let largest: Int
    /// How many requests may wait at once.
    let queued: Int
    private var running = 0
    private var waiting: [(item: Item, waiter: Waiter)] = []
    /// How many statements have finished, and how many requests they carried.
    private(set) var finished: (statements: Int, requests: Int) = (0, 0)

    init(lanes: Int, largest: Int, queued: Int) {
        precondition(lanes > 0 && largest > 0 && queued >= 0, "a batch queue needs a lane and room for a request")
        self.lanes = lanes
        self.largest = largest
        self.queued = queued
    }

    /// How many requests wait for a lane.
    var waitingCount: Int { waiting.count }

    /// A request arrives: it leads a statement on a free lane, waits, or is turned away.
    mutating func arrive() -> Arrival {
        guard running < lanes else { return waiting.count < queued ? .wait : .full }
        running += 1
        return .lead
    }

    /// A request that found every lane busy waits for its answer or for a lane.
    mutating func wait(_ item: Item, _ waiter: Waiter) {
        waiting.append((item, waiter))
    }

    /// The waiting requests a leader carries beside its own, oldest first.
    mutating func companions() -> [(item: Item, waiter: Waiter)] {
        let count = min(waiting.count, largest - 1)
        defer { waiting.removeFirst(count) }
        return Array(waiting.prefix(count))
    }

    /// A statement that carried `requests` finished: the first waiter, who now leads with the lane it frees,
    /// or nil when no one waits and the lane is free.
    mutating func finish(carrying requests: Int) -> (item: Item, waiter: Waiter)? {
        finished.statements += 1
        finished.requests += requests
        guard !waiting.isEmpty else {
            running -= 1
            return nil
        }
        return waiting.removeFirst()
    }
}

/// Runs one kind of statement for concurrent requests, many to a statement under load (``BatchQueue``).
/// `run` answers a batch's items in their order, one answer each; when it throws, every request of the
/// batch gets the error. A statement, once started, runs to its end even when the request leading it is
/// cancelled: the other requests it carries still want their answers. A statement with no answer within
/// `deadline` (a database that stopped answering, a lock held elsewhere) fails its requests with
/// ``SwitchbackError/Code/storeFailed`` and frees its lane, so one stall does not hold every request after it.
final class BatchedStatement<Item: Sendable, Answer: Sendable>: Sendable {
    /// What a waiting request is woken with.
    private enum Turn {
        case answered(Result<Answer, any Error>)
        case lead
    }

    private typealias Waiter = CheckedContinuation<Turn, Never>
    private let queue: LockedValue<BatchQueue<Item, Waiter>>
    private let deadline: Duration
    private let run: @Sendable ([Item]) async throws -> [Answer]

    /// What a request turned away because `queued` requests already wait fails with.
    private let busy: SwitchbackError

    init(lanes: Int, largest: Int, queued: Int, deadline: Duration, run: @escaping @Sendable ([Item]) async throws -> [Answer]) {
        self.queue = LockedValue(BatchQueue(lanes: lanes, largest: largest, queued: queued))
        self.deadline = deadline
        self.run = run
        busy = SwitchbackError(.storeFailed, "the store is busy: \(queued) requests already wait for this kind of statement")
    }

    /// How many statements have run, and how many requests they carried.
    var finished: (statements: Int, requests: Int) { queue.withLock { $0.finished } }

    /// How many requests wait for a lane now.
    var waiting: Int { queue.withLock { $0.waitingCount } }

    /// The answer to `item`, from a statement of its own or one shared with other requests.
    /// A request turned away because `queued` requests already wait fails with
    /// ``SwitchbackError/Code/storeFailed`` (the routes answer 503) rather than waiting behind them.
    func callAsFunction(_ item: Item) async throws -> Answer {
        switch queue.withLock({ $0.arrive() }) {
        case .lead: return try await lead(item)
        case .full: throw busy
        case .wait: break
        }
        let turn = await withCheckedContinuation { (waiter: Waiter) in
            let arrival = queue.withLock { queue in
                // A lane may have come free, or the queue filled, since the first look.
                let arrival = queue.arrive()
                if arrival == .wait { queue.wait(item, waiter) }
                return arrival
            }
            switch arrival {
            case .lead: waiter.resume(returning: .lead)
            case .full: waiter.resume(returning: .answered(.failure(busy)))
            case .wait: break
            }
        }
        switch turn {
        case .answered(let answer): return try answer.get()
        case .lead: return try await lead(item)
        }
    }

    /// Runs `item` with the requests waiting now, answers them, and passes the lane on.
    private func lead(_ item: Item) async throws -> Answer {
        let companions = queue.withLock { $0.companions() }
        let answers: Result<[Answer], any Error>
        do {
            // A task of its own (`within` runs it so), so that a leader's cancellation does not fail the
            // requests it carries.
            let items = [item] + companions.map(\.item)
            guard let outcome = await within(deadline, { [run] in try await run(items) }) else {
                throw SwitchbackError(.storeFailed, "a batched store statement had no answer within \(deadline)")
            }
            let answered = try outcome.get()
            guard answered.count == companions.count + 1 else {
                throw SwitchbackError(.storeFailed, "a batched statement answered \(answered.count) of \(companions.count + 1) requests")
            }
            answers = .success(answered)
        } catch {
            answers = .failure(error)
        }
        let next = queue.withLock { $0.finish(carrying: companions.count + 1) }
        for (index, companion) in companions.enumerated() {
            companion.waiter.resume(returning: .answered(answers.map { $0[index + 1] }))
        }
        next?.waiter.resume(returning: .lead)
        return try answers.get()[0]
    }
}
