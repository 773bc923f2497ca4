import Crypto
import _CryptoExtras
public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// The clients and users an emulator serves, and how long its codes and tokens live.
public struct EmulatorConfiguration: Sendable, Codable {
    /// A registered relying party.
    public struct Client: Sendable, Codable {
        /// How the client authenticates at the token endpoint.
        public enum Authentication: String, Sendable, Codable {
            case none
            case clientSecretBasic = "client_secret_basic"
            case clientSecretPost = "client_secret_post"
            /// A signed client assertion (RFC 7523) verified with the client's ``Client/jwks``.
            case privateKeyJWT = "private_key_jwt"
        }

        public var clientID: String
        /// The shared secret for `client_secret_basic` / `client_secret_post`; nil for public clients.
        public var secret: String?
        public var authentication: Authentication
        /// Redirect URIs, matched exactly.
        public var redirectURIs: [String]
        /// The ID-token signature algorithm: RS256 or ES256.
        public var idTokenAlgorithm: String
        /// Faults switched on for this client from the start (see ``Fault``).
        public var faults: [Fault]
        /// The client's public keys (a JWKS document, each key with a `kid`): `use: sig` keys verify
        /// `private_key_jwt` assertions; a `use: enc` key makes the emulator encrypt ID tokens to it.
        public var jwks: JSONValue?
        /// `id_token_encrypted_response_enc` (OpenID Connect Dynamic Registration): the content
        /// encryption of ID tokens, `A256CBC-HS512` when unset (Singpass's documented choice). The key
        /// management algorithm is the encryption key's `alg`, `ECDH-ES+A256KW` (EC) or `RSA-OAEP-256`
        /// (RSA) when it names none.
        public var idTokenEncryption: String?
        /// Where `end_session` may send the user agent afterwards, matched exactly.
        public var postLogoutRedirectURIs: [String]
        /// The app's own links an authenticator app may return to (MitID's app-switch URL, Singpass's
        /// `app_launch_url`), matched exactly.
        public var appReturnURLs: [String]
        /// `backchannel_logout_session_required` (Back-Channel Logout 1.0 §2.2): ID tokens carry `sid`, which
        /// ``Emulator/logoutToken(forClient:subject:sessionID:change:)`` can name.
        public var backChannelLogoutSession = false

        public init(
            clientID: String, secret: String? = nil, authentication: Authentication = .none, redirectURIs: [String],
            idTokenAlgorithm: String = "RS256", faults: [Fault] = [], jwks: JSONValue? = nil, postLogoutRedirectURIs: [String] = [],
            appReturnURLs: [String] = [], idTokenEncryption: String? = nil
        ) {
            self.idTokenEncryption = idTokenEncryption
            self.clientID = clientID
            self.secret = secret
            self.authentication = authentication
            self.redirectURIs = redirectURIs
            self.idTokenAlgorithm = idTokenAlgorithm
            self.faults = faults
            self.jwks = jwks
            self.postLogoutRedirectURIs = postLogoutRedirectURIs
            self.appReturnURLs = appReturnURLs
        }

        /// Only `clientID` and `redirectURIs` are required in a configuration file.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                clientID: try container.decode(String.self, forKey: .clientID),
                secret: try container.decodeIfPresent(String.self, forKey: .secret),
                authentication: try container.decodeIfPresent(Authentication.self, forKey: .authentication) ?? .none,
                redirectURIs: try container.decode([String].self, forKey: .redirectURIs),
                idTokenAlgorithm: try container.decodeIfPresent(String.self, forKey: .idTokenAlgorithm) ?? "RS256",
                faults: try container.decodeIfPresent([Fault].self, forKey: .faults) ?? [],
                jwks: try container.decodeIfPresent(JSONValue.self, forKey: .jwks),
                postLogoutRedirectURIs: try container.decodeIfPresent([String].self, forKey: .postLogoutRedirectURIs) ?? [],
                appReturnURLs: try container.decodeIfPresent([String].self, forKey: .appReturnURLs) ?? [],
                idTokenEncryption: try container.decodeIfPresent(String.self, forKey: .idTokenEncryption)
            )
            backChannelLogoutSession = try container.decodeIfPresent(Bool.self, forKey: .backChannelLogoutSession) ?? false
        }
    }

    /// A person who can sign in.
    public struct User: Sendable, Codable {
        public var username: String
        public var password: String
        public var subject: String
        /// Claims returned for the `profile` and `email` scopes.
        public var name: String
        public var email: String

        public init(username: String, password: String, subject: String, name: String, email: String) {
            self.username = username
            self.password = password
            self.subject = subject
            self.name = name
            self.email = email
        }
    }

    public var clients: [Client]
    public var users: [User]
    /// Seconds an authorization code stays redeemable.
    public var codeLifetime: TimeInterval
    /// Seconds an access token and an ID token stay valid.
    public var tokenLifetime: TimeInterval
    /// Seconds the token endpoint waits before answering under ``Fault/tokenSlow``.
    public var slowResponseDelay: TimeInterval
    /// Signing keys to use instead of generating them at start (rotation still makes fresh ones).
    public var signingKeys: SigningKeyPEMs?
    /// When set, access tokens are RFC 9068 JWTs (`typ: at+jwt`, signed like the client's ID tokens) for
    /// this resource (`aud`); nil keeps them opaque, checked only by introspection.
    public var accessTokenAudience: String?
    /// When true, every DPoP proof (PAR, token, userinfo) must carry the server's current nonce (RFC 9449
    /// §8 and §9): a proof without it is answered `use_dpop_nonce` with the nonce in `DPoP-Nonce`, and the
    /// nonce changes every ``dpopNonceLifetime`` seconds.
    public var requiresDPoPNonce: Bool = false
    /// Seconds a DPoP nonce stays current.
    public var dpopNonceLifetime: TimeInterval = 60
    /// What a refresh token already rotated away does when it comes back. Every refresh rotates the token.
    public var refreshTokenReuse: RefreshTokenReuse

    /// What the token endpoint does with a refresh token it already replaced.
    public enum RefreshTokenReuse: String, Sendable, Codable {
        /// Refused with `invalid_grant`; the token that replaced it keeps working.
        case refused
        /// Refused, and every refresh token descended from the same sign-in is revoked with it: RFC 9700
        /// §4.14.2's answer to a reuse, which cannot tell the legitimate client from an attacker. What a
        /// client that refreshes twice at once meets at Auth0 or Okta without a reuse interval.
        case revokesFamily = "revokes-family"
    }

    /// Private keys as PEM: RSA (2048 bits or more) for RS256, P-256 for ES256.
    public struct SigningKeyPEMs: Sendable, Codable {
        public var rs256: String?
        public var es256: String?

        public init(rs256: String? = nil, es256: String? = nil) {
            self.rs256 = rs256
            self.es256 = es256
        }

        /// A fresh RS256 and ES256 key.
        public static func generate() throws -> SigningKeyPEMs {
            SigningKeyPEMs(
                rs256: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation, es256: P256.Signing.PrivateKey().pemRepresentation)
        }

        /// Keys made once for every emulator a process starts (the tests, the demo's scenarios), rather than
        /// per emulator: an RSA-2048 key takes BoringSSL about 120 ms of CPU in a debug build, on a
        /// cooperative thread, and hundreds of emulators made it a good part of the tests' CPU.
        public static let perProcess: SigningKeyPEMs? = try? generate()
    }

    public init(
        clients: [Client], users: [User], codeLifetime: TimeInterval = 60, tokenLifetime: TimeInterval = 3600, slowResponseDelay: TimeInterval = 10,
        signingKeys: SigningKeyPEMs? = nil, accessTokenAudience: String? = nil, refreshTokenReuse: RefreshTokenReuse = .refused
    ) {
        self.refreshTokenReuse = refreshTokenReuse
        self.clients = clients
        self.users = users
        self.codeLifetime = codeLifetime
        self.tokenLifetime = tokenLifetime
        self.slowResponseDelay = slowResponseDelay
        self.signingKeys = signingKeys
        self.accessTokenAudience = accessTokenAudience
    }

    /// `clients` and `users` are required in a configuration file; the durations have defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            clients: try container.decode([Client].self, forKey: .clients),
            users: try container.decode([User].self, forKey: .users),
            codeLifetime: try container.decodeIfPresent(TimeInterval.self, forKey: .codeLifetime) ?? 60,
            tokenLifetime: try container.decodeIfPresent(TimeInterval.self, forKey: .tokenLifetime) ?? 3600,
            slowResponseDelay: try container.decodeIfPresent(TimeInterval.self, forKey: .slowResponseDelay) ?? 10,
            signingKeys: try container.decodeIfPresent(SigningKeyPEMs.self, forKey: .signingKeys),
            accessTokenAudience: try container.decodeIfPresent(String.self, forKey: .accessTokenAudience),
            refreshTokenReuse: try container.decodeIfPresent(RefreshTokenReuse.self, forKey: .refreshTokenReuse) ?? .refused
        )
        requiresDPoPNonce = try container.decodeIfPresent(Bool.self, forKey: .requiresDPoPNonce) ?? false
        dpopNonceLifetime = try container.decodeIfPresent(TimeInterval.self, forKey: .dpopNonceLifetime) ?? 60
    }

    /// Two public clients (RS256 and ES256), one confidential client, and one user.
    public static let defaults = EmulatorConfiguration(
        clients: [
            Client(
                clientID: "native-rs", redirectURIs: defaultRedirectURIs, idTokenAlgorithm: "RS256",
                postLogoutRedirectURIs: defaultPostLogoutRedirectURIs,
                appReturnURLs: defaultAppReturnURLs
            ),
            Client(
                clientID: "native-es", redirectURIs: defaultRedirectURIs, idTokenAlgorithm: "ES256",
                postLogoutRedirectURIs: defaultPostLogoutRedirectURIs,
                appReturnURLs: defaultAppReturnURLs
            ),
            Client(
                clientID: "backend", secret: "backend-secret", authentication: .clientSecretBasic, redirectURIs: defaultRedirectURIs,
                postLogoutRedirectURIs: defaultPostLogoutRedirectURIs
            ),
        ],
        users: [User(username: "alice", password: "Secret-123", subject: "9b1f7c2e-alice", name: "Alice Example", email: "alice@example.com")]
    )

    public static let defaultRedirectURIs = [
        "com.example.app:/oauth/callback", "https://app.example.com/oauth/callback", "http://127.0.0.1:8080/cb",
    ]

    public static let defaultAppReturnURLs = ["https://app.example.com/appswitch"]

    public static let defaultPostLogoutRedirectURIs = ["com.example.app:/oauth/signed-out", "https://app.example.com/signed-out"]

    func client(_ id: String) -> Client? { clients.first { $0.clientID == id } }
}

extension EmulatorConfiguration.Client {
    /// The client's keys of one use: `sig` (or unmarked) keys verify its assertions, `enc` keys receive
    /// encrypted ID tokens.
    func keys(use: String) -> [[String: JSONValue]] {
        guard case .object(let document)? = jwks, case .array(let keys)? = document["keys"] else { return [] }
        return keys.compactMap { key -> [String: JSONValue]? in
            guard case .object(let object) = key else { return nil }
            let marked: String? = if case .string(let value)? = object["use"] { value } else { nil }
            return (marked ?? "sig") == use ? object : nil
        }
    }

    /// The signing keys alone, as a JWKS document, for jwt-kit.
    var signingJWKS: JSONValue? {
        jwks == nil ? nil : .object(["keys": .array(keys(use: "sig").map(JSONValue.object))])
    }
}
