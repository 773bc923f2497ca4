import Foundation

/// Builds the authorization request parameters and URL (OpenID Connect Core §3.1.2.1, RFC 7636, RFC 9126).
struct AuthorizationRequestBuilder {
    let configuration: ClientConfiguration
    let metadata: ProviderMetadata

    /// Every parameter of the request, in a stable order; `dpop_jkt` names `dpopKey` when the sign-in has one.
    func parameters(state: String, nonce: String, pkce: PKCE, dpopKey: DPoPKey? = nil, options: AuthorizationOptions) throws -> [(String, String)] {
        if let methods = metadata.codeChallengeMethodsSupported, !methods.contains("S256") {
            throw SwitchbackError(.invalidConfiguration, "the provider does not list S256 PKCE, and plain is never used")
        }
        var fields: [(String, String)] = [
            ("response_type", options.responseType.rawValue),
            ("client_id", configuration.clientID),
            ("redirect_uri", configuration.redirectURI.absoluteString),
            ("scope", scopes(options).joined(separator: " ")),
            ("state", state),
            ("nonce", nonce),
        ]
        switch options.responseType {
        case .code:
            fields += [("code_challenge", pkce.challenge), ("code_challenge_method", pkce.method)]
        case .idTokenToken:
            // Tokens must not go in a query (OAuth 2.0 Multiple Response Type Encoding Practices §3.0).
            if options.responseMode == .query {
                throw SwitchbackError(
                    .invalidConfiguration, "the implicit response type is answered in the fragment or by form_post, never in the query")
            }
            if let supported = metadata.responseTypesSupported,
                !supported.contains(where: { Set($0.split(separator: " ")) == ["id_token", "token"] })
            {
                throw SwitchbackError(.invalidConfiguration, "the provider does not list response type \"id_token token\"")
            }
        }
        if let mode = options.responseMode { fields.append(("response_mode", mode.rawValue)) }
        if !options.acrValues.isEmpty { fields.append(("acr_values", options.acrValues.joined(separator: " "))) }
        if !options.uiLocales.isEmpty { fields.append(("ui_locales", options.uiLocales.joined(separator: " "))) }
        if let hint = options.loginHint { fields.append(("login_hint", hint)) }
        if !options.prompt.isEmpty { fields.append(("prompt", options.prompt.joined(separator: " "))) }
        if let maxAge = options.maxAge {
            guard maxAge >= 0 else { throw SwitchbackError(.invalidConfiguration, "max_age must not be negative") }
            fields.append(("max_age", String(maxAge)))
        }
        if let claims = options.claims {
            guard case .object = claims else {
                throw SwitchbackError(.invalidConfiguration, "the claims parameter must be a JSON object")
            }
            fields.append(("claims", claims.description))
        }
        if let dpopKey { fields.append(("dpop_jkt", dpopKey.thumbprint)) }
        for (name, value) in options.extraParameters {
            guard !AuthorizationOptions.reservedNames.contains(name) else {
                throw SwitchbackError(.invalidConfiguration, "extra parameter \"\(name)\" would replace one the core sets")
            }
            fields.append((name, value))
        }
        return fields
    }

    /// The request's scopes: the options', else the configuration's.
    func scopes(_ options: AuthorizationOptions) -> [String] {
        options.scopes.map { ClientConfiguration.scopes($0, for: configuration.identitySource) } ?? configuration.scopes
    }

    /// The front-channel URL: every parameter, or only `client_id` and `request_uri` after PAR.
    func url(parameters: [(String, String)]) throws -> URL {
        guard var components = URLComponents(url: metadata.authorizationEndpoint, resolvingAgainstBaseURL: false) else {
            throw SwitchbackError(.invalidURL, "the authorization endpoint is not a valid URL")
        }
        let existing = components.percentEncodedQuery.map { $0 + "&" } ?? ""
        components.percentEncodedQuery = existing + FormEncoding.encode(parameters)
        guard let url = components.url else {
            throw SwitchbackError(.invalidURL, "could not build the authorization URL")
        }
        return url
    }
}
