public import Foundation
import Crypto
public import Switchback

/// What a one-time hand-off code stands for: the session it opens (a subject and its claims) and where
/// it may be redeemed.
public struct HandOffGrant: Sendable, Codable, Equatable {
    public var subject: String
    /// The client (app) that asked for the code.
    public var clientID: String
    public var issuedAt: Date
    public var expiresAt: Date

    public init(subject: String, clientID: String, issuedAt: Date, expiresAt: Date) {
        self.subject = subject
        self.clientID = clientID
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

/// Where one-time codes live between issue and redemption. Codes are kept only as their SHA-256
/// digest, so a copy of the store cannot be replayed; ``consume(_:now:)`` must be atomic — of any number
/// of concurrent redemptions of one code, exactly one gets the grant.
public protocol HandOffCodeStore: Sendable {
    func insert(digest: String, grant: HandOffGrant) async throws
    /// Removes and returns the grant when the code is known and unexpired at `now`; nil otherwise.
    func consume(digest: String, now: Date) async throws -> HandOffGrant?
    /// Drops expired codes; returns how many.
    @discardableResult
    func purge(now: Date) async throws -> Int
}

extension HandOffCodeStore {
    /// Issues a code of 256 random bits for `grant` and stores its digest.
    public func issue(_ grant: HandOffGrant, entropy: any EntropySource = SystemEntropy()) async throws -> String {
        let code = Base64URL.encode(entropy.randomBytes(count: 32))
        try await insert(digest: HandOffCodes.digest(code), grant: grant)
        return code
    }

    /// Redeems `code` once.
    public func redeem(_ code: String, now: Date) async throws -> HandOffGrant? {
        guard HandOffCodes.isWellFormed(code) else { return nil }
        return try await consume(digest: HandOffCodes.digest(code), now: now)
    }
}

enum HandOffCodes {
    static func digest(_ code: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Data(code.utf8))))
    }

    /// 43 base64url characters (32 bytes); anything else is not a code this server issued.
    static func isWellFormed(_ code: String) -> Bool {
        code.utf8.count == 43 && code.utf8.allSatisfy { $0.isBase64URL }
    }
}

extension UInt8 {
    fileprivate var isBase64URL: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || self == 0x2D || self == 0x5F
    }
}

/// One-time codes in memory: the embedded default for a single server instance.
public actor InMemoryHandOffCodeStore: HandOffCodeStore {
    private var grants: [String: HandOffGrant] = [:]

    public init() {}

    public func insert(digest: String, grant: HandOffGrant) throws {
        guard grants[digest] == nil else { throw SwitchbackError(.storeFailed, "a code with this digest already exists") }
        grants[digest] = grant
    }

    public func consume(digest: String, now: Date) -> HandOffGrant? {
        guard let grant = grants.removeValue(forKey: digest), grant.expiresAt > now else { return nil }
        return grant
    }

    @discardableResult
    public func purge(now: Date) -> Int {
        let expired = grants.filter { $0.value.expiresAt <= now }.map(\.key)
        for digest in expired { grants[digest] = nil }
        return expired.count
    }
}
