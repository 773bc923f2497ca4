import Crypto
public import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Checks DPoP proofs (RFC 9449 §4.3): an ES256 JWT of type `dpop+jwt` carrying its public key,
/// naming this request (`htm`, `htu`), fresh (`iat`, and `exp` when it has one or the verifier requires
/// one), unique (`jti`, checked by the caller), and bound to the access token presented with it (`ath`).
/// The emulator (as the provider) and the companion (as the resource server of a hand-off) check proofs
/// with it; each keeps its own record of used `jti`s.
public enum DPoPProof {
    public struct Verified: Sendable {
        /// The key's RFC 7638 thumbprint, which tokens are bound to.
        public let thumbprint: String
        public let jti: String
        public let issuedAt: Date
        /// The server nonce the proof echoes (RFC 9449 §8), if any.
        public let nonce: String?
    }

    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }

        /// A valid proof without the server's current nonce (RFC 9449 §8): the client is to retry with it.
        public static let useNonce = Refusal("the DPoP proof does not carry the server's current nonce")
    }

    /// How far `iat` may be from the verifier's clock.
    public static let window: TimeInterval = 60

    /// The longest a proof may claim to live (`exp` − `iat`): Singpass's DPoP page allows at most 2 minutes.
    public static let longestLifetime: TimeInterval = 120

    /// How long after its `exp` a proof is still taken, for clocks a little apart.
    public static let expirySkew: TimeInterval = 5

    /// `requiresExpiry`: refuse a proof without `exp` (Singpass's FAPI server does; RFC 9449 does not).
    public static func verify(
        _ proof: String?, method: String, url: String, accessToken: String?, now: Date, requiresExpiry: Bool = false
    ) -> Result<Verified, Refusal> {
        guard let proof else { return .failure(Refusal("a DPoP proof is required")) }
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimsData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            case .object(let header)? = try? JSONDecoder().decode(JSONValue.self, from: headerData),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: claimsData)
        else {
            return .failure(Refusal("the DPoP proof is not a JWT"))
        }
        guard header["typ"] == .string("dpop+jwt"), header["alg"] == .string("ES256") else {
            return .failure(Refusal("the DPoP proof must be typ dpop+jwt, alg ES256"))
        }
        guard let jwk = header["jwk"], case .object(let members) = jwk, members["d"] == nil, let thumbprint = DPoPKey.thumbprint(of: jwk),
            case .string(let x)? = members["x"], case .string(let y)? = members["y"],
            let xBytes = Base64URL.decode(x), let yBytes = Base64URL.decode(y),
            let key = try? P256.Signing.PublicKey(rawRepresentation: xBytes + yBytes),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.isValidSignature(ecdsa, for: Data(proof.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)))
        else {
            return .failure(Refusal("the DPoP proof's signature does not verify with the P-256 public key in its header"))
        }
        guard claims["htm"] == .string(method), claims["htu"] == .string(url) else {
            return .failure(Refusal("the DPoP proof names another request (htm/htu)"))
        }
        guard case .number(let iat)? = claims["iat"], abs(iat - now.timeIntervalSince1970) <= window else {
            return .failure(Refusal("the DPoP proof's iat is missing or not recent"))
        }
        switch claims["exp"] {
        case nil where requiresExpiry:
            return .failure(Refusal("the DPoP proof has no exp"))
        case nil:
            break
        case .number(let exp)? where exp > iat && exp - iat <= longestLifetime && exp >= now.timeIntervalSince1970 - expirySkew:
            break
        default:
            return .failure(Refusal("the DPoP proof's exp is not a time after iat within \(Int(longestLifetime)) seconds, or has passed"))
        }
        guard case .string(let jti)? = claims["jti"], !jti.isEmpty else { return .failure(Refusal("the DPoP proof has no jti")) }
        if let accessToken, claims["ath"] != .string(DPoPKey.accessTokenHash(accessToken)) {
            return .failure(Refusal("the DPoP proof's ath does not match the access token"))
        }
        let nonce: String? = if case .string(let value)? = claims["nonce"] { value } else { nil }
        return .success(Verified(thumbprint: thumbprint, jti: jti, issuedAt: Date(timeIntervalSince1970: iat), nonce: nonce))
    }
}
