#if os(Linux)
    import Glibc
#else
    import Darwin
#endif
public import Foundation

/// A child process started with `posix_spawn`, for tests that run the `switchback` executable or a peer's
/// script.
///
/// Foundation's `Process.run()` on Linux reads `/proc/self/fd` with a buffer over-read that crashes the
/// test process now and then (swift-corelibs-foundation PR #5472, Swift 6.3.1); this spawns directly and
/// closes every inherited descriptor above 2 in the child.
@_spi(SwitchbackInternals) public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// The child's standard output and error, to read from.
    public let output: FileHandle
    public let errors: FileHandle
    /// The child's standard input, to write to; closed by ``closeInput()``.
    public let input: FileHandle
    private let exit: Task<Int32, Never>

    /// What a finished child left.
    public struct Outcome: Sendable {
        /// The exit code, or 128 plus the signal that ended it.
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Spawns are serialised so that no child inherits another spawn's pipe ends before they are marked
    /// close-on-exec.
    private static let spawnLock = NSLock()

    /// Starts `executable` with `arguments` and the current environment (plus `environment`).
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        Self.spawnLock.lock()
        defer { Self.spawnLock.unlock() }
        var stdinPipe: [Int32] = [-1, -1]
        var stdoutPipe: [Int32] = [-1, -1]
        var stderrPipe: [Int32] = [-1, -1]
        guard pipe(&stdinPipe) == 0, pipe(&stdoutPipe) == 0, pipe(&stderrPipe) == 0 else {
            throw ChildProcessError("pipes could not be made (errno \(errno))")
        }
        for fd in stdinPipe + stdoutPipe + stderrPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        #if os(Linux)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t? = nil
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)
        #if os(Linux)
            if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        #endif

        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, nil, argv, envp)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard result == 0 else {
            [stdinPipe[1], stdoutPipe[0], stderrPipe[0]].forEach { close($0) }
            throw ChildProcessError("\(executable) could not be started (error \(result))")
        }
        let spawned = child
        pid = spawned
        input = FileHandle(fileDescriptor: stdinPipe[1], closeOnDealloc: true)
        output = FileHandle(fileDescriptor: stdoutPipe[0], closeOnDealloc: true)
        errors = FileHandle(fileDescriptor: stderrPipe[0], closeOnDealloc: true)
        exit = Task.detached {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    var status: Int32 = 0
                    while waitpid(spawned, &status, 0) == -1 && errno == EINTR {}
                    let signal = status & 0x7F
                    continuation.resume(returning: signal == 0 ? (status >> 8) & 0xFF : 128 + signal)
                }
            }
        }
    }

    /// Waits for the child to end; returns its exit code, or 128 plus the signal that ended it.
    public func wait() async -> Int32 { await exit.value }

    /// Sends `signal` (SIGINT, SIGTERM) to the child.
    public func send(_ signal: Int32) { _ = kill(pid, signal) }

    public func closeInput() { try? input.close() }

    /// Reads what the child prints on stdout after `text` until `marker` appears, or until the child
    /// closes stdout (with nil, or when the marker never comes); returns `text` and everything read.
    /// Blocks the calling thread while the child is silent.
    public func readOutput(until marker: String? = nil, after text: String = "") -> String {
        var text = text
        while marker.map({ !text.contains($0) }) ?? true {
            let chunk = output.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return text
    }

    /// Runs to the end, feeding `stdin`, and returns the exit status with everything it printed.
    public static func run(_ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) async throws
        -> Outcome
    {
        let child = try ChildProcess(executable, arguments, environment: environment)
        async let stdout = child.readAll(child.output)
        async let stderr = child.readAll(child.errors)
        if let stdin { try? child.input.write(contentsOf: Data(stdin.utf8)) }
        child.closeInput()
        let status = await child.wait()
        return Outcome(status: status, stdout: await stdout, stderr: await stderr)
    }

    private func readAll(_ handle: FileHandle) async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: String(decoding: (try? handle.readToEnd()) ?? Data(), as: UTF8.self))
            }
        }
    }

    #if os(Linux)
        private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, looked up at run time (Swift's Glibc module
        /// does not export it); nil where the C library lacks it.
        private static let closeFrom: CloseFrom? = {
            guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
            return unsafeBitCast(symbol, to: CloseFrom.self)
        }()
    #endif
}

@_spi(SwitchbackInternals) public struct ChildProcessError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
