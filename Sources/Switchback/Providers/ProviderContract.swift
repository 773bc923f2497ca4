/// What a provider documents about the behaviours this library and its emulator rely on, one term at a
/// time, each with its public source and whether the source confirms it. The emulator's profile for the
/// provider enforces every term (a request the contract does not allow is refused as the provider
/// documents), and `Documentation/Providers.md` states each one with the same source; a test checks both.
public struct ProviderContract: Sendable, Equatable {
    /// One documented behaviour.
    public struct Term: Sendable, Equatable {
        /// What the term is about.
        public enum Key: String, Sendable, CaseIterable {
            /// Seconds a pushed authorization request's `request_uri` lives (RFC 9126 `expires_in`).
            case pushedRequestLifetime
            /// Seconds an authorization code lives.
            case codeLifetime
            /// Seconds an access token lives (the token response's `expires_in`).
            case accessTokenLifetime
            /// Whether an access token is good for one call: a second use is refused.
            case singleUseAccessTokens
            /// The response modes the authorization endpoint takes (`response_mode`); another is refused.
            case responseModes
            /// Whether the token endpoint issues refresh tokens and takes the `refresh_token` grant.
            case refreshTokens
            /// Whether an expired or used `request_uri` is answered by a redirect to the request's redirect URI
            /// with `error=invalid_request_uri` and its `state` (rather than a page the user is left on).
            case redirectsInvalidRequestURI
            /// What the provider's `sub` (userinfo's, and an ID token's where there is one) starts with, before
            /// the user's identifier (UAE Pass: `UAEPASS/` for citizens and residents).
            case subjectPrefix
            /// Whether userinfo carries `acr`.
            case userInfoACR
            /// The scopes a client may ask for; any other is refused with `invalid_scope` (`openid` among them,
            /// and required).
            case allowedScopes
            /// Whether ID tokens carry `sub_attributes` (the user's identity attributes) for the identity
            /// scopes asked for.
            case subjectAttributes
            /// The OAuth error for a request without the DPoP proof the endpoint requires (PAR, token).
            case missingDPoPError
            /// The OAuth error for a DPoP proof that is invalid, expired or malformed.
            case invalidDPoPError
            /// The curves every key of the client's JWKS must be on (each key `kty: EC`, public only, with a
            /// unique `kid` and a `use`; one `sig` and one `enc` key at least).
            case clientKeyCurves
            /// The key management algorithms (`alg`) the client's encryption key may name.
            case keyEncryptionAlgorithms
            /// The content encryption (`enc`) of the encrypted ID tokens.
            case idTokenContentEncryption
            /// Whether, after the authenticator app returns, the provider shows a page of its own whose button
            /// leads to the redirect URI (rather than redirecting there plainly).
            case providerReturnPage
        }

        public enum Value: Sendable, Equatable {
            case seconds(Double)
            case flag(Bool)
            case text(String)
            case list([String])
        }

        /// Whether the source says so, or the term is this project's best reading and why.
        public enum Status: Sendable, Equatable {
            case confirmed
            case assumed(String)
        }

        public let key: Key
        public let value: Value
        /// The public page (or vendor SDK or sample file) the term comes from.
        public let source: String
        /// What the source says: its own words in quotation marks where quoted, else a summary.
        public let says: String
        public let status: Status

        public init(_ key: Key, _ value: Value, source: String, says: String, status: Status = .confirmed) {
            self.key = key
            self.value = value
            self.source = source
            self.says = says
            self.status = status
        }
    }

    /// The preset's name (`ProviderPreset.name`).
    public let provider: String
    public var terms: [Term]

    public init(provider: String, terms: [Term]) {
        self.provider = provider
        self.terms = terms
    }

    /// The term for `key`, if the contract has one.
    public func term(_ key: Term.Key) -> Term? { terms.first { $0.key == key } }

    /// A `seconds` term's value.
    public func seconds(_ key: Term.Key) -> Double? {
        if case .seconds(let value)? = term(key)?.value { return value }
        return nil
    }

    /// A `flag` term's value.
    public func flag(_ key: Term.Key) -> Bool? {
        if case .flag(let value)? = term(key)?.value { return value }
        return nil
    }

    /// A `text` term's value.
    public func text(_ key: Term.Key) -> String? {
        if case .text(let value)? = term(key)?.value { return value }
        return nil
    }

    /// A `list` term's value.
    public func list(_ key: Term.Key) -> [String]? {
        if case .list(let value)? = term(key)?.value { return value }
        return nil
    }

    /// This contract with `key`'s value replaced: how a test shows that a term is enforced, not decoration.
    public func replacing(_ key: Term.Key, with value: Term.Value) -> ProviderContract {
        var copy = self
        copy.terms = terms.map { $0.key == key ? Term(key, value, source: $0.source, says: $0.says, status: $0.status) : $0 }
        return copy
    }

    /// Every provider's contract.
    public static let all: [ProviderContract] = [.singpass, .uaePass, .mitID, .mitIDIdura, .bankIDNorway, .bankIDSweden, .idMe]

    /// The contract of the preset named `provider`, if there is one.
    public static func of(_ provider: String) -> ProviderContract? { all.first { $0.provider == provider } }
}
