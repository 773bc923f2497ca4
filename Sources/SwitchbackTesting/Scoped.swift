/// Runs `body` with `resource` and awaits `stop(resource)` after it, whether `body` returns or throws: the
/// scoped form every rig of this repository's tests offers (`CompanionRig.with`), so no test ends before its
/// servers have stopped.
public func withStopping<Resource, Result>(
    _ resource: Resource, stop: (Resource) async -> Void, _ body: (Resource) async throws -> Result
) async throws -> Result {
    let result: Result
    do {
        result = try await body(resource)
    } catch {
        await stop(resource)
        throw error
    }
    await stop(resource)
    return result
}
