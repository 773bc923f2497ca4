@_spi(SwitchbackInternals) import Switchback

/// Who runs the next statement of one kind, and with which requests: a state machine that does no I/O.
///
/// Up to `lanes` statements run at once. A request that finds a lane free runs a statement at once, alone or
/// with the requests that were already waiting; one that finds every lane busy waits, and the next statement
/// to finish hands its lane to the first waiter, who runs the waiters that have gathered since, up to
/// `largest`. A request alone never waits for a partner, and under load many requests share one statement.
struct BatchQueue<Item, Waiter> {
    /// How many statements may run at once.
    let lanes: Int
    /// How many requests one statement carries at most.
    let largest: Int
    private var running = 0
    private var waiting: [(item: Item, waiter: Waiter)] = []
    /// How many statements have finished, and how many requests they carried.
    private(set) var finished: (statements: Int, requests: Int) = (0, 0)

    init(lanes: Int, largest: Int) {
        precondition(lanes > 0 && largest > 0, "a batch queue needs a lane and room for a request")
        self.lanes = lanes
        self.largest = largest
    }

    /// How many requests wait for a lane.
    var waitingCount: Int { waiting.count }

    /// A request arrives: true when it takes a free lane and leads a statement now; false when it must
    /// ``wait(_:_:)``.
    mutating func arrive() -> Bool {
        guard running < lanes else { return false }
        running += 1
        return true
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

    init(lanes: Int, largest: Int, deadline: Duration, run: @escaping @Sendable ([Item]) async throws -> [Answer]) {
        self.queue = LockedValue(BatchQueue(lanes: lanes, largest: largest))
        self.deadline = deadline
        self.run = run
    }

    /// How many statements have run, and how many requests they carried.
    var finished: (statements: Int, requests: Int) { queue.withLock { $0.finished } }

    /// How many requests wait for a lane now.
    var waiting: Int { queue.withLock { $0.waitingCount } }

    /// The answer to `item`, from a statement of its own or one shared with other requests.
    func callAsFunction(_ item: Item) async throws -> Answer {
        if queue.withLock({ $0.arrive() }) { return try await lead(item) }
        let turn = await withCheckedContinuation { (waiter: Waiter) in
            let leads = queue.withLock { queue in
                // A lane may have come free since the first look.
                if queue.arrive() { return true }
                queue.wait(item, waiter)
                return false
            }
            if leads { waiter.resume(returning: .lead) }
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
