import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer

/// Who runs which statement: lanes, waiting, hand-over, and the size of a batch.
@Suite("BatchQueue")
struct BatchQueueTests {
    @Test("a request takes a free lane; with every lane busy it waits; a finished statement hands its lane to the first waiter")
    func lanes() {
        var queue = BatchQueue<Int, String>(lanes: 2, largest: 8, queued: 100)
        let arrivals = [queue.arrive(), queue.arrive(), queue.arrive()]
        #expect(arrivals == [.lead, .lead, .wait], "two lanes, then a wait")
        queue.wait(3, "third")
        queue.wait(4, "fourth")
        let next = queue.finish(carrying: 1)
        #expect(next?.item == 3 && next?.waiter == "third", "the oldest waiter leads next, on the lane just freed")
        let meanwhile = queue.arrive()
        #expect(meanwhile == .wait, "the lane passed on, it did not come free")
        let carried = queue.companions().map(\.item)
        #expect(carried == [4])
        let afterSecond = queue.finish(carrying: 2)
        let afterFirst = queue.finish(carrying: 1)
        #expect(afterSecond == nil && afterFirst == nil)
        let again = [queue.arrive(), queue.arrive(), queue.arrive()]
        #expect(again == [.lead, .lead, .wait], "both lanes free again, and only two")
        #expect(queue.finished.statements == 3 && queue.finished.requests == 4)
    }

    @Test("with every lane busy, at most `queued` requests wait; one more is turned away until one of them leaves")
    func bounded() {
        var queue = BatchQueue<Int, Int>(lanes: 1, largest: 4, queued: 2)
        #expect(queue.arrive() == .lead)
        for item in 1...2 {
            #expect(queue.arrive() == .wait)
            queue.wait(item, item)
        }
        #expect(queue.arrive() == .full)
        #expect(queue.finish(carrying: 1)?.item == 1, "the lane goes to the oldest waiter")
        #expect(queue.arrive() == .wait, "room for one again")
    }

    @Test("a leader carries the oldest waiters, one fewer than the largest batch")
    func companions() {
        var queue = BatchQueue<Int, Int>(lanes: 1, largest: 4, queued: 100)
        let leads = queue.arrive()
        #expect(leads == .lead)
        for item in 1...6 { queue.wait(item, item) }
        let first = queue.companions().map(\.item)
        #expect(first == [1, 2, 3])
        #expect(queue.waitingCount == 3)
        let next = queue.finish(carrying: 4)
        #expect(next?.item == 4)
        let second = queue.companions().map(\.item)
        let third = queue.companions()
        #expect(second == [5, 6])
        #expect(third.isEmpty)
    }
}

/// Concurrent requests through one batched statement: each gets its own answer, under load many share a
/// statement, and a failure reaches exactly the requests of its statement.
@Suite("BatchedStatement")
struct BatchedStatementTests {
    /// What a fake statement saw: its batches, and the most that ran at once.
    final class Log: Sendable {
        let state = LockedValue<(batches: [[Int]], running: Int, most: Int)>(([], 0, 0))

        func run(_ items: [Int], failing: Int? = nil) async throws -> [Int] {
            state.withLock { state in
                state.batches.append(items)
                state.running += 1
                state.most = max(state.most, state.running)
            }
            defer { state.withLock { $0.running -= 1 } }
            try await Task.sleep(for: .milliseconds(5))
            if let failing, items.contains(failing) { throw SwitchbackError(.storeFailed, "a failing statement") }
            return items.map { $0 * 10 }
        }
    }

    static func answers(_ statement: BatchedStatement<Int, Int>, _ items: Range<Int>) async -> [Int: Result<Int, any Error>] {
        await withTaskGroup(of: (Int, Result<Int, any Error>).self) { group in
            for item in items {
                group.addTask {
                    do { return (item, .success(try await statement(item))) } catch { return (item, .failure(error)) }
                }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
    }

    @Test("300 concurrent requests on two lanes: each gets its own answer; statements carry up to 16, two at most at once")
    func concurrent() async throws {
        let log = Log()
        let statement = BatchedStatement<Int, Int>(lanes: 2, largest: 16, queued: 1_000, deadline: .seconds(10)) { try await log.run($0) }
        let answers = await Self.answers(statement, 0..<300)
        for item in 0..<300 { #expect(try answers[item]?.get() == item * 10) }
        let (batches, _, most) = log.state.withLock { $0 }
        #expect(most <= 2)
        #expect(batches.allSatisfy { $0.count <= 16 })
        #expect(batches.flatMap { $0 }.sorted() == Array(0..<300), "every request ran once")
        #expect(batches.count < 150, "requests that waited went together: \(batches.count) statements")
        #expect(statement.finished.statements == batches.count && statement.finished.requests == 300)
    }

    @Test("a statement that fails fails exactly the requests it carried; the others are answered")
    func failure() async throws {
        let log = Log()
        let statement = BatchedStatement<Int, Int>(lanes: 1, largest: 8, queued: 1_000, deadline: .seconds(10)) { try await log.run($0, failing: 37) }
        let answers = await Self.answers(statement, 0..<100)
        let failed = log.state.withLock { $0.batches.first { $0.contains(37) } } ?? []
        #expect(!failed.isEmpty)
        for item in 0..<100 {
            if failed.contains(item) {
                #expect(throws: SwitchbackError.self) { try answers[item]?.get() }
            } else {
                #expect(try answers[item]?.get() == item * 10)
            }
        }
    }

    @Test("a statement answering the wrong number of rows fails its requests with a typed error, not a crash")
    func wrongCount() async throws {
        let statement = BatchedStatement<Int, Int>(lanes: 1, largest: 8, queued: 1_000, deadline: .seconds(10)) { _ in [] }
        await #expect(throws: SwitchbackError.self) { try await statement(1) }
    }

    @Test("a statement with no answer by the deadline fails its requests with a typed error and frees its lane, while it still hangs")
    func deadline() async throws {
        let hang = LockedValue((released: false, ended: false))
        // 2 s: long enough that the second statement, which does not hang, meets it on a loaded machine.
        let statement = BatchedStatement<Int, Int>(lanes: 1, largest: 8, queued: 1_000, deadline: .seconds(2)) { items in
            // A database that stopped answering: the first statement hangs until the test lets it go (or 60 s
            // pass), whatever its cancellation says.
            if items.contains(0) {
                let start = ContinuousClock.now
                while !hang.withLock({ $0.released }) && ContinuousClock.now - start < .seconds(60) {
                    try? await Task.sleep(for: .milliseconds(20))
                }
                hang.withLock { $0.ended = true }
            }
            return items.map { $0 * 10 }
        }
        await #expect(throws: SwitchbackError.self) { try await statement(0) }
        #expect(try await statement(1) == 10, "the lane came free")
        #expect(!hang.withLock { $0.ended }, "both answers came while the first statement still hung")
        hang.withLock { $0.released = true }
    }

    @Test("a request beyond the waiting bound fails at once with a typed error; those waiting are answered")
    func full() async throws {
        let state = LockedValue((started: false, released: false))
        let statement = BatchedStatement<Int, Int>(lanes: 1, largest: 8, queued: 3, deadline: .seconds(60)) { items in
            state.withLock { $0.started = true }
            while !state.withLock({ $0.released }) { try await Task.sleep(for: .milliseconds(5)) }
            return items.map { $0 * 10 }
        }
        // The first statement holds the only lane; three requests wait behind it, as many as may.
        let first = Task { try await statement(0) }
        while !state.withLock({ $0.started }) { try await Task.sleep(for: .milliseconds(5)) }
        let waiting = (1...3).map { item in Task { try await statement(item) } }
        while statement.waiting < 3 { try await Task.sleep(for: .milliseconds(5)) }
        // Were the fourth to wait (the defect), the statement is let go after 30 s and the test fails.
        let backstop = Task {
            try? await Task.sleep(for: .seconds(30))
            state.withLock { $0.released = true }
        }
        defer { backstop.cancel() }
        let start = ContinuousClock.now
        await #expect(throws: SwitchbackError.self) { try await statement(4) }
        #expect(ContinuousClock.now - start < .seconds(20), "turned away at once, not after the statement")
        state.withLock { $0.released = true }
        #expect(try await first.value == 0)
        for (index, task) in waiting.enumerated() { #expect(try await task.value == (index + 1) * 10) }
    }

    @Test("a cancelled leader does not cancel the statement that carries the others")
    func cancelledLeader() async throws {
        // Each statement waits for the test to let it go, polling a sleep that a cancellation would end.
        let state = LockedValue((batches: [[Int]](), opened: 0))
        let statement = BatchedStatement<Int, Int>(lanes: 1, largest: 8, queued: 1_000, deadline: .seconds(60)) { items in
            let number = state.withLock { state in
                state.batches.append(items)
                return state.batches.count
            }
            while state.withLock({ $0.opened < number }) { try await Task.sleep(for: .milliseconds(5)) }
            return items.map { $0 * 10 }
        }
        let first = Task { try await statement(0) }
        while state.withLock({ $0.batches.count }) < 1 { try await Task.sleep(for: .milliseconds(5)) }
        // These wait while the first statement runs; then the oldest of them leads the rest.
        let waiting = (1..<6).map { item in Task { try await statement(item) } }
        while statement.waiting < 5 { try await Task.sleep(for: .milliseconds(5)) }
        state.withLock { $0.opened = 1 }
        while state.withLock({ $0.batches.count }) < 2 { try await Task.sleep(for: .milliseconds(5)) }
        let second = state.withLock { $0.batches[1] }
        #expect(second.count == 5, "the five waiters went together: \(second)")
        waiting[second[0] - 1].cancel()
        try await Task.sleep(for: .milliseconds(20))
        state.withLock { $0.opened = 2 }
        #expect(try await first.value == 0)
        for (index, task) in waiting.enumerated() { #expect(try await task.value == (index + 1) * 10) }
    }
}

/// What a batched PostgreSQL statement sends: each key once, in the keys' byte order.
@Suite("PostgreSQL batches")
struct PostgresBatchTests {
    @Test("a batch sends each key once, its first request's, in the keys' byte order, which tells canonically equal digests apart")
    func orderedAndUnique() {
        let expiry = Date(timeIntervalSince1970: 1_700_000_000)
        func insert(_ kind: String, _ digest: String, _ value: UInt8) -> Statements.Insert {
            Statements.Insert(kind: kind, digest: digest, value: Data([value]), expiresAt: expiry)
        }
        // "é" precomposed and decomposed are one String to Swift, two keys to PostgreSQL.
        let items = [
            insert("session", "b", 1), insert("handoff", "z", 2), insert("session", "a", 3), insert("session", "b", 4),
            insert("handoff", "caf\u{E9}", 5), insert("handoff", "cafe\u{301}", 6), insert("handoff", "z", 7),
        ]
        let sent = Statements.InsertBatch(items).items
        #expect(sent.map(\.kind) == ["handoff", "handoff", "handoff", "session", "session"])
        #expect(
            sent.map { Array($0.digest.utf8) } == [
                Array("cafe\u{301}".utf8), Array("caf\u{E9}".utf8), Array("z".utf8), Array("a".utf8), Array("b".utf8),
            ])
        #expect(sent.map(\.value) == [Data([6]), Data([5]), Data([2]), Data([3]), Data([1])], "the first request of a repeated key")
        let takes = Statements.TakeBatch([
            Statements.Take(kind: "session", digest: "b"), Statements.Take(kind: "session", digest: "a"),
            Statements.Take(kind: "session", digest: "b"),
        ]).items
        #expect(takes.map(\.digest) == ["a", "b"])
    }
}
