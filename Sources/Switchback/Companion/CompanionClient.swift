public import Foundation
public import Logging

/// The app's side of the backend companion's routes:
/// - for providers whose client is confidential (Norwegian BankID): the upfront permission
///   (`POST /permission`) and the code exchange (`POST /exchange`), where the backend redeems the app's
///   code with the client secret and hands the tokens back. Give it to ``SignInCoordinator`` as
///   ``CodeExchange/companion(_:)``; the companion's exchange must then return tokens.
/// - for sign-ins the companion runs itself (``CompanionRoute``): `POST /exchange/start` with
///   `POST /exchange`, and `POST /completion/start` with `POST /completion/status`.
public struct CompanionClient: Sendable {
    /// The companion's base URL: https, or http on a loopback host.
    public let baseURL: URL
    private let transport: any HTTPTransport
    private let logger: Logger

    public init(_ baseURL: URL, transport: any HTTPTransport = URLSessionTransport(), logger: Logger = Logger(label: "switchback.companion")) {
        self.baseURL = baseURL
        self.transport = transport
        self.logger = logger
    }

    /// Asks for a permission to return to `appCallbackURI` and returns the authorization parameters that
    /// carry it (`permission_token`), for ``ProviderPreset/bankIDNorway(permission:)``.
    public func permissionParameters(for appCallbackURI: URL) async throws -> [(String, String)] {
        struct Granted: Decodable { let permission_token: String }
        let granted = try await post("permission", ["app_callback_uri": appCallbackURI.absoluteString], expecting: [201], as: Granted.self).value
        return [("permission_token", granted.permission_token)]
    }

    /// Has the companion redeem `code` with the session's PKCE verifier, for the session's redirect URI
    /// and nonce. Throws ``SwitchbackError/Code/tokenEndpointError`` when it refuses, and
    /// ``SwitchbackError/Code/invalidTokenResponse`` when it answers with a session rather than tokens.
    public func exchange(code: String, session: AuthorizationSession) async throws -> TokenResponse {
        let body = ["code": code, "code_verifier": session.pkce.verifier, "redirect_uri": session.redirectURI.absoluteString, "nonce": session.nonce]
        do {
            return try await post("exchange", body, expecting: [200], as: TokenResponse.self).value
        } catch let error as SwitchbackError where error.code == .malformedResponse {
            // A session answer (no access_token) is the companion's configuration, not a broken response.
            throw SwitchbackError(.invalidTokenResponse, "the companion answered without tokens; configure its exchange with \"returns\": \"tokens\"")
        }
    }

    // MARK: Sign-ins the companion runs

    /// `POST /exchange/start`: the companion prepares an authorization (with PAR, its client authentication
    /// and DPoP where the provider asks for them) whose response comes back to the app's `redirectURI`.
    /// `binding` is a random secret of the app's (at least 128 bits) that never travels in a URL: the
    /// companion redeems the response only with it, so an app that intercepts the redirect (the same custom
    /// scheme) gets nothing from the code.
    public func startExchange(redirectURI: URL, binding: String, options: AuthorizationOptions, now: Date) async throws -> CompanionAuthorization {
        struct Started: Decodable {
            let authorization_url: String
            let state: String
        }
        var body: [String: Any] = ["redirect_uri": redirectURI.absoluteString, "binding": binding]
        body.merge(Self.requestFields(options)) { $1 }
        let started = try await post("exchange/start", body, expecting: [200], as: Started.self).value
        return CompanionAuthorization(
            route: .exchange, authorizationURL: try Self.acceptableURL(started.authorization_url, "authorization_url"), returnURL: redirectURI,
            state: started.state, flowSecret: binding, createdAt: now
        )
    }

    /// `POST /exchange` with the authorization response the app received for an authorization the
    /// companion started, and the binding it was started with. The companion checks both against that
    /// authorization (binding, state, issuer), redeems the code and validates the ID token.
    public func exchange(callback: URL, binding: String) async throws -> CompanionSignIn {
        try await post("exchange", ["callback_url": callback.absoluteString, "binding": binding], expecting: [200], as: Delivered.self).value.signIn(
            now: Date())
    }

    /// `POST /completion/start`: registers `flowSecret` (random, at least 128 bits, known only to the app)
    /// and has the companion prepare an authorization whose response comes back to the companion itself.
    public func startCompletion(flowSecret: String, options: AuthorizationOptions, now: Date) async throws -> CompanionAuthorization {
        struct Started: Decodable {
            let authorization_url: String
            let return_url: String
        }
        var body: [String: Any] = ["flow_id": flowSecret]
        body.merge(Self.requestFields(options)) { $1 }
        if let mode = options.responseMode { body["response_mode"] = mode.rawValue }
        let started = try await post("completion/start", body, expecting: [200], as: Started.self).value
        guard let returnURL = URL(string: started.return_url), returnURL.scheme != nil else {
            throw SwitchbackError(.malformedResponse, "the companion's return_url is not a URL")
        }
        return CompanionAuthorization(
            route: .completion, authorizationURL: try Self.acceptableURL(started.authorization_url, "authorization_url"), returnURL: returnURL,
            state: nil, flowSecret: flowSecret, createdAt: now
        )
    }

    /// `POST /completion/status`: waits up to `wait` seconds for the result of the sign-in registered under
    /// `flowSecret`. A completed sign-in is handed over only with `result`, the one-time value the
    /// companion's final page put in the app link (``CompanionAuthorization/returnValue(in:)``), so a flow
    /// someone else started and sent to this user's browser yields nothing to its starter. Nil while the
    /// sign-in runs or waits for the app link. The companion answers a result once: a provider's refusal
    /// throws ``SwitchbackError/Code/authorizationError``, any other failure ``SwitchbackError/Code/tokenEndpointError``.
    public func completionStatus(flowSecret: String, result: String? = nil, wait: TimeInterval) async throws -> CompanionSignIn? {
        if case .finished(let signIn) = try await completionProgress(flowSecret: flowSecret, result: result, wait: wait) { return signIn }
        return nil
    }

    /// Where a backend completion stands.
    @_spi(SwitchbackInternals) public enum CompletionProgress: Sendable {
        /// The provider has not answered the companion yet.
        case running
        /// The provider answered; the result waits for the app link's one-time value.
        case awaitingReturn
        case finished(CompanionSignIn)
    }

    /// ``completionStatus(flowSecret:result:wait:)`` with the companion's progress kept apart.
    @_spi(SwitchbackInternals) public func completionProgress(flowSecret: String, result: String?, wait: TimeInterval) async throws
        -> CompletionProgress
    {
        var body: [String: Any] = ["flow_id": flowSecret, "wait": wait]
        if let result { body["result"] = result }
        let (status, delivered) = try await post("completion/status", body, expecting: [200, 202], as: Delivered.self)
        switch (status, delivered.status) {
        case (_, "awaiting_return"?):
            return .awaitingReturn
        case (202, _), (_, "pending"?):
            return .running
        case (_, "failed"?):
            let error = delivered.error ?? "server_error"
            guard error == "access_denied" else {
                throw SwitchbackError(.tokenEndpointError, "the companion could not complete the sign-in (\(error.prefix(40)))")
            }
            throw SwitchbackError(.authorizationError, "the provider ended the sign-in (access_denied)", oauthError: OAuthErrorResponse(error: error))
        default:
            return .finished(try delivered.signIn(now: Date()))
        }
    }

    /// What the companion's exchange and completion routes deliver.
    private struct Delivered: Decodable {
        let status: String?
        let error: String?
        let sub: String?
        let acr: String?
        let session: String?
        let expires_in: Int?
        let tokens: TokenResponse?

        enum CodingKeys: String, CodingKey {
            case status, error, sub, acr, session, expires_in, access_token
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try container.decodeIfPresent(String.self, forKey: .status)
            error = try container.decodeIfPresent(String.self, forKey: .error)
            sub = try container.decodeIfPresent(String.self, forKey: .sub)
            acr = try container.decodeIfPresent(String.self, forKey: .acr)
            session = try container.decodeIfPresent(String.self, forKey: .session)
            expires_in = try container.decodeIfPresent(Int.self, forKey: .expires_in)
            tokens = container.contains(.access_token) ? try TokenResponse(from: decoder) : nil
        }

        func signIn(now: Date) throws -> CompanionSignIn {
            guard let sub, !sub.isEmpty, session != nil || tokens != nil else {
                throw SwitchbackError(.malformedResponse, "the companion's answer names no subject, or has neither a session nor tokens")
            }
            return CompanionSignIn(
                subject: sub, acr: acr, session: session, tokens: tokens, expiresAt: expires_in.map { now.addingTimeInterval(TimeInterval($0)) })
        }
    }

    /// The authorization options a companion route forwards: the rest is the companion's configuration,
    /// which also says which extra parameters it passes on (`provider.forwardedParameters`).
    private static func requestFields(_ options: AuthorizationOptions) -> [String: Any] {
        var fields: [String: Any] = [:]
        if !options.acrValues.isEmpty { fields["acr_values"] = options.acrValues }
        if let loginHint = options.loginHint { fields["login_hint"] = loginHint }
        if !options.uiLocales.isEmpty { fields["ui_locales"] = options.uiLocales }
        if !options.extraParameters.isEmpty {
            fields["parameters"] = Dictionary(options.extraParameters, uniquingKeysWith: { _, last in last })
        }
        return fields
    }

    /// An authorization URL from the companion: https (or loopback http), never a script or a file.
    private static func acceptableURL(_ string: String, _ name: String) throws -> URL {
        guard let url = URL(string: string), EndpointSecurity.isAcceptable(url) else {
            throw SwitchbackError(.malformedResponse, "the companion's \(name) is not an https URL")
        }
        return url
    }

    // MARK: Transport

    private func post<T: Decodable>(_ path: String, _ body: [String: Any], expecting statuses: Set<Int>, as type: T.Type) async throws -> (
        status: Int, value: T
    ) {
        guard EndpointSecurity.isAcceptable(baseURL) else {
            throw SwitchbackError(.insecureEndpoint, "the companion \(Redaction.describe(baseURL)) is not HTTPS")
        }
        let request = HTTPRequest(
            method: .post, url: baseURL.appendingPathComponent(path), headers: ["Content-Type": "application/json", "Accept": "application/json"],
            body: try JSONSerialization.data(withJSONObject: body)
        )
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as SwitchbackError {
            throw error
        } catch {
            throw SwitchbackError(.transportFailed, "the companion could not be reached", underlying: error)
        }
        guard statuses.contains(response.status) else {
            let refusal = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body)
            logger.notice(
                "the companion refused", metadata: ["route": "\(path)", "status": "\(response.status)", "error": "\(refusal?.error ?? "-")"])
            throw SwitchbackError(
                .tokenEndpointError, "the companion refused /\(path) (HTTP \(response.status)\(refusal.map { ", \($0.error.prefix(40))" } ?? ""))",
                oauthError: refusal, httpStatus: response.status
            )
        }
        do {
            return (response.status, try JSONDecoder().decode(T.self, from: response.body))
        } catch {
            throw SwitchbackError(.malformedResponse, "the companion's answer to /\(path) could not be read", underlying: error)
        }
    }
}

/// Who redeems the authorization code of a ``SignInCoordinator``'s sign-ins.
public enum CodeExchange: Sendable {
    /// The app itself, as a public client with PKCE.
    case client
    /// The app's backend companion, as the confidential client; the app still checks the callback and
    /// validates the ID token it gets back.
    case companion(CompanionClient)
}
