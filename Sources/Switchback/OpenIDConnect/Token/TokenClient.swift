public import Foundation
public import Logging

/// Talks to the token and PAR endpoints with the configured client authentication.
public struct TokenClient: Sendable {
    public let configuration: ClientConfiguration
    public let metadata: ProviderMetadata
    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let entropy: any EntropySource
    private let logger: Logger
    private let nonces: DPoPNonces

    public init(
        configuration: ClientConfiguration,
        metadata: ProviderMetadata,
        transport: any HTTPTransport,
        clock: any WallClock,
        entropy: any EntropySource,
        logger: Logger
    ) {
        self.init(
            configuration: configuration, metadata: metadata, transport: transport, clock: clock, entropy: entropy, logger: logger,
            nonces: DPoPNonces())
    }

    /// A client that shares `nonces` with the other requests of its ``OIDCClient``.
    init(
        configuration: ClientConfiguration, metadata: ProviderMetadata, transport: any HTTPTransport, clock: any WallClock,
        entropy: any EntropySource, logger: Logger, nonces: DPoPNonces
    ) {
        self.configuration = configuration
        self.metadata = metadata
        self.transport = transport
        self.clock = clock
        self.entropy = entropy
        self.logger = logger
        self.nonces = nonces
    }

    /// Redeems an authorization code with its PKCE verifier (RFC 6749 §4.1.3, RFC 7636 §4.5), proving
    /// `dpop` when the sign-in has a DPoP key: the tokens must then come back DPoP-bound.
    public func exchange(code: String, verifier: String, redirectURI: URL, dpop: DPoPKey? = nil) async throws -> TokenResponse {
        try await tokenRequest(
            [
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", redirectURI.absoluteString),
                ("code_verifier", verifier),
            ], dpop: dpop)
    }

    /// Uses a refresh token (RFC 6749 §6), proving `dpop`, the key it is bound to, when it is bound.
    public func refresh(refreshToken: String, scopes: [String]? = nil, dpop: DPoPKey? = nil) async throws -> TokenResponse {
        var fields = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let scopes { fields.append(("scope", scopes.joined(separator: " "))) }
        return try await tokenRequest(fields, dpop: dpop)
    }

    /// An access token for the client itself (RFC 6749 §4.4, `grant_type=client_credentials`), as a
    /// backend asks Norwegian BankID for one with scope `openid permissions/client` before registering
    /// a permission.
    public func clientCredentials(scopes: [String]) async throws -> TokenResponse {
        try await tokenRequest([("grant_type", "client_credentials"), ("scope", scopes.joined(separator: " "))], dpop: nil)
    }

    /// Pushes the authorization parameters (RFC 9126), with a proof by the sign-in's DPoP key when it has
    /// one (RFC 9449 §10.1), and returns the `request_uri` and its lifetime.
    public func pushAuthorizationRequest(_ parameters: [(String, String)], dpop: DPoPKey? = nil) async throws -> (requestURI: String, expiresIn: Int)
    {
        guard let endpoint = metadata.pushedAuthorizationRequestEndpoint else {
            throw SwitchbackError(.parRequired, "the provider publishes no pushed_authorization_request_endpoint")
        }
        let fields = parameters.filter { $0.0 != "client_id" }
        let response = try await post(endpoint, fields: fields, dpop: dpop)
        guard response.status == 201 || response.status == 200 else {
            throw Self.endpointError(response, code: .parFailed, what: "the pushed authorization request")
        }
        struct PARResponse: Decodable {
            let request_uri: String
            let expires_in: Int
        }
        guard let body = try? JSONDecoder().decode(PARResponse.self, from: response.body), !body.request_uri.isEmpty else {
            throw SwitchbackError(.parFailed, "the PAR response lacks request_uri or expires_in", httpStatus: response.status)
        }
        return (body.request_uri, body.expires_in)
    }

    /// Revokes `token` (RFC 7009 §2.1), authenticated as this client; `typeHint` is `refresh_token` or
    /// `access_token`. The server answers 200 also for a token it does not know (§2.2), which is success.
    public func revoke(_ token: String, typeHint: String) async throws {
        guard let endpoint = metadata.revocationEndpoint else {
            throw SwitchbackError(.invalidConfiguration, "the provider publishes no revocation_endpoint")
        }
        let response = try await post(endpoint, fields: [("token", token), ("token_type_hint", typeHint)], dpop: nil)
        guard response.status == 200 else {
            throw Self.endpointError(response, code: .tokenEndpointError, what: "the revocation")
        }
    }

    /// Asks the provider whether `token` is active (RFC 7662), authenticated as this client.
    @_spi(SwitchbackInternals) public func introspect(_ token: String) async throws -> TokenIntrospection {
        guard let endpoint = metadata.introspectionEndpoint else {
            throw SwitchbackError(.invalidConfiguration, "the provider publishes no introspection_endpoint")
        }
        let response = try await post(endpoint, fields: [("token", token), ("token_type_hint", "access_token")], dpop: nil)
        guard response.status == 200 else { throw Self.endpointError(response, code: .tokenEndpointError, what: "the introspection request") }
        guard let introspection = try? JSONDecoder().decode(TokenIntrospection.self, from: response.body) else {
            throw SwitchbackError(.invalidTokenResponse, "the introspection answer is not RFC 7662 JSON", httpStatus: response.status)
        }
        return introspection
    }

    /// The token endpoint's answer to a refresh as it came, whatever its status: a refresh must see a
    /// 200 it cannot accept, because the provider may have rotated the refresh token in it.
    func refreshResponse(refreshToken: String, dpop: DPoPKey?) async throws -> HTTPResponse {
        try await post(metadata.tokenEndpoint, fields: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], dpop: dpop)
    }

    private func tokenRequest(_ fields: [(String, String)], dpop: DPoPKey?) async throws -> TokenResponse {
        let response = try await post(metadata.tokenEndpoint, fields: fields, dpop: dpop)
        return try tokens(from: response, dpop: dpop, grant: fields.first?.1 ?? "")
    }

    /// The tokens of a token endpoint's answer: a 200 holding a token response of a type the request allows
    /// (only `DPoP` when it proved a key); anything else is a typed error.
    func tokens(from response: HTTPResponse, dpop: DPoPKey?, grant: String) throws -> TokenResponse {
        guard response.status == 200 else {
            throw Self.endpointError(response, code: .tokenEndpointError, what: "the token request")
        }
        let tokens: TokenResponse
        do {
            tokens = try JSONDecoder().decode(TokenResponse.self, from: response.body)
        } catch {
            throw SwitchbackError(.invalidTokenResponse, "the token endpoint's answer is not a token response", httpStatus: response.status)
        }
        let expected = dpop == nil ? ["Bearer", "DPoP"] : ["DPoP"]
        guard expected.contains(where: { tokens.tokenType.caseInsensitiveCompare($0) == .orderedSame }) else {
            throw SwitchbackError(
                .invalidTokenResponse,
                dpop == nil
                    ? "unsupported token_type \"\(tokens.tokenType.prefix(40))\""
                    : "the provider issued a \(tokens.tokenType.prefix(40)) token although the request proved a DPoP key; an unbound token is refused"
            )
        }
        logger.debug("token endpoint answered", metadata: ["grant": "\(grant)", "tokens": "\(tokens)"])
        return tokens
    }

    /// Sends a form POST with the client authentication applied. A proof carries the nonce the server
    /// gave last (RFC 9449 §8.2); when the server answers with `use_dpop_nonce` and a `DPoP-Nonce` (§8.1),
    /// the request is sent once more, with a new proof carrying that nonce (and a new client assertion:
    /// its `jti` is single use).
    private func post(_ url: URL, fields: [(String, String)], dpop: DPoPKey?) async throws -> HTTPResponse {
        let response = try await post(url, fields: fields, dpop: dpop, nonce: dpop == nil ? nil : nonces.nonce(for: url))
        if dpop != nil { nonces.remember(response, from: url) }
        guard let dpop, let nonce = DPoPKey.nonceRequested(by: response, resourceServer: false) else { return response }
        logger.debug("the server asked for a DPoP nonce; sending the request again with it", metadata: ["url": "\(Redaction.describe(url))"])
        let retried = try await post(url, fields: fields, dpop: dpop, nonce: nonce)
        nonces.remember(retried, from: url)
        return retried
    }

    private func post(_ url: URL, fields: [(String, String)], dpop: DPoPKey?, nonce: String?) async throws -> HTTPResponse {
        var fields = fields
        var headers: [String: String] = [:]
        switch configuration.authentication {
        case .none:
            fields.append(("client_id", configuration.clientID))
        case .clientSecretBasic(let secret):
            let credentials = "\(FormEncoding.escape(configuration.clientID)):\(FormEncoding.escape(secret))"
            headers["Authorization"] = "Basic " + Data(credentials.utf8).base64EncodedString()
        case .clientSecretPost(let secret):
            fields.append(("client_id", configuration.clientID))
            fields.append(("client_secret", secret))
        case .privateKeyJWT(let signer):
            let assertion = try await signer.assertion(
                clientID: configuration.clientID, audience: metadata.issuer, now: clock.now(), entropy: entropy)
            fields.append(("client_id", configuration.clientID))
            fields.append(("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"))
            fields.append(("client_assertion", assertion))
        }
        if let dpop {
            headers["DPoP"] = try dpop.proof(method: "POST", url: url, nonce: nonce, now: clock.now(), jti: entropy.token(bytes: 16))
        }
        logger.debug(
            "POST",
            metadata: ["url": "\(Redaction.describe(url))", "auth": "\(configuration.authentication)", "dpop": "\(dpop != nil)"])
        do {
            return try await transport.send(.form(url, fields, headers: headers))
        } catch let error as SwitchbackError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw SwitchbackError(.transportFailed, "could not reach \(Redaction.describe(url))", underlying: error)
        }
    }

    /// A typed error for a refused request: the OAuth error when the body is one, else the status.
    static func endpointError(_ response: HTTPResponse, code: SwitchbackError.Code, what: String) -> SwitchbackError {
        if let oauth = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body) {
            return SwitchbackError(code, "the provider refused \(what) (HTTP \(response.status))", oauthError: oauth, httpStatus: response.status)
        }
        let kind: SwitchbackError.Code = response.status >= 500 ? .httpStatus : .invalidTokenResponse
        return SwitchbackError(
            code == .parFailed ? .parFailed : kind, "\(what) failed with HTTP \(response.status) and no OAuth error body", httpStatus: response.status
        )
    }
}
