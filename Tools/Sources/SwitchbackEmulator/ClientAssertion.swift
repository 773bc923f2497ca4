import Foundation
import JWTKit
@_spi(SwitchbackInternals) import Switchback

/// `private_key_jwt` client assertions (RFC 7523 §3, OpenID Connect Core §9): signed by the client's
/// key, naming the client as `iss` and `sub`, addressed to this provider, unexpired, with a `jti` the
/// provider has not seen before.
enum ClientAssertion {
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    /// What a provider accepts beyond a valid signature by the client's key.
    struct Policy {
        /// Accepted `aud` values: the assertion must name one of them.
        var audiences: Set<String>
        /// Accepted `alg` values; nil accepts any the client's keys verify.
        var algorithms: Set<String>?
        /// Longest accepted `exp - iat`, which also makes `iat` required; nil accepts any.
        var maximumLifetime: TimeInterval?
        /// `aud` must be a single string, not an array.
        var singleAudience = false

        /// Singpass (FAPI 2.0): `aud` is exactly the issuer, ES256/ES384/ES512 only, at most 120 seconds.
        static func fapi2(issuer: String) -> Policy {
            Policy(audiences: [issuer], algorithms: ["ES256", "ES384", "ES512"], maximumLifetime: 120, singleAudience: true)
        }

        /// Lenient, as many providers are: the issuer or the endpoint's URL, any algorithm, any lifetime.
        static func lenient(issuer: String) -> Policy {
            Policy(audiences: [issuer, issuer + "/token", issuer + "/par"])
        }
    }

    struct Claims: JWTPayload {
        let iss: IssuerClaim
        let sub: SubjectClaim
        let aud: AudienceClaim
        let exp: ExpirationClaim
        let iat: IssuedAtClaim?
        let jti: IDClaim?

        func verify(using _: some JWTAlgorithm) async throws {
            try exp.verifyNotExpired()
        }
    }

    /// The client the assertion claims to come from, read before verification to find its keys.
    static func claimedClient(_ assertion: String) -> String? {
        guard case .string(let issuer)? = unverifiedObject(assertion, part: 1)?["iss"] else { return nil }
        return issuer
    }

    /// The header (`part` 0) or payload (1) of a compact JWS as JSON, before any verification.
    private static func unverifiedObject(_ assertion: String, part: Int) -> [String: JSONValue]? {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = Base64URL.decode(parts[part]),
            case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: data)
        else { return nil }
        return object
    }

    /// Verifies the signature with the client's registered keys and checks the claims; returns why not.
    static func verify(_ assertion: String, jwks: JSONValue?, clientID: String, policy: Policy) async -> Result<Verified, Refusal> {
        guard let jwks else { return .failure(Refusal("the client has no registered keys")) }
        if let algorithms = policy.algorithms {
            guard case .string(let algorithm)? = unverifiedObject(assertion, part: 0)?["alg"], algorithms.contains(algorithm) else {
                return .failure(Refusal("the client assertion must be signed with one of \(algorithms.sorted().joined(separator: ", "))"))
            }
        }
        let keys = JWTKeyCollection()
        let claims: Claims
        do {
            try await keys.add(jwksJSON: jwks.description)
            claims = try await keys.verify(assertion, as: Claims.self)
        } catch {
            return .failure(Refusal("the client assertion does not verify with the client's keys, or has expired"))
        }
        guard claims.iss.value == clientID, claims.sub.value == clientID else {
            return .failure(Refusal("the client assertion's iss and sub must both be the client_id"))
        }
        guard !policy.audiences.isDisjoint(with: claims.aud.value) else {
            return .failure(Refusal("the client assertion is addressed to another audience"))
        }
        if policy.singleAudience {
            guard case .string? = unverifiedObject(assertion, part: 1)?["aud"] else {
                return .failure(Refusal("the client assertion's aud must be the issuer identifier as a single string"))
            }
        }
        if let maximum = policy.maximumLifetime {
            guard let issued = claims.iat?.value, claims.exp.value.timeIntervalSince(issued) <= maximum else {
                return .failure(Refusal("the client assertion must carry iat and live at most \(Int(maximum)) seconds"))
            }
        }
        guard let jti = claims.jti?.value, !jti.isEmpty else { return .failure(Refusal("the client assertion has no jti")) }
        return .success(Verified(jti: jti, expires: claims.exp.value))
    }

    /// What the provider keeps of a verified assertion: its `jti`, until it expires.
    struct Verified {
        let jti: String
        let expires: Date
    }

    struct Refusal: Error {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
