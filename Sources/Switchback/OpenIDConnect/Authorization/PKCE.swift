import Foundation
import Crypto

/// A PKCE verifier and its S256 challenge (RFC 7636). `plain` is deliberately not offered.
public struct PKCE: Sendable, Equatable, Codable {
    /// The secret verifier, sent only to the token endpoint.
    public let verifier: String
    /// `BASE64URL(SHA256(verifier))`.
    public let challenge: String
    /// Always `S256`.
    public var method: String { "S256" }

    /// Wraps an existing verifier; it must be 43 to 128 unreserved characters (RFC 7636 §4.1).
    public init(verifier: String) throws {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        guard (43...128).contains(verifier.count), verifier.allSatisfy({ allowed.contains($0) }) else {
            throw SwitchbackError(.invalidConfiguration, "a PKCE verifier must be 43 to 128 unreserved characters")
        }
        self.verifier = verifier
        self.challenge = Base64URL.encode(SHA256.hash(data: Data(verifier.utf8)))
    }

    /// A fresh verifier of 256 random bits.
    public init(entropy: any EntropySource) {
        // 32 bytes encode to exactly 43 base64url characters, all unreserved.
        self = try! PKCE(verifier: entropy.token(bytes: 32))  // cannot fail: length and alphabet are fixed
    }

    enum CodingKeys: String, CodingKey { case verifier }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(verifier: container.decode(String.self, forKey: .verifier))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(verifier, forKey: .verifier)
    }
}

extension PKCE: CustomStringConvertible {
    /// Shows the challenge only; the verifier is a secret.
    public var description: String { "PKCE(S256, challenge: \(challenge))" }
}
