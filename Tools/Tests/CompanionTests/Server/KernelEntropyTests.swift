import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer

/// The companion's random bytes (codes, session IDs, record nonces) come from ``KernelEntropy``.
@Suite("Kernel entropy")
struct KernelEntropyTests {
    @Test("every draw has the length asked for, from none to more than one kernel call may give")
    func lengths() {
        for count in [0, 1, 7, 8, 12, 32, 33, 4096, 70_000] {
            #expect(KernelEntropy().randomBytes(count: count).count == count, "\(count) bytes")
        }
    }

    @Test("draws differ, and a long draw holds every byte value (a buffer left unfilled would not)")
    func random() {
        let secrets = (0..<64).map { _ in KernelEntropy().randomBytes(count: 32) }
        #expect(Set(secrets).count == secrets.count)
        // 64 KiB of random bytes miss one of the 256 values with probability about 256 * e^-256.
        let long = KernelEntropy().randomBytes(count: 65_536)
        #expect(Set(long).count == 256)
        #expect(Set(long.suffix(4096)).count > 200, "the end of the buffer is filled as well as its start")
    }

    #if os(Linux)
        @Test("on Linux the kernel fills the buffer itself, without the fallback")
        func kernel() {
            var buffer = [UInt8](repeating: 0, count: 48)
            let filled = buffer.withUnsafeMutableBytes { KernelEntropy.fill($0) }
            #expect(filled)
            #expect(buffer.contains { $0 != 0 })
        }
    #endif
}
