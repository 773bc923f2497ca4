#if os(Linux)
    import CSwitchbackSystem
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif
#endif
@_spi(SwitchbackInternals) public import Switchback

/// The companion's random bytes: one `getrandom(2)` call per draw on Linux, where the standard library's
/// generator (and so ``SystemEntropy``) makes one call per 8 bytes: a 32-byte secret took four system
/// calls, and a hand-off pair draws two secrets and two nonces (Documentation/Decisions/0013-kernel-entropy.md). Elsewhere, and if the
/// kernel refuses the call, ``SystemEntropy``.
public struct KernelEntropy: EntropySource {
    public init() {}

    public func randomBytes(count: Int) -> [UInt8] {
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = Self.fill(UnsafeMutableRawBufferPointer(buffer)) ? count : 0
        }
        return bytes.count == count ? bytes : SystemEntropy().randomBytes(count: count)
    }

    /// Fills `buffer` from the kernel's generator; false when it cannot (the caller then uses another).
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        #if os(Linux)
            var offset = 0
            while offset < buffer.count {
                // Flags 0: the urandom pool, which blocks only until the kernel first seeded it.
                let read = getrandom(buffer.baseAddress! + offset, buffer.count - offset, 0)
                if read > 0 {
                    offset += read
                } else if read < 0 && errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        #else
            return false
        #endif
    }
}
