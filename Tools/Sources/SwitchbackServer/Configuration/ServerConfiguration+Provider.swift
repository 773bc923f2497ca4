import Foundation
@_spi(SwitchbackInternals) public import Switchback

// The provider section: the provider and how the companion authenticates to it.
extension ServerConfiguration {
    /// The provider and this server's confidential client there.
    public struct Provider: Sendable, Codable, Equatable {
        public var issuer: String
        public var clientID: String
        /// `client_secret_basic` with this secret, unless a private key is given.
        public var clientSecret: String?
        /// A PEM file with the key for `private_key_jwt` (RS256, ES256, ES384 or ES512 by ``keyAlgorithm``).
        public var privateKeyFile: String?
        /// The same key as PEM text, for a deployment that passes it as a secret (`SWITCHBACK_PROVIDER_PRIVATE_KEY`
        /// or the secret file `provider-privateKey`) rather than as a path. A secret: redacted when printed.
        public var privateKey: String?
        public var keyAlgorithm: String?
        public var keyID: String?
        /// Prove possession with DPoP (RFC 9449) at PAR and the token endpoint, as FAPI 2.0 providers
        /// (Singpass) require; the provider then binds the code and tokens to the key. Each sign-in gets a
        /// key of its own (Singpass: no key pair reused across login sessions), kept in the pending sign-in's
        /// sealed record until its code is redeemed, so any instance sharing the store can redeem it.
        public var dpop: Bool
        /// A PEM file with the private key the provider encrypts ID tokens to (EC or RSA; Singpass
        /// encrypts every ID token). With it, a plain ID token is refused.
        public var decryptionKeyFile: String?
        /// The same key as PEM text (`SWITCHBACK_PROVIDER_DECRYPTION_KEY` or the secret file
        /// `provider-decryptionKey`). A secret: redacted when printed.
        public var decryptionKey: String?
        /// The `kid` of the decryption key, as registered.
        public var decryptionKeyID: String?
        /// The provider's endpoints, for a provider that publishes no discovery document (UAE Pass); its
        /// `issuer` must equal ``issuer``. Without it the metadata is discovered.
        public var metadata: ProviderMetadata?
        /// `userinfo` for a provider documented to issue no ID token (UAE Pass): the identity is read from
        /// the userinfo endpoint with the access token just redeemed. `id_token` (the default) otherwise.
        public var identitySource: IdentitySource
        /// Claims the identity must carry, each with one of the listed values (UAE Pass:
        /// `{"userType": ["SOP2", "SOP3"]}` refuses unverified accounts).
        public var requiredClaims: [String: [String]]
        /// Authorization parameters an app may give `POST /exchange/start` and `POST /completion/start`
        /// (`parameters`), forwarded as they are; any other name is refused. The provider checks the values
        /// against the client's registration (Singpass's `app_launch_url`).
        public var forwardedParameters: [String]
        /// Authorization parameters this server adds to every request it starts; an app may send the same value
        /// and is refused a different one. Singpass's Login context,
        /// `{"authentication_context_type": "APP_AUTHENTICATION_DEFAULT"}` (a value Singpass documents);
        /// Signaturgruppen's `{"idp_values": "mitid"}`.
        public var authorizationParameters: [String: String]
        public var scopes: [String]
        /// `acr` values every ID token must carry (empty: any).
        public var acrValues: [String]

        public init(
            issuer: String, clientID: String, clientSecret: String? = nil, privateKeyFile: String? = nil, privateKey: String? = nil,
            keyAlgorithm: String? = nil, keyID: String? = nil, dpop: Bool = false, forwardedParameters: [String] = Self.defaultForwardedParameters,
            authorizationParameters: [String: String] = [:],
            scopes: [String] = ["openid"], acrValues: [String] = [], decryptionKeyFile: String? = nil, decryptionKey: String? = nil,
            decryptionKeyID: String? = nil, identitySource: IdentitySource = .idToken, requiredClaims: [String: [String]] = [:],
            metadata: ProviderMetadata? = nil
        ) {
            self.metadata = metadata
            self.identitySource = identitySource
            self.requiredClaims = requiredClaims
            self.decryptionKeyFile = decryptionKeyFile
            self.decryptionKey = decryptionKey
            self.decryptionKeyID = decryptionKeyID
            self.forwardedParameters = forwardedParameters
            self.dpop = dpop
            self.authorizationParameters = authorizationParameters
            self.issuer = issuer
            self.clientID = clientID
            self.clientSecret = clientSecret
            self.privateKeyFile = privateKeyFile
            self.privateKey = privateKey
            self.keyAlgorithm = keyAlgorithm
            self.keyID = keyID
            self.scopes = scopes
            self.acrValues = acrValues
        }
    }
}

extension ServerConfiguration.Provider {
    private enum Keys: String, CodingKey {
        case issuer, clientID, clientSecret, privateKeyFile, privateKey, keyAlgorithm, keyID, dpop, dpopKeyFile, forwardedParameters, scopes
        case acrValues, decryptionKeyFile, decryptionKey, decryptionKeyID, identitySource, requiredClaims, metadata, authorizationParameters
    }

    /// Singpass's app return link and the redirect type that asks for its tap page. What the user is told
    /// (Singpass's `authentication_context_type` and `_message`) and which identity provider and options a
    /// broker uses (`idp_values`, `idp_params`) are the deployment's: set them in
    /// ``authorizationParameters``, or list them here to let apps choose (Singpass's context is then checked
    /// against its documented values, and `idp_params` may carry MitID's app switch alone).
    public static let defaultForwardedParameters = ["app_launch_url", "redirect_uri_https_type"]

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        // A static key shared by every sign-in is what Singpass forbids; a configuration that names one must
        // not start as if the key were used.
        if c.contains(.dpopKeyFile) {
            throw SwitchbackError(
                .invalidConfiguration,
                "provider.dpopKeyFile is no longer read: every sign-in gets a DPoP key of its own; remove it and keep \"dpop\": true")
        }
        self.init(
            issuer: try c.decode(String.self, forKey: .issuer), clientID: try c.decode(String.self, forKey: .clientID),
            clientSecret: try c.decodeIfPresent(String.self, forKey: .clientSecret),
            privateKeyFile: try c.decodeIfPresent(String.self, forKey: .privateKeyFile),
            privateKey: try c.decodeIfPresent(String.self, forKey: .privateKey),
            keyAlgorithm: try c.decodeIfPresent(String.self, forKey: .keyAlgorithm), keyID: try c.decodeIfPresent(String.self, forKey: .keyID),
            dpop: try c.decodeIfPresent(Bool.self, forKey: .dpop) ?? false,
            forwardedParameters: try c.decodeIfPresent([String].self, forKey: .forwardedParameters) ?? Self.defaultForwardedParameters,
            authorizationParameters: try c.decodeIfPresent([String: String].self, forKey: .authorizationParameters) ?? [:],
            scopes: try c.decodeIfPresent([String].self, forKey: .scopes) ?? ["openid"],
            acrValues: try c.decodeIfPresent([String].self, forKey: .acrValues) ?? [],
            decryptionKeyFile: try c.decodeIfPresent(String.self, forKey: .decryptionKeyFile),
            decryptionKey: try c.decodeIfPresent(String.self, forKey: .decryptionKey),
            decryptionKeyID: try c.decodeIfPresent(String.self, forKey: .decryptionKeyID),
            identitySource: try c.decodeIfPresent(IdentitySource.self, forKey: .identitySource) ?? .idToken,
            requiredClaims: try c.decodeIfPresent([String: [String]].self, forKey: .requiredClaims) ?? [:],
            metadata: try c.decodeIfPresent(ProviderMetadata.self, forKey: .metadata)
        )
    }
}
