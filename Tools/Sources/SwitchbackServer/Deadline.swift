import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Work given a time limit: its result when it ends within `limit`, nil past it. The answer never waits
/// for the work past the limit, even when the work ignores its cancellation (a database call that hangs);
/// the work is cancelled then.
func within<Answer: Sendable>(_ limit: Duration, _ work: @escaping @Sendable () async throws -> Answer) async -> Result<Answer, any Error>? {
    let answer = LockedValue<CheckedContinuation<Result<Answer, any Error>?, Never>?>(nil)
    let resume: @Sendable (Result<Answer, any Error>?) -> Void = { value in answer.withLock { $0.take() }?.resume(returning: value) }
    let timer = LockedValue<Task<Void, Never>?>(nil)
    let outcome = await withCheckedContinuation { continuation in
        answer.withLock { $0 = continuation }
        let running = Task {
            do {
                resume(.success(try await work()))
            } catch {
                resume(.failure(error))
            }
        }
        timer.withLock {
            $0 = Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                running.cancel()
                resume(nil)
            }
        }
    }
    timer.withLock { $0?.cancel() }
    return outcome
}
