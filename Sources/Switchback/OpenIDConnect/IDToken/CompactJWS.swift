import Crypto
import Foundation

/// A compact-serialised JWS split into its parts, before any signature check.
struct CompactJWS {
    struct Header {
        let alg: String
        let kid: String?
        let typ: String?
        let crit: [String]?
        /// `x5c` (RFC 7515 §4.1.6): the signing key's certificate chain, leaf first, DER.
        let x5c: [Data]

        /// The header read by ``JSONReader``: `alg` a string, the others strings (or `crit` strings) when present.
        init?(_ bytes: Data) {
            guard let members = JSONReader.members(bytes) else { return nil }
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

    let header: Header
    let payload: Data
    let signature: Data
    /// The token itself, whose first `signingInputCount` bytes (header, dot, payload) are signed.
    private let token: String
    private let signingInputCount: Int

    /// The signed bytes, for a verifier that hashes them itself.
    var signingInput: ArraySlice<UInt8> { Array(token.utf8.prefix(signingInputCount))[...] }

    /// The SHA-256 digest of the signed bytes (ES256, RS256), read from the token's own storage.
    func signingInputDigest() -> SHA256.Digest {
        token.utf8.withContiguousStorageIfAvailable {
            SHA256.hash(data: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: $0.prefix(signingInputCount))))
        }
            ?? SHA256.hash(data: signingInput)
    }

    /// `token` split and decoded, or refused with `malformed`; a compact JWE is refused too.
    init(_ token: String, malformed: SwitchbackError.Code) throws {
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
        token.makeContiguousUTF8()
        let parts = token.utf8.withContiguousStorageIfAvailable { bytes -> Result<(Data, Data, Data, Int)?, SwitchbackError> in
            // The positions of the first two dots and how many there are, in one pass without a list.
            var (first, second, count) = (0, 0, 0)
            for index in bytes.indices where bytes[index] == UInt8(ascii: ".") {
                if count == 0 { first = index } else if count == 1 { second = index }
                count += 1
            }
            guard count == 2 else {
                return count == 4 ? .success(nil) : .failure(SwitchbackError(malformed, "the token is not a compact JWS"))
            }
            guard let header = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[..<first])),
                let payload = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second])),
                let signature = Base64URL.decode(buffer: UnsafeBufferPointer(rebasing: bytes[(second + 1)...]))
            else {
                return .failure(SwitchbackError(malformed, "a part of the token is not base64url"))
            }
            return .success((header, payload, signature, second))
        }
        // A native string made contiguous always lends its storage.
        guard let parts else { throw SwitchbackError(malformed, "the token's text could not be read") }
        guard let (headerData, payload, signature, signingInputCount) = try parts.get() else { return nil }
        guard let header = Header(headerData) else {
            throw SwitchbackError(malformed, "the token's header is not a JSON object with an alg")
        }
        if let critical = header.crit, !critical.isEmpty {
            throw SwitchbackError(malformed, "the token marks header parameters critical that this client does not understand")
        }
        return CompactJWS(header: header, payload: payload, signature: signature, token: token, signingInputCount: signingInputCount)
    }

    private init(header: Header, payload: Data, signature: Data, token: String, signingInputCount: Int) {
        self.header = header
        self.payload = payload
        self.signature = signature
        self.token = token
        self.signingInputCount = signingInputCount
    }
}
