public import Foundation

/// An OpenID provider's metadata (OpenID Connect Discovery 1.0 §3, RFC 8414, RFC 9126, RFC 9207).
///
/// Fetch it with ``DiscoveryClient`` or, for a provider that publishes no discovery document, build it
/// by hand and pass it as ``ProviderSource/static(_:)``.
public struct ProviderMetadata: Sendable, Equatable, Codable {
    public var issuer: String
    public var authorizationEndpoint: URL
    public var tokenEndpoint: URL
    public var jwksURI: URL
    public var userinfoEndpoint: URL?
    public var pushedAuthorizationRequestEndpoint: URL?
    public var requirePushedAuthorizationRequests: Bool
    public var endSessionEndpoint: URL?
    public var introspectionEndpoint: URL?
    /// Token revocation (RFC 7009 §2), from `revocation_endpoint` (RFC 8414).
    public var revocationEndpoint: URL?
    public var idTokenSigningAlgValuesSupported: [String]?
    public var userinfoSigningAlgValuesSupported: [String]?
    public var codeChallengeMethodsSupported: [String]?
    public var responseModesSupported: [String]?
    /// `response_types_supported`; each entry is a space-separated set of types (`id_token token`).
    public var responseTypesSupported: [String]?
    public var tokenEndpointAuthMethodsSupported: [String]?
    public var scopesSupported: [String]?
    public var acrValuesSupported: [String]?
    /// RFC 9207: when true, every authorization response must carry `iss`.
    public var authorizationResponseIssParameterSupported: Bool
    /// How ``endSessionEndpoint`` takes its parameters. Not part of a discovery document: a discovered
    /// provider follows RP-Initiated Logout; a documented endpoint says otherwise (UAE Pass).
    public var endSessionStyle: EndSessionStyle = .rpInitiatedLogout

    /// The parameters an end-session endpoint takes.
    public enum EndSessionStyle: Sendable, Equatable {
        /// OpenID Connect RP-Initiated Logout 1.0 §2: `id_token_hint`, `client_id`,
        /// `post_logout_redirect_uri` and `state`, which comes back with the return.
        case rpInitiatedLogout
        /// Only `redirect_uri`, and no `state` comes back (UAE Pass "4. Logout":
        /// `/idshub/logout?redirect_uri=…`). The return is checked by its address alone.
        case redirectURIOnly
    }

    public init(
        issuer: String,
        authorizationEndpoint: URL,
        tokenEndpoint: URL,
        jwksURI: URL,
        userinfoEndpoint: URL? = nil,
        pushedAuthorizationRequestEndpoint: URL? = nil,
        requirePushedAuthorizationRequests: Bool = false,
        endSessionEndpoint: URL? = nil,
        introspectionEndpoint: URL? = nil,
        revocationEndpoint: URL? = nil,
        idTokenSigningAlgValuesSupported: [String]? = nil,
        userinfoSigningAlgValuesSupported: [String]? = nil,
        codeChallengeMethodsSupported: [String]? = nil,
        responseModesSupported: [String]? = nil,
        responseTypesSupported: [String]? = nil,
        tokenEndpointAuthMethodsSupported: [String]? = nil,
        scopesSupported: [String]? = nil,
        acrValuesSupported: [String]? = nil,
        authorizationResponseIssParameterSupported: Bool = false
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.userinfoEndpoint = userinfoEndpoint
        self.pushedAuthorizationRequestEndpoint = pushedAuthorizationRequestEndpoint
        self.requirePushedAuthorizationRequests = requirePushedAuthorizationRequests
        self.endSessionEndpoint = endSessionEndpoint
        self.introspectionEndpoint = introspectionEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.idTokenSigningAlgValuesSupported = idTokenSigningAlgValuesSupported
        self.userinfoSigningAlgValuesSupported = userinfoSigningAlgValuesSupported
        self.codeChallengeMethodsSupported = codeChallengeMethodsSupported
        self.responseModesSupported = responseModesSupported
        self.responseTypesSupported = responseTypesSupported
        self.tokenEndpointAuthMethodsSupported = tokenEndpointAuthMethodsSupported
        self.scopesSupported = scopesSupported
        self.acrValuesSupported = acrValuesSupported
        self.authorizationResponseIssParameterSupported = authorizationResponseIssParameterSupported
    }

    enum CodingKeys: String, CodingKey {
        case issuer
        case authorizationEndpoint = "authorization_endpoint"
        case tokenEndpoint = "token_endpoint"
        case jwksURI = "jwks_uri"
        case userinfoEndpoint = "userinfo_endpoint"
        case pushedAuthorizationRequestEndpoint = "pushed_authorization_request_endpoint"
        case requirePushedAuthorizationRequests = "require_pushed_authorization_requests"
        case endSessionEndpoint = "end_session_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case idTokenSigningAlgValuesSupported = "id_token_signing_alg_values_supported"
        case userinfoSigningAlgValuesSupported = "userinfo_signing_alg_values_supported"
        case codeChallengeMethodsSupported = "code_challenge_methods_supported"
        case responseModesSupported = "response_modes_supported"
        case responseTypesSupported = "response_types_supported"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case scopesSupported = "scopes_supported"
        case acrValuesSupported = "acr_values_supported"
        case authorizationResponseIssParameterSupported = "authorization_response_iss_parameter_supported"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(String.self, forKey: .issuer)
        authorizationEndpoint = try container.decode(URL.self, forKey: .authorizationEndpoint)
        tokenEndpoint = try container.decode(URL.self, forKey: .tokenEndpoint)
        jwksURI = try container.decode(URL.self, forKey: .jwksURI)
        userinfoEndpoint = try container.decodeIfPresent(URL.self, forKey: .userinfoEndpoint)
        pushedAuthorizationRequestEndpoint = try container.decodeIfPresent(URL.self, forKey: .pushedAuthorizationRequestEndpoint)
        requirePushedAuthorizationRequests = try container.decodeIfPresent(Bool.self, forKey: .requirePushedAuthorizationRequests) ?? false
        endSessionEndpoint = try container.decodeIfPresent(URL.self, forKey: .endSessionEndpoint)
        introspectionEndpoint = try container.decodeIfPresent(URL.self, forKey: .introspectionEndpoint)
        revocationEndpoint = try container.decodeIfPresent(URL.self, forKey: .revocationEndpoint)
        idTokenSigningAlgValuesSupported = try container.decodeIfPresent([String].self, forKey: .idTokenSigningAlgValuesSupported)
        userinfoSigningAlgValuesSupported = try container.decodeIfPresent([String].self, forKey: .userinfoSigningAlgValuesSupported)
        codeChallengeMethodsSupported = try container.decodeIfPresent([String].self, forKey: .codeChallengeMethodsSupported)
        responseModesSupported = try container.decodeIfPresent([String].self, forKey: .responseModesSupported)
        responseTypesSupported = try container.decodeIfPresent([String].self, forKey: .responseTypesSupported)
        tokenEndpointAuthMethodsSupported = try container.decodeIfPresent([String].self, forKey: .tokenEndpointAuthMethodsSupported)
        scopesSupported = try container.decodeIfPresent([String].self, forKey: .scopesSupported)
        acrValuesSupported = try container.decodeIfPresent([String].self, forKey: .acrValuesSupported)
        authorizationResponseIssParameterSupported =
            try container.decodeIfPresent(Bool.self, forKey: .authorizationResponseIssParameterSupported) ?? false
    }

    /// Every endpoint must be HTTPS, except on loopback hosts (local emulators and test peers).
    func checkEndpointsAreSecure() throws {
        let endpoints =
            [authorizationEndpoint, tokenEndpoint, jwksURI]
            + [userinfoEndpoint, pushedAuthorizationRequestEndpoint, introspectionEndpoint, revocationEndpoint, endSessionEndpoint].compactMap { $0 }
        for url in endpoints where !EndpointSecurity.isAcceptable(url) {
            throw SwitchbackError(.insecureEndpoint, "endpoint \(Redaction.describe(url)) is not HTTPS")
        }
    }
}

/// HTTPS everywhere except loopback.
@_spi(SwitchbackInternals) public enum EndpointSecurity {
    @_spi(SwitchbackInternals) public static func isAcceptable(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "https": return true
        case "http": return isLoopback(url.host)
        default: return false
        }
    }

    /// Exactly `localhost`, an IPv4 literal in 127.0.0.0/8 (four decimal octets, no leading zeros), or
    /// the IPv6 literal `::1` (bracketed or not). A name such as `127.attacker.example` is not loopback.
    @_spi(SwitchbackInternals) public static func isLoopback(_ host: String?) -> Bool {
        guard let host = host?.lowercased() else { return false }
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in
            guard (1...3).contains(octet.count), octet.allSatisfy({ $0.isASCII && $0.isNumber }), octet == "0" || octet.first != "0",
                let value = Int(octet)
            else { return false }
            return value <= 255
        }
    }
}
