import FuzzTargets
import Foundation

// libFuzzer's entry points. The target is chosen by SWITCHBACK_FUZZ_TARGET (scripts/fuzz.sh sets it), so one
// instrumented binary serves every parser.

nonisolated(unsafe) private var selected: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func initialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>) -> CInt {
    let name = ProcessInfo.processInfo.environment["SWITCHBACK_FUZZ_TARGET"] ?? ""
    guard let target = FuzzTarget.named(name) else {
        FileHandle.standardError.write(Data("SWITCHBACK_FUZZ_TARGET must name one of: \(FuzzTarget.all.map(\.name).joined(separator: " "))\n".utf8))
        exit(2)
    }
    selected = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    selected?.run(input)
    return 0
}
