@_spi(SwitchbackInternals) public import Switchback

/// Deterministic "random" bytes: a counter mixed into a seed, so that successive calls differ.
public final class FixedEntropy: EntropySource {
    private let seed: UInt8
    private let counter = LockedValue<UInt8>(0)

    public init(seed: UInt8 = 0x5A) {
        self.seed = seed
    }

    public func randomBytes(count: Int) -> [UInt8] {
        let round = counter.withLock { value -> UInt8 in
            value &+= 1
            return value
        }
        return (0..<count).map { UInt8(truncatingIfNeeded: $0) &* 31 &+ seed &+ round &* 97 }
    }
}
