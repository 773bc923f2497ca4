public import Foundation

/// One parser under the fuzzer: its name (what `scripts/fuzz.sh` and the corpus folder call it), what it
/// asserts for every input, and the body that reads one input and traps when a property fails, so that
/// libFuzzer keeps the input as a crash.
public struct FuzzTarget: Sendable {
    public let name: String
    public let asserts: String
    let body: @Sendable (Data) -> Void

    init(_ name: String, asserts: String, _ body: @escaping @Sendable (Data) -> Void) {
        self.name = name
        self.asserts = asserts
        self.body = body
    }

    public func run(_ input: Data) { body(input) }
}

extension FuzzTarget {
    /// Every target, in the order `scripts/fuzz.sh --list` prints them.
    public static let all: [FuzzTarget] = [
        .json, .cbor, .base64url, .jws, .jwe, .form, .inflate, .sdJWT, .dcql, .mdoc, .callback, .navigation, .returnURL, .clientAddress, .redirect,
        .sessionCookie, .responseQuery, .crl, .companionBodies,
    ]

    public static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}

/// A property every input must keep. When it fails the process traps: libFuzzer reports a deadly signal and
/// writes the input to a `crash-…` file.
func require(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    guard !condition else { return }
    FileHandle.standardError.write(Data("property failed (\(file):\(line)): \(message())\n".utf8))
    fatalError(message(), file: file, line: line)
}

/// Whether a target also writes what it read, a line per input, to standard output (`SWITCHBACK_FUZZ_REPORT`
/// set): the differential scripts compare those lines with a reference library's reading of the same inputs.
let reporting = ProcessInfo.processInfo.environment["SWITCHBACK_FUZZ_REPORT"] != nil

func report(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The input as text, or nil when it is not UTF-8: the text parsers take Swift strings, which hold only
/// valid Unicode, so other bytes never reach them from a request either.
func text(_ input: Data) -> String? { String(data: input, encoding: .utf8) }

/// Runs `work` to its end from the fuzzer's thread, which is not one of Swift concurrency's: the verifiers
/// are `async`, although with the keys given here they never wait on I/O.
func blocking<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) -> Result {
    let box = ResultBox<Result>()
    let done = DispatchSemaphore(value: 0)
    Task {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value!
}

private final class ResultBox<Value: Sendable>: @unchecked Sendable {  // @unchecked: written once before the semaphore signals, read after.
    var value: Value?
}
