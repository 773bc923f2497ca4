public import Foundation
import Crypto

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

/// An advisory `flock(2)` on a file per lock name, in a folder of its own (`switchback-locks`, owner-only)
/// inside a directory every process can reach: on iOS the app group's container
/// (`FileManager.containerURL(forSecurityApplicationGroupIdentifier:)`). A lock's file is named by a digest
/// of its name, so any name works and none shows in the file system.
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
                throw SwitchbackError(.storeFailed, "a refresh lock cannot be taken: \(String(cString: strerror(errno)))")
            }
            try await Task.sleep(for: pollInterval)
        }
        defer { flock(descriptor, LOCK_UN) }
        return try await body()
    }

    /// The lock file's descriptor, created owner-only on first use.
    private func lockFile(_ name: String) throws -> Int32 {
        let folder = directory.appendingPathComponent("switchback-locks")
        try OwnerOnlyFile.makeDirectory(folder)
        let digest = SHA256.hash(data: Data(name.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
        let path = folder.appendingPathComponent(digest + ".lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw SwitchbackError(.storeFailed, "a refresh lock file cannot be opened: \(String(cString: strerror(errno)))")
        }
        return descriptor
    }
}
