import Crypto
public import Foundation

/// A compact-serialised JWS split into its parts, before any signature check.
@_spi(SwitchbackInternals) public struct CompactJWS: Sendable {
    @_spi(SwitchbackInternals) public struct Header: Sendable {
        @_spi(SwitchbackInternals) public let alg: String
        @_spi(SwitchbackInternals) public let kid: String?
        @_spi(SwitchbackInternals) public let typ: String?
        let crit: [String]?
        /// `x5c` (RFC 7515 §4.1.6): the signing key's certificate chain, leaf first, DER.
        @_spi(SwitchbackInternals) public let x5c: [Data]

        /// The header whose base64url text is `encoded`, read by ``JSONReader``: `alg` a string, the others
        /// strings (or `crit` strings) when present. It is decoded into memory of the moment rather than a
        /// `Data` of its own: only the members read from it are kept.
        init?(encoded: UnsafeBufferPointer<UInt8>) {
            guard let count = Base64URL.decodedCount(encoded.count) else { return nil }
            let members = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(count, 1)) { buffer -> JSONMembers? in
                guard let base = buffer.baseAddress, Base64URL.decode(encoded, into: base) else { return nil }
                return JSONReader.members(buffer: UnsafeRawBufferPointer(start: base, count: count))
            }
            guard let members else { return nil }
            self.init(members)
        }

        private init?(_ members: JSONMembers) {
            do {
                guard let alg = try members.string("alg") else { return nil }
                self.alg = alg
                kid = try members.string("kid")
                typ = try members.string("typ")
                crit = try members.strings("crit")
                x5c = try (members.strings("x5c") ?? []).map {
                    // Standard base64 (not base64url), RFC 7515 §4.1.6.
                    guard let der = Data(base64Encoded: $0) else { throw JSONMembers.Mismatch() }
                    return der
                }
            } catch {
                return nil
            }
        }
    }

    @_spi(SwitchbackInternals) public let header: Header
    @_spi(SwitchbackInternals) public let payload: Data
    let signature: Data
    /// The token's text, whose first `signingInputCount` bytes (header, dot, payload) are signed.
    let compact: String
    private let signingInputCount: Int

    /// The signed bytes, for a verifier that hashes them itself.
    var signingInput: ArraySlice<UInt8> { Array(compact.utf8.prefix(signingInputCount))[...] }

    /// The SHA-256 digest of the signed bytes (ES256, RS256), read from the token's own storage.
    func signingInputDigest() -> SHA256.Digest {
        var compact = compact
        return compact.withUTF8 { SHA256.hash(data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0.prefix(signingInputCount)))) }
    }

    /// `token` split and decoded, or refused with `malformed`; a compact JWE is refused too.
    @_spi(SwitchbackInternals) public init(_ token: String, malformed: SwitchbackError.Code) throws {
        guard let jws = try Self.unlessEncrypted(token, malformed: malformed) else {
            throw SwitchbackError(malformed, "the token is an encrypted JWT (JWE), which this client cannot decrypt")
        }
        self = jws
    }

    /// `token` split and decoded, or nil when it is a compact JWE (five parts), for a caller that decrypts it
    /// or refuses it for its own reason. Anything else that is not a compact JWS is refused with `malformed`.
    /// The token is read once, in its own storage.
    static func unlessEncrypted(_ token: String, malformed: SwitchbackError.Code) throws -> CompactJWS? {
        var token = token
        let parts = token.withUTF8 { bytes -> Result<(Header, Data, Data, Int)?, SwitchbackError> in
            // The dots, found by `memchr` (a byte loop over a token's few hundred bytes showed in the profile).
            func dot(after start: Int) -> Int? {
                guard start < bytes.count, let base = bytes.baseAddress,
                    let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start)
                else { return nil }
                return UnsafeRawPointer(base).distance(to: found)
            }
            guard let first = dot(after: 0), let second = dot(after: first + 1) else {
                return .failure(SwitchbackError(malformed, "the token is not a compact JWS"))
            }
            if let third = dot(after: second + 1) {
                // Exactly five parts is a JWE; anything else with more than three parts is nothing.
                guard let fourth = dot(after: third + 1), dot(after: fourth + 1) == nil else {
                    return .failure(SwitchbackError(malformed, "the token is not a compact JWS"))
                }
                return .success(nil)
            }
            let encodedHeader = UnsafeBufferPointer(rebasing: bytes[..<first])
            guard Base64URL.decodedCount(encodedHeader.count) != nil,
                let payload = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second])),
                let signature = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[(second + 1)...]))
            else {
                return .failure(SwitchbackError(malformed, "a part of the token is not base64url"))
            }
            guard let header = Header(encoded: encodedHeader) else {
                let decodes = Base64URL.decode(buffer: encodedHeader) != nil
                return .failure(
                    SwitchbackError(
                        malformed, decodes ? "the token's header is not a JSON object with an alg" : "a part of the token is not base64url"))
            }
            return .success((header, payload, signature, second))
        }
        guard let (header, payload, signature, signingInputCount) = try parts.get() else { return nil }
        if let critical = header.crit, !critical.isEmpty {
            throw SwitchbackError(malformed, "the token marks header parameters critical that this client does not understand")
        }
        return CompactJWS(header: header, payload: payload, signature: signature, compact: token, signingInputCount: signingInputCount)
    }

    private init(header: Header, payload: Data, signature: Data, compact: String, signingInputCount: Int) {
        self.header = header
        self.payload = payload
        self.signature = signature
        self.compact = compact
        self.signingInputCount = signingInputCount
    }
}
