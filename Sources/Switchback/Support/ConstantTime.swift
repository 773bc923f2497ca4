/// Comparisons whose duration does not depend on where two secrets differ.
@_spi(SwitchbackInternals) public enum ConstantTime {
    @_spi(SwitchbackInternals) public static func equals(_ lhs: String, _ rhs: String) -> Bool {
        // Compared in the strings' own UTF-8 storage (a copy to arrays cost two allocations per nonce check).
        var (lhs, rhs) = (lhs, rhs)
        return lhs.withUTF8 { left in rhs.withUTF8 { right in equals(left, right) } }
    }

    @_spi(SwitchbackInternals) public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBufferPointer { left in rhs.withUnsafeBufferPointer { right in equals(left, right) } }
    }

    static func equals(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Bool {
        // The lengths are compared at full width: folding their difference into the byte accumulator
        // would let lengths that differ by a multiple of 256 (padded with NULs) compare equal.
        let lengthsDiffer = lhs.count != rhs.count
        var difference: UInt8 = 0
        let count = max(lhs.count, rhs.count)
        for index in 0..<count {
            let left = index < lhs.count ? lhs[index] : 0
            let right = index < rhs.count ? rhs[index] : 0
            difference |= left ^ right
        }
        return difference == 0 && !lengthsDiffer
    }
}
