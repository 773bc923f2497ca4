/// The source of random bytes for state, nonce, PKCE verifiers and `jti` values.
public protocol EntropySource: Sendable {
    /// Returns `count` random bytes.
    func randomBytes(count: Int) -> [UInt8]
}

/// The system's cryptographically secure generator.
public struct SystemEntropy: EntropySource {
    public init() {}

    public func randomBytes(count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}

extension EntropySource {
    /// A base64url string (no padding) of `bytes` random bytes; 32 bytes give 256 bits.
    package func token(bytes: Int = 32) -> String {
        Base64URL.encode(randomBytes(count: bytes))
    }
}
