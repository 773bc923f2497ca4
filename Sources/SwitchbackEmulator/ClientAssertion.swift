import Foundation
import JWTKit
import Switchback

/// `private_key_jwt` client assertions (RFC 7523 §3, OpenID Connect Core §9): signed by the client's
/// key, naming the client as `iss` and `sub`, addressed to this provider, unexpired, with a `jti` the
/// provider has not seen before.
enum ClientAssertion {
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    struct Claims: JWTPayload {
        let iss: IssuerClaim
        let sub: SubjectClaim
        let aud: AudienceClaim
        let exp: ExpirationClaim
        let jti: IDClaim?

        func verify(using _: some JWTAlgorithm) async throws {
            try exp.verifyNotExpired()
        }
    }

    /// The client the assertion claims to come from, read before verification to find its keys.
    static func claimedClient(_ assertion: String) -> String? {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
            case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: payload),
            case .string(let issuer)? = claims["iss"]
        else { return nil }
        return issuer
    }

    /// Verifies the signature with the client's registered keys and checks the claims; returns why not.
    static func verify(_ assertion: String, jwks: JSONValue?, clientID: String, audiences: Set<String>) async -> Result<Verified, Refusal> {
        guard let jwks else { return .failure(Refusal("the client has no registered keys")) }
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
        guard !audiences.isDisjoint(with: claims.aud.value) else {
            return .failure(Refusal("the client assertion is addressed to another audience"))
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
