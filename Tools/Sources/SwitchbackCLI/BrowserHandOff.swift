import Foundation
@_spi(SwitchbackInternals) import Switchback

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A page that forwards a browser to the authorization URL, so that the URL is not a process argument.
///
/// Any local user can read another user's process arguments (`ps`, `/proc/PID/cmdline`). The page lives in
/// a directory made by `mkdtemp` (mode 0700) and is created with `O_EXCL` and mode 0600, so neither exists
/// for a moment with wider permissions; the browser's argument names only its path.
struct BrowserHandOff {
    let url: URL
    private let directory: String

    init(forwardingTo target: URL) throws {
        var template = Array((NSTemporaryDirectory() + "switchback-login-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw SwitchbackError(.invalidConfiguration, "a private directory for the browser's page could not be made")
        }
        directory = String(cString: made)
        let path = directory + "/sign-in.html"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            rmdir(directory)
            throw SwitchbackError(.invalidConfiguration, "the browser's page could not be written")
        }
        let bytes = Array(Self.page(forwardingTo: target).utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count else {
            unlink(path)
            rmdir(directory)
            throw SwitchbackError(.invalidConfiguration, "the browser's page could not be written")
        }
        url = URL(fileURLWithPath: path)
    }

    /// Removes the page and its directory (after the sign-in, when the browser has long read it).
    func remove() {
        unlink(url.path)
        rmdir(directory)
    }

    /// Ctrl-C or a termination removes the page too, then ends the command as the signal would; cancel the
    /// sources returned once the sign-in is over.
    func removedOnInterrupt() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                remove()
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    /// An immediate refresh to `target`, with a link for a browser that does not follow it; no referrer.
    static func page(forwardingTo target: URL) -> String {
        let escaped = target.absoluteString.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;")
        return """
            <!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">\
            <meta http-equiv="refresh" content="0; url=\(escaped)"><title>Switchback login</title>\
            <p><a id="continue" href="\(escaped)">Continue to the provider</a></p>
            """
    }
}

/// The address the browser ended on, pasted by the user, for a redirect URI this machine does not serve.
enum PastedCallback {
    /// The first line on standard input, which must be a URL on `redirectURI` (the client then checks it
    /// exactly, with the state); ``SwitchbackError/Code/timedOut`` when nothing comes within `timeout`.
    static func read(expecting redirectURI: URL, timeout: Double) async throws -> URL {
        enum Outcome: Sendable {
            case line(String?)
            case timedOut
        }
        // readLine blocks its thread, so it gets one of its own, whose line (or end of input) is awaited
        // beside the timeout; at the timeout the command ends while that thread still waits.
        let (lines, delivery) = AsyncStream<String?>.makeStream()
        Thread.detachNewThread {
            delivery.yield(readLine(strippingNewline: true))
            delivery.finish()
        }
        let outcome = try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask {
                for await line in lines { return .line(line) }
                return .timedOut
            }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                return .timedOut
            }
            defer { group.cancelAll() }
            return try await group.next() ?? .timedOut
        }
        guard case .line(let read) = outcome else {
            throw SwitchbackError(.timedOut, "no address was pasted within \(Int(timeout)) s")
        }
        guard let text = read?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty else {
            throw SwitchbackError(.invalidURL, "no address was pasted")
        }
        guard text.utf8.count <= 8192, let url = URL(string: text), url.scheme == redirectURI.scheme, url.host == redirectURI.host else {
            throw SwitchbackError(.invalidURL, "the pasted text is not an address on \(Redaction.describe(redirectURI))")
        }
        return url
    }
}
