public import Foundation
import Hummingbird
import Logging
@_spi(SwitchbackInternals) public import Switchback

/// Backend code exchange and the upfront permission proxy.
extension CompanionService {
    /// `POST /exchange/start`: the server prepares the authorization (with PAR when the provider offers it)
    /// for the app's redirect URI, keeps the verifier, and gives the app the URL to open.
    func startExchange(_ request: Request) async throws -> Response {
        guard let exchange = configuration.exchange else { throw CompanionError(.notConfigured, "backend code exchange is off") }
        let body = try await decode(CompanionAPI.ExchangeStart.self, from: request)
        guard exchange.redirectURIs.contains(body.redirectURI), let redirectURI = URL(string: body.redirectURI) else {
            throw CompanionError(.notAllowed, "the redirect_uri is not one of this server's exchange redirect URIs")
        }
        try Self.requireBinding(body.binding)
        let session = try await startAuthorization(
            redirectURI: redirectURI, purpose: .exchange(bindingDigest: Secrets.digest(body.binding), attestedKey: Self.assertingKey),
            options: try options(acrValues: body.acrValues, loginHint: body.loginHint, uiLocales: body.uiLocales, parameters: body.parameters)
        )
        return Replies.json(
            CompanionAPI.AuthorizationStarted(
                authorizationURL: session.authorizationURL.absoluteString, state: session.state, expiresIn: Int(Self.authorizationLifetime)))
    }

    /// `POST /exchange`: redeems the code as a confidential client, validates the ID token with the core,
    /// and gives the app tokens or a session.
    ///
    /// - Server-started (`callback_url`): checked against the authorization `POST /exchange/start` made
    ///   (state, issuer, redirect URI), which is used up.
    /// - App-started (`code`, `code_verifier`, `redirect_uri`, `nonce`): the app ran the authorization with
    ///   this server's client ID and checked `state` and `iss` itself; the code is redeemed for an
    ///   allow-listed redirect URI and the ID token must carry the app's nonce. The provider refuses a
    ///   code redeemed twice.
    func exchange(_ request: Request) async throws -> Response {
        guard let exchange = configuration.exchange else { throw CompanionError(.notConfigured, "backend code exchange is off") }
        let body = try await decode(CompanionAPI.Exchange.self, from: request)
        let outcome: SignInOutcome
        switch (body.callbackURL, body.code) {
        case (let callbackURL?, nil):
            guard callbackURL.utf8.count <= 8192, let callback = URL(string: callbackURL) else {
                throw CompanionError(.invalidRequest, "callback_url is not a URL")
            }
            let state = Self.parameters(of: callback)["state"]
            // The binding is checked before the authorization is used up: an interceptor without it can
            // neither redeem the code nor spend the app's state.
            guard let state, let waiting = try await store.lookUp(.authorization, secret: state, as: PendingAuthorization.self, now: clock.now())
            else {
                throw CompanionError(.invalidState, "this sign-in response is unknown, expired or was already used")
            }
            guard case .exchange(let bindingDigest, let attestedKey) = waiting.purpose else {
                throw CompanionError(.invalidState, "this state belongs to another route")
            }
            guard let binding = body.binding, Secrets.isPlausible(binding), ConstantTime.equals(Secrets.digest(binding), bindingDigest) else {
                logger.warning("exchange presented without the binding its sign-in started with; nothing was redeemed")
                throw CompanionError(.invalidGrant, "this sign-in response belongs to another app session")
            }
            try requireAssertion(by: attestedKey)
            let pending = try await takeAuthorization(state: state, for: .exchange)
            outcome = try await complete(.redirect(callback), pending: pending)
        case (nil, let code?):
            // An app-started exchange calls the provider's token endpoint for a code nobody here issued: it
            // costs what a start does.
            try await Self.admitStart("POST /exchange (app code)")
            try requireAttestedStart()
            outcome = try await redeemAppCode(code, body, allowed: exchange.redirectURIs)
        default:
            throw CompanionError(.invalidRequest, "send either callback_url, or code with code_verifier, redirect_uri and nonce")
        }
        return Replies.json(try await deliver(outcome, as: exchange.returns))
    }

    private func redeemAppCode(_ code: String, _ body: CompanionAPI.Exchange, allowed: [String]) async throws -> SignInOutcome {
        guard let redirect = body.redirectURI, allowed.contains(redirect), let redirectURI = URL(string: redirect) else {
            throw CompanionError(.notAllowed, "the redirect_uri is not one of this server's exchange redirect URIs")
        }
        guard (1...2048).contains(code.utf8.count), let verifier = body.codeVerifier.flatMap({ try? PKCE(verifier: $0) }) else {
            throw CompanionError(.invalidRequest, "the code is empty or too long, or code_verifier is not a PKCE verifier")
        }
        guard let nonce = body.nonce, (16...512).contains(nonce.utf8.count) else {
            throw CompanionError(.invalidRequest, "a nonce of at least 16 characters is needed: the ID token must be bound to the app's request")
        }
        let client = try await requireProvider().client(for: redirectURI)
        do {
            return SignInOutcome(try await client.redeem(code: code, verifier: verifier, nonce: nonce))
        } catch let error as SwitchbackError where error.code == .tokenEndpointError && error.oauthError?.error == "invalid_grant" {
            throw CompanionError(.invalidGrant, "the provider refused the code: it is unknown, expired, already used or not bound to this verifier")
        } catch let error as SwitchbackError {
            logger.notice("app code could not be redeemed", metadata: ["reason": "\(error.code)"])
            throw CompanionError(.providerFailed, "the sign-in could not be completed: \(error.message)")
        }
    }

    /// Query and fragment parameters of a callback URL (the fragment wins, as in a fragment response).
    static func parameters(of url: URL) -> [String: String] {
        var result: [String: String] = [:]
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        for part in [components?.percentEncodedQuery, components?.percentEncodedFragment] {
            for (name, value) in FormEncoding.decode(part ?? "", plusIsSpace: true) ?? [] { result[name] = value }
        }
        return result
    }

    /// `POST /permission`: asks Norwegian BankID for an upfront permission for one allow-listed
    /// `app_callback_uri`, as this server's confidential client: a client-credentials token with the
    /// permissions scope, the biometrics server's `permissions_endpoint` from its discovery document, and
    /// the configured permission posted there (`type`, `iat`, `exp`, the statement as base64url `permission`,
    /// and the `app_callback_uri`); the permission token and binding message go to the app.
    /// `POST /permission/statement` from the app's backend (`Authorization: Bearer <permission.backendToken>`)
    /// with `{"statement": {…}}`, one transaction's statement (a `payment.v1`'s `payments`, say). The companion
    /// adds a fresh `nonce` and, when the statement has none, an `id` (32 random bytes each, base64url, as
    /// BankID's examples make them for every permission), keeps it for `permission.lifetime` and answers
    /// `201 {"statement_id", "id", "nonce", "expires_in"}`: the ID for the app, once; `id` and `nonce` for the
    /// backend to match the permission BankID reports.
    func registerStatement(_ request: Request) async throws -> Response {
        guard let permission = configuration.permission else { throw CompanionError(.notConfigured, "the permission proxy is off") }
        let presented = request.headers[.authorization].flatMap { header -> Substring? in
            let parts = header.split(separator: " ", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "bearer" ? parts[1] : nil
        }
        guard let presented, ConstantTime.equals(String(presented), permission.backendToken) else {
            throw CompanionError(.invalidToken, "this route is your backend's: send permission.backendToken as Authorization: Bearer")
        }
        struct Body: Decodable { let statement: JSONValue }
        let body = try await decode(Body.self, from: request)
        guard case .object(var statement) = body.statement, body.statement.description.utf8.count <= 4096 else {
            throw CompanionError(.invalidRequest, "statement must be a JSON object (what the user approves) of at most 4 KiB")
        }
        let nonce = Base64URL.encode(entropy.randomBytes(count: 32))
        statement["nonce"] = .string(nonce)
        let id: String
        if case .string(let given)? = statement["id"], !given.isEmpty, given.utf8.count <= 128 {
            id = given
        } else {
            id = Base64URL.encode(entropy.randomBytes(count: 32))
            statement["id"] = .string(id)
        }
        let expiresAt = clock.now().addingTimeInterval(permission.lifetime)
        let statementID = try await store.issue(.permissionStatement, JSONValue.object(statement).description, expiresAt: expiresAt, entropy: entropy)
        return Replies.json(
            ["statement_id": statementID, "id": id, "nonce": nonce, "expires_in": Int(permission.lifetime.rounded())],
            status: .created)
    }

    func permission(_ request: Request) async throws -> Response {
        guard let permission = configuration.permission else { throw CompanionError(.notConfigured, "the permission proxy is off") }
        let body = try await decode(CompanionAPI.PermissionRequest.self, from: request)
        guard permission.appCallbackURIs.contains(body.appCallbackURI) else {
            throw CompanionError(.notAllowed, "the app_callback_uri is not one of this server's allowed app callbacks")
        }
        // The statement is taken before anything else is asked of the provider: each works once.
        guard let statementText = try await store.redeem(.permissionStatement, secret: body.statementID, as: String.self, now: clock.now())
        else {
            throw CompanionError(
                .invalidGrant, "the statement_id is unknown, expired or was already used: have your backend register the statement again")
        }
        let provider = try requireProvider()
        let token: TokenResponse
        let endpoint: URL
        do {
            token = try await provider.anyClient().tokenClient().clientCredentials(scopes: permission.scope.split(separator: " ").map(String.init))
            endpoint = try await permissionsEndpoint(of: permission.server, through: provider)
        } catch let error as SwitchbackError {
            throw CompanionError(.providerFailed, "the permission could not be asked for: \(error.message)")
        }
        let issuedAt = clock.now().timeIntervalSince1970.rounded(.down)
        let registration: JSONValue = .object([
            "type": .string(permission.type), "iat": .number(issuedAt), "exp": .number(issuedAt + permission.lifetime.rounded(.down)),
            "permission": .string(Base64URL.encode(Data(statementText.utf8))),
            // Where app_callback_uri goes is not in the sources read (Documentation/Providers.md): the permission, which it needs.
            "app_callback_uri": .string(body.appCallbackURI),
        ])
        let statement = Data(registration.description.utf8)
        let answer: Switchback.HTTPResponse
        do {
            answer = try await provider.send(
                Switchback.HTTPRequest(
                    method: .post, url: endpoint,
                    headers: ["Authorization": "Bearer \(token.accessToken)", "Content-Type": "application/json", "Accept": "application/json"],
                    body: statement
                ))
        } catch {
            throw CompanionError(.providerFailed, "the permissions endpoint could not be reached")
        }
        struct Granted: Decodable {
            let permissionToken: String
            let bindingMessage: String?
        }
        guard (200...201).contains(answer.status), let granted = try? JSONDecoder().decode(Granted.self, from: answer.body) else {
            logger.notice("permission refused by the provider", metadata: ["status": "\(answer.status)"])
            throw CompanionError(.providerFailed, "the provider refused the permission (HTTP \(answer.status))")
        }
        return Replies.json(
            CompanionAPI.PermissionGranted(
                permissionToken: granted.permissionToken, bindingMessage: granted.bindingMessage.map(Self.displayable)),
            status: .created)
    }

    /// A provider's text for the app to show: ``Redaction/printable(_:)``, at most 256 bytes of UTF-8, cut at
    /// a character.
    static func displayable(_ text: String) -> String {
        var kept = ""
        for character in Redaction.printable(text) {
            guard kept.utf8.count + character.utf8.count <= 256 else { break }
            kept.append(character)
        }
        return kept
    }

    /// The `permissions_endpoint` the biometrics server's discovery document names; the document must name
    /// the configured issuer, and the endpoint must be https (or loopback).
    private func permissionsEndpoint(of server: String, through provider: ProviderAccess) async throws -> URL {
        let root = server.hasSuffix("/") ? String(server.dropLast()) : server
        guard let discovery = URL(string: root + "/.well-known/openid-configuration") else {
            throw SwitchbackError(.invalidConfiguration, "permission.server is not a URL")
        }
        let answer: Switchback.HTTPResponse
        do {
            answer = try await provider.send(Switchback.HTTPRequest(method: .get, url: discovery, headers: ["Accept": "application/json"]))
        } catch {
            throw SwitchbackError(.discoveryFailed, "the biometrics server's discovery document could not be fetched")
        }
        struct Document: Decodable {
            let issuer: String
            let permissions_endpoint: String
        }
        guard answer.status == 200, let document = try? JSONDecoder().decode(Document.self, from: answer.body) else {
            throw SwitchbackError(
                .discoveryFailed, "the biometrics server's discovery document answered HTTP \(answer.status) without a permissions_endpoint")
        }
        guard document.issuer == root else {
            throw SwitchbackError(.issuerMismatch, "the biometrics server's discovery document names another issuer")
        }
        // The client's access token goes only to the server configured, never to a host a document names.
        guard let endpoint = URL(string: document.permissions_endpoint), EndpointSecurity.isAcceptable(endpoint),
            endpoint.host?.lowercased() == URL(string: root)?.host?.lowercased(), endpoint.port == URL(string: root)?.port
        else {
            throw SwitchbackError(.insecureEndpoint, "the permissions_endpoint is not an https URL on the biometrics server's own host")
        }
        return endpoint
    }
}

/// A permission statement registered with the companion (Norwegian BankID): the one-time ID for the app,
/// and the `id` and `nonce` the companion put into the statement, for your backend to match the permission
/// BankID reports.
public struct RegisteredStatement: Sendable, Equatable, Decodable {
    public let statementID: String
    public let id: String
    public let nonce: String
    public let expiresIn: Int

    enum CodingKeys: String, CodingKey {
        case statementID = "statement_id"
        case id, nonce
        case expiresIn = "expires_in"
    }

    /// What a backend written in Swift sends to `POST /permission/statement`: `statement` (a JSON object, the
    /// transaction the user approves) with the companion's `permission.backendToken`. Any backend may send
    /// the same request itself (Documentation/Companion.md).
    public static func register(
        _ statement: JSONValue, at companion: URL, backendToken: String, transport: any HTTPTransport
    ) async throws -> RegisteredStatement {
        let response = try await transport.send(
            Switchback.HTTPRequest(
                method: .post, url: companion.appendingPathComponent(String(Companion.permissionStatementPath.dropFirst())),
                headers: ["Authorization": "Bearer \(backendToken)", "Content-Type": "application/json", "Accept": "application/json"],
                body: Data(JSONValue.object(["statement": statement]).description.utf8)))
        guard response.status == 201, let registered = try? JSONDecoder().decode(RegisteredStatement.self, from: response.body) else {
            throw SwitchbackError(.tokenEndpointError, "the companion did not register the statement (HTTP \(response.status))")
        }
        return registered
    }
}
