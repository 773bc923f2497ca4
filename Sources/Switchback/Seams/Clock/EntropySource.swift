/// The source of random bytes for state, nonce, PKCE verifiers and `jti` values.
public protocol EntropySource: Sendable {
    /// Returns `count` random bytes.
    func randomBytes(count: Int) -> [UInt8]
}

/// The system's cryptographically secure generator.
public struct SystemEntropy: EntropySource {
    public init() {}

    public func randomBytes(count: Int) -> [UInt8] {
        // Eight bytes per call to the system generator rather than one.
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return Array(bytes.prefix(count))
    }
}

extension EntropySource {
    /// A base64url string (no padding) of `bytes` random bytes; 32 bytes give 256 bits.
    @_spi(SwitchbackInternals) public func token(bytes: Int = 32) -> String {
        Base64URL.encode(randomBytes(count: bytes))
    }
}
