import CWebKitShim
@_spi(SwitchbackInternals) import Switchback
import Foundation

/// The GLib main loop on a thread of its own: every GTK and WebKit call is made there, through ``perform(_:)``.
final class MainLoop: @unchecked Sendable {
    enum StartError: Error, CustomStringConvertible {
        case noDisplay
        var description: String { "GTK could not open a display (run under xvfb-run, or set DISPLAY)" }
    }

    /// One loop per process, started on first use.
    static let shared: Result<MainLoop, StartError> = {
        let loop = MainLoop()
        return loop.start() ? .success(loop) : .failure(.noDisplay)
    }()

    private func start() -> Bool {
        let ready = DispatchSemaphore(value: 0)
        let failed = LockedFlag()
        // Queued before the loop exists: it runs once the loop does.
        perform { ready.signal() }
        let thread = Thread {
            if sb_run_main_loop() == 0 {
                failed.set()
                ready.signal()
            }
        }
        thread.name = "glib-main-loop"
        thread.start()
        guard ready.wait(timeout: .now() + 20) == .success else { return false }
        return !failed.value
    }

    /// Runs `work` on the loop's thread, later.
    func perform(_ work: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Work(work)).toOpaque()
        sb_invoke(
            { context in
                let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                work.run()
            }, box)
    }

    /// Runs `work` on the loop's thread and returns its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            perform { continuation.resume(returning: work()) }
        }
    }

    private final class Work {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}

/// A flag set once, read from any thread.
struct LockedFlag: Sendable {
    private let flag = LockedValue(false)
    func set() { flag.withLock { $0 = true } }
    var value: Bool { flag.withLock { $0 } }
}
