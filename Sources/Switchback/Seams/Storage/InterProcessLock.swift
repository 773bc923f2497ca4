public import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A lock that processes sharing one credential store hold around a refresh: an app and its extensions
/// or widgets reading one Keychain access group. ``CredentialManager`` takes it inside the refresh (after
/// its own process's single flight), then reads the store again, so a token the other process rotated
/// meanwhile is used instead of being sent a second time.
public protocol InterProcessLock: Sendable {
    /// Runs `body` holding the lock named `name`, waiting for another process to release it first.
    /// Throws `CancellationError` when the task is cancelled while waiting.
    func withLock<Result: Sendable>(_ name: String, _ body: @Sendable () async throws -> Result) async throws -> Result
}

/// An advisory `flock(2)` on a file per lock name in a directory every process can reach: on iOS the app
/// group's container (`FileManager.containerURL(forSecurityApplicationGroupIdentifier:)`).
///
/// The lock is held only while a refresh runs, which ``CredentialManager`` runs as background work
/// (``BackgroundWork``): iOS terminates a suspended app that still holds a file lock in a shared container
/// (exception code `0xdead10cc`), so give the manager both. A process that dies releases its locks with
/// its file descriptors.
public struct FileLock: InterProcessLock {
    private let directory: URL
    /// How long to wait between attempts while another process holds the lock.
    private let pollInterval: Duration

    public init(directory: URL, pollInterval: Duration = .milliseconds(20)) {
        self.directory = directory
        self.pollInterval = pollInterval
    }

    public func withLock<Result: Sendable>(_ name: String, _ body: @Sendable () async throws -> Result) async throws -> Result {
        let descriptor = try lockFile(name)
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw SwitchbackError(.storeFailed, "the refresh lock \"\(name)\" cannot be taken: \(String(cString: strerror(errno)))")
            }
            try await Task.sleep(for: pollInterval)
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }

    /// The lock file's descriptor, created owner-only on first use; names become file names, so only a
    /// safe alphabet is accepted.
    private func lockFile(_ name: String) throws -> Int32 {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        guard !name.isEmpty, name.count <= 128, name.allSatisfy({ allowed.contains($0) }), !name.hasPrefix(".") else {
            throw SwitchbackError(.storeFailed, "a lock name must be 1 to 128 letters, digits, '-', '_' or '.', not starting with '.'")
        }
        try OwnerOnlyFile.makeDirectory(directory)
        let path = directory.appendingPathComponent(name + ".lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw SwitchbackError(.storeFailed, "the refresh lock file for \"\(name)\" cannot be opened: \(String(cString: strerror(errno)))")
        }
        return descriptor
    }
}
