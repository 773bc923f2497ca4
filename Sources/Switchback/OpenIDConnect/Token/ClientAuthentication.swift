public import Foundation
import JWTKit

/// How the client authenticates at the token and PAR endpoints.
public enum ClientAuthentication: Sendable {
    /// A public client: only `client_id` is sent (PKCE protects the code).
    case none
    /// HTTP Basic with the form-encoded client ID and secret (RFC 6749 §2.3.1).
    case clientSecretBasic(secret: String)
    /// `client_id` and `client_secret` in the form body.
    case clientSecretPost(secret: String)
    /// A signed client assertion (RFC 7523, OpenID Connect Core §9).
    case privateKeyJWT(ClientAssertionSigner)

    /// The metadata name of the method (`client_secret_basic`).
    public var methodName: String {
        switch self {
        case .none: "none"
        case .clientSecretBasic: "client_secret_basic"
        case .clientSecretPost: "client_secret_post"
        case .privateKeyJWT: "private_key_jwt"
        }
    }
}

extension ClientAuthentication: CustomStringConvertible {
    /// The method only; secrets never appear.
    public var description: String { methodName }
}

/// Signs `private_key_jwt` client assertions with an RSA or ECDSA private key, through jwt-kit.
///
/// Every assertion is addressed to the provider's issuer identifier, as a single string, whichever
/// endpoint it is sent to. That is what FAPI 2.0 (§5.3.2.1) and the OpenID Foundation's 2025 fix for
/// audience injection require, and what Singpass checks; OpenID Connect Core's older advice (the token
/// endpoint URL) let a malicious endpoint replay an assertion at the real one.
public struct ClientAssertionSigner: Sendable {
    /// The assertion's signature algorithm. FAPI 2.0 providers such as Singpass accept only the ECDSA ones.
    public enum Algorithm: String, Sendable, CaseIterable {
        case rs256 = "RS256"
        case es256 = "ES256"
        case es384 = "ES384"
        case es512 = "ES512"
    }

    public let algorithm: Algorithm
    public let keyID: String?
    /// How long an assertion is valid: 1 to 120 seconds (Singpass refuses longer), 60 by default.
    public let lifetime: TimeInterval
    private let keys: JWTKeyCollection

    /// Creates a signer from a PEM private key (PKCS#1, PKCS#8 or SEC1).
    public init(algorithm: Algorithm, privateKeyPEM: String, keyID: String? = nil, lifetime: TimeInterval = 60) async throws {
        let keys = JWTKeyCollection()
        let kid = keyID.map { JWKIdentifier(string: $0) }
        do {
            switch algorithm {
            case .rs256:
                await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: privateKeyPEM), digestAlgorithm: .sha256, kid: kid)
            case .es256:
                await keys.add(ecdsa: try ES256PrivateKey(pem: privateKeyPEM), kid: kid)
            case .es384:
                await keys.add(ecdsa: try ES384PrivateKey(pem: privateKeyPEM), kid: kid)
            case .es512:
                await keys.add(ecdsa: try ES512PrivateKey(pem: privateKeyPEM), kid: kid)
            }
        } catch {
            throw SwitchbackError(.invalidConfiguration, "the client assertion key is not a valid \(algorithm.rawValue) private key")
        }
        self.algorithm = algorithm
        self.keyID = keyID
        self.lifetime = min(max(lifetime, 1), 120)
        self.keys = keys
    }

    /// A fresh assertion for `clientID` addressed to `audience` (the issuer), with a unique `jti`.
    func assertion(clientID: String, audience: String, now: Date, entropy: any EntropySource) async throws -> String {
        let claims = ClientAssertionClaims(
            iss: clientID,
            sub: clientID,
            aud: audience,
            jti: entropy.token(bytes: 16),
            iat: Int(now.timeIntervalSince1970),
            exp: Int(now.addingTimeInterval(lifetime).timeIntervalSince1970)
        )
        var header = JWTHeader()
        header.typ = "JWT"
        return try await keys.sign(claims, kid: keyID.map { JWKIdentifier(string: $0) }, header: header)
    }
}

struct ClientAssertionClaims: JWTPayload {
    let iss: String
    let sub: String
    let aud: String
    let jti: String
    let iat: Int
    let exp: Int

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
