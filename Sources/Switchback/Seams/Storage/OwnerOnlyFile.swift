public import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Files that only their owner can read from the first byte: the file stores (credentials, flow journals)
/// write through it. A file is created empty with mode 0600 under a random name in its directory
/// (`O_CREAT | O_EXCL | O_NOFOLLOW`, so nothing already there is followed or reused), filled, flushed to
/// disk when asked (``Durability``) and renamed over the old one, so a reader sees the old or the new
/// content, never half, and never with wider permissions. Foundation's atomic write gives the new file the process's default mode and
/// leaves narrowing it to a later call, which another user could race.
@_spi(SwitchbackInternals) public enum OwnerOnlyFile {
    /// Creates `directory` (and its parents) if missing; the last component is made with mode 0700. An
    /// existing one must be a real directory (not a symbolic link) of this process's user; group and other
    /// permissions it has are taken away.
    public static func makeDirectory(_ directory: URL) throws {
        if let attributes = try? FileManager.default.attributesOfItem(atPath: directory.path) {
            guard attributes[.type] as? FileAttributeType == .typeDirectory else {
                throw failure("\(directory.path) is not a directory (a symbolic link or a file is not followed)")
            }
            guard (attributes[.ownerAccountID] as? NSNumber)?.uint32Value == getuid() else {
                throw failure("\(directory.path) belongs to another user")
            }
            if let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0 {
                guard chmod(directory.path, mode_t(mode & 0o700)) == 0 else { throw failure("cannot narrow \(directory.path): \(reason())") }
            }
            return
        }
        let parent = directory.deletingLastPathComponent()
        if parent.path != directory.path { try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true) }
        guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else { throw failure("cannot create \(directory.path): \(reason())") }
    }

    /// What a write must survive.
    public enum Durability: Sendable {
        /// The app's termination (killed in the background, crashed, swiped away): the kernel keeps what
        /// was written and renamed, so no flush to disk is needed. A flow's journal, which matters for
        /// minutes.
        case appTermination
        /// The device losing power or the system crashing: the file and the rename are flushed to disk
        /// (two `fsync`s). Credentials, whose loss signs the user out.
        case powerLoss
    }

    /// Writes `data` to `file` (in a directory that exists), readable and writable by the owner only,
    /// replacing what was there atomically. On iOS the file is protected until the first unlock after a
    /// restart, as the Keychain's refresh tokens are.
    public static func write(_ data: Data, to file: URL, surviving durability: Durability = .powerLoss) throws {
        let directory = file.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(UUID().uuidString).tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create a file in \(directory.path): \(reason())") }
        var written = false
        defer {
            if !written { unlink(temporary.path) }
        }
        do {
            defer { close(descriptor) }
            // The umask can only take bits away from 0600; this makes sure the owner can read and write it.
            guard fchmod(descriptor, 0o600) == 0 else { throw failure("cannot set the file's mode: \(reason())") }
            #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
                try FileManager.default.setAttributes(
                    [.protectionKey: FileProtectionType.completeUntilFirstUserAuthentication], ofItemAtPath: temporary.path)
            #endif
            try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
                var offset = 0
                while offset < buffer.count {
                    let count = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { throw failure("cannot write \(file.lastPathComponent): \(reason())") }
                    offset += count
                }
            }
            if durability == .powerLoss {
                guard fsync(descriptor) == 0 else { throw failure("cannot flush \(file.lastPathComponent): \(reason())") }
            }
        }
        guard rename(temporary.path, file.path) == 0 else { throw failure("cannot replace \(file.lastPathComponent): \(reason())") }
        written = true
        guard durability == .powerLoss else { return }
        // The rename itself reaches the disk with the directory's entry.
        let directoryDescriptor = open(directory.path, O_RDONLY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    private static func reason() -> String { String(cString: strerror(errno)) }

    private static func failure(_ message: String) -> SwitchbackError { SwitchbackError(.storeFailed, message) }
}
