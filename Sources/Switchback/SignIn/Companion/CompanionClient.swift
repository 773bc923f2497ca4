public import Foundation
public import Logging

/// The app's side of the backend companion's routes:
/// - for providers whose client is confidential (Norwegian BankID): the upfront permission
///   (`POST /permission`) and the code exchange (`POST /exchange`), where the backend redeems the app's
///   code with the client secret and hands the tokens back. Give it to ``SignInCoordinator`` as
///   ``Authorizer/app(_:redeemingCodesAt:)``; the companion's exchange must then return tokens.
/// - for sign-ins the companion runs itself (``Authorizer/companion(_:route:)``): `POST /exchange/start`
///   with `POST /exchange`, and `POST /completion/start` with `POST /completion/status`.
/// - for ``HybridBridge`` (`POST /bridge/start`) and ``SessionHandOff`` (`POST /handoff`).
public struct CompanionClient: Sendable {
    /// The companion's base URL: https, or http on a loopback host.
    public let baseURL: URL
    private let transport: any HTTPTransport
    private let logger: Logger
    /// Signs the start routes and the result requests with an App Attest key, for a companion with `appAttest`.
    private let attestation: AppAttestation?

    public init(
        _ baseURL: URL, transport: any HTTPTransport = URLSessionTransport(), attestation: AppAttestation? = nil,
        logger: Logger = Logger(label: "switchback.companion")
    ) {
        self.baseURL = baseURL
        self.transport = transport
        self.attestation = attestation
        self.logger = logger
    }

    /// The start routes an App Attest assertion signs, each over a fresh challenge.
    static let startPaths: Set<String> = [
        CompanionAPI.Path.exchangeStart, CompanionAPI.Path.bridgeStart, CompanionAPI.Path.completionStart, CompanionAPI.Path.permission,
        CompanionAPI.Path.walletStart, CompanionAPI.Path.appleIdentityStart,
    ]
    /// The requests for a started sign-in's result, which the companion hands only to the key that started
    /// it: signed without a challenge (``CompanionAPI/unchallenged``), so that a long poll costs no extra
    /// round trip and nothing of the challenge route's rate limit.
    static let resultPaths: Set<String> = [
        CompanionAPI.Path.exchange, CompanionAPI.Path.completionStatus, CompanionAPI.Path.walletRedeem, CompanionAPI.Path.appleIdentityVerify,
    ]

    /// `POST /attest/challenge`: a one-time challenge.
    func attestationChallenge() async throws -> String {
        try await post(
            CompanionAPI.Path.attestChallenge, [String: String](), expecting: [200], as: CompanionAPI.AttestationChallenge.self
        ).value.challenge
    }

    /// `POST /attest/register`: a new key's attestation.
    func registerAttestation(_ registration: CompanionAPI.AttestationRegistration) async throws {
        _ = try await send(
            CompanionAPI.Path.attestRegister, body: try Self.encoder.encode(registration), headers: [:], expecting: [201],
            refusal: .tokenEndpointError)
    }

    /// Asks for a permission to return to `appCallbackURI` for the transaction your backend registered as
    /// `statement` (the one-time `statement_id` it got from the companion's `POST /permission/statement`),
    /// and returns the authorization parameters that carry it (`permission_token`), for
    /// ``ProviderPreset/bankIDNorway(permission:)``.
    public func permissionParameters(for appCallbackURI: URL, statement: String) async throws -> [(String, String)] {
        let granted = try await post(
            CompanionAPI.Path.permission, CompanionAPI.PermissionRequest(appCallbackURI: appCallbackURI.absoluteString, statementID: statement),
            expecting: [201], as: CompanionAPI.PermissionGranted.self
        ).value
        return [("permission_token", granted.permissionToken)]
    }

    /// Has the companion revoke `token` (RFC 7009) with the client authentication it holds: the sign-out of
    /// an app whose codes the companion redeems, which cannot authenticate to the provider itself.
    /// `typeHint` is `refresh_token` or `access_token`. Throws ``SwitchbackError/Code/tokenEndpointError``
    /// with the companion's error when it or the provider refuses.
    public func revoke(_ token: String, typeHint: String) async throws {
        _ = try await send(
            CompanionAPI.Path.revoke, body: try Self.encoder.encode(CompanionAPI.Revocation(token: token, tokenTypeHint: typeHint)), headers: [:],
            expecting: [200], refusal: .tokenEndpointError)
    }

    /// Has the companion redeem `code` with the session's PKCE verifier, for the session's redirect URI
    /// and nonce. Throws ``SwitchbackError/Code/tokenEndpointError`` when it refuses, and
    /// ``SwitchbackError/Code/invalidTokenResponse`` when it answers with a session rather than tokens.
    @_spi(SwitchbackInternals) public func exchange(code: String, session: AuthorizationSession) async throws -> TokenResponse {
        let body = CompanionAPI.Exchange(
            code: code, codeVerifier: session.pkce.verifier, redirectURI: session.redirectURI.absoluteString, nonce: session.nonce)
        // An app-started exchange begins the sign-in at the companion: asserted over a fresh challenge, as a start is.
        let answer = try await post(CompanionAPI.Path.exchange, body, challenged: true, expecting: [200], as: CompanionAPI.SignInAnswer.self)
            .value
        guard let tokens = try Self.tokens(in: answer) else {
            // A session answer is the companion's configuration, not a broken response.
            throw SwitchbackError(.invalidTokenResponse, "the companion answered without tokens; configure its exchange with \"returns\": \"tokens\"")
        }
        return tokens
    }

    // MARK: Sign-ins the companion runs

    /// `POST /exchange/start`: the companion prepares an authorization (with PAR, its client authentication
    /// and DPoP where the provider asks for them) whose response comes back to the app's `redirectURI`.
    /// `binding` is a random secret of the app's (at least 128 bits) that never travels in a URL: the
    /// companion redeems the response only with it, so an app that intercepts the redirect (the same custom
    /// scheme) gets nothing from the code.
    @_spi(SwitchbackInternals) public func startExchange(redirectURI: URL, binding: String, options: AuthorizationOptions, now: Date) async throws
        -> CompanionAuthorization
    {
        let fields = Self.requestFields(options)
        let body = CompanionAPI.ExchangeStart(
            redirectURI: redirectURI.absoluteString, binding: binding, acrValues: fields.acrValues, loginHint: fields.loginHint,
            uiLocales: fields.uiLocales, parameters: fields.parameters)
        let started = try await post(CompanionAPI.Path.exchangeStart, body, expecting: [200], as: CompanionAPI.AuthorizationStarted.self).value
        guard let state = started.state else { throw SwitchbackError(.malformedResponse, "the companion's exchange names no state") }
        return CompanionAuthorization(
            route: .exchange, authorizationURL: try Self.acceptableURL(started.authorizationURL, "authorization_url"), returnURL: redirectURI,
            state: state, flowSecret: binding, createdAt: now, companion: baseURL
        )
    }

    /// `POST /exchange` with the authorization response the app received for an authorization the
    /// companion started, and the binding it was started with. The companion checks both against that
    /// authorization (binding, state, issuer), redeems the code and validates the ID token.
    @_spi(SwitchbackInternals) public func exchange(callback: URL, binding: String) async throws -> CompanionSignIn {
        let answer = try await post(
            CompanionAPI.Path.exchange, CompanionAPI.Exchange(callbackURL: callback.absoluteString, binding: binding), expecting: [200],
            as: CompanionAPI.SignInAnswer.self
        ).value
        return try Self.signIn(from: answer, now: Date())
    }

    /// `POST /completion/start`: registers `flowSecret` (random, at least 128 bits, known only to the app)
    /// and has the companion prepare an authorization whose response comes back to the companion itself.
    @_spi(SwitchbackInternals) public func startCompletion(flowSecret: String, options: AuthorizationOptions, now: Date) async throws
        -> CompanionAuthorization
    {
        let fields = Self.requestFields(options)
        let body = CompanionAPI.CompletionStart(
            flowID: flowSecret, responseMode: options.responseMode, acrValues: fields.acrValues, loginHint: fields.loginHint,
            uiLocales: fields.uiLocales, parameters: fields.parameters)
        let started = try await post(CompanionAPI.Path.completionStart, body, expecting: [200], as: CompanionAPI.AuthorizationStarted.self).value
        guard let returnURL = started.returnURL.flatMap(URL.init(string:)), returnURL.scheme != nil else {
            throw SwitchbackError(.malformedResponse, "the companion's return_url is not a URL")
        }
        return CompanionAuthorization(
            route: .completion, authorizationURL: try Self.acceptableURL(started.authorizationURL, "authorization_url"), returnURL: returnURL,
            state: nil, flowSecret: flowSecret, createdAt: now, companion: baseURL
        )
    }

    /// `POST /completion/status`: waits up to `wait` seconds for the result of the sign-in registered under
    /// `flowSecret`. A completed sign-in is handed over only with `result`, the one-time value the
    /// companion's final page put in the app link (`CompanionAuthorization.returnValue(in:)`), so a flow
    /// someone else started and sent to this user's browser yields nothing to its starter. Nil while the
    /// sign-in runs or waits for the app link. The companion answers a result once: a provider's refusal
    /// throws ``SwitchbackError/Code/authorizationError``, any other failure ``SwitchbackError/Code/tokenEndpointError``.
    @_spi(SwitchbackInternals) public func completionStatus(flowSecret: String, result: String? = nil, wait: TimeInterval) async throws
        -> CompanionSignIn?
    {
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
        let body = CompanionAPI.CompletionStatus(flowID: flowSecret, result: result, wait: wait)
        let (status, answer) = try await post(CompanionAPI.Path.completionStatus, body, expecting: [200, 202], as: CompanionAPI.SignInAnswer.self)
        switch (status, answer.status) {
        case (_, .awaitingReturn?):
            return .awaitingReturn
        case (202, _), (_, .pending?):
            return .running
        case (_, .failed?):
            let error = answer.error ?? "server_error"
            guard error == "access_denied" else {
                throw SwitchbackError(
                    .tokenEndpointError, "the companion could not complete the sign-in (\(OAuthErrorResponse.plainCode(error) ?? "‹not a code›"))")
            }
            throw SwitchbackError(.authorizationError, "the provider ended the sign-in (access_denied)", oauthError: OAuthErrorResponse(error: error))
        default:
            return .finished(try Self.signIn(from: answer, now: Date()))
        }
    }

    // MARK: Wallets

    /// `POST /wallet/start`: a presentation request bound to `binding` (random, at least 128 bits, sent only
    /// in request bodies). The wallet link the companion answers is put in `wallet`'s scheme; the wallet
    /// returns to the companion's app link with the one-time `response_code`.
    @_spi(SwitchbackInternals) public func startPresentation(binding: String, wallet: WalletPreset, now: Date) async throws
        -> CompanionAuthorization
    {
        let started = try await post(
            CompanionAPI.Path.walletStart, CompanionAPI.WalletStart(binding: binding), expecting: [200], as: CompanionAPI.WalletStarted.self
        ).value
        guard let link = URL(string: started.walletURL).flatMap({ wallet.invocation(of: $0, companion: baseURL) }) else {
            throw SwitchbackError(
                .malformedResponse, "the companion's wallet_url is not a client_id and a request_uri on the companion, and nothing else")
        }
        // The app's own universal link (or custom scheme): never plain http, where anyone on the path reads the code.
        guard let returnURL = started.returnURL.flatMap(URL.init(string:)), let scheme = returnURL.scheme?.lowercased(), scheme != "http",
            scheme != "https" || returnURL.host?.isEmpty == false
        else {
            throw SwitchbackError(.malformedResponse, "the companion's return_url is not an https link or an app scheme")
        }
        return CompanionAuthorization(
            route: .wallet, authorizationURL: link, returnURL: returnURL, state: nil, flowSecret: binding, createdAt: now, companion: baseURL)
    }

    /// `POST /wallet/redeem`: the claims the companion verified for `responseCode`, with the binding the
    /// request started with. The user's refusal in the wallet throws ``SwitchbackError/Code/authorizationError``,
    /// a presentation the companion refused ``SwitchbackError/Code/presentationInvalid`` (its reason is in the
    /// companion's log only), a used or unknown code ``SwitchbackError/Code/tokenEndpointError``.
    @_spi(SwitchbackInternals) public func redeemPresentation(responseCode: String, binding: String) async throws -> WalletPresentation {
        do {
            let presented = try await post(
                CompanionAPI.Path.walletRedeem, CompanionAPI.WalletRedeem(responseCode: responseCode, binding: binding), expecting: [200],
                as: CompanionAPI.WalletPresented.self
            ).value
            return WalletPresentation(credentials: presented.credentials)
        } catch let error as SwitchbackError where error.httpStatus == 400 {
            switch error.oauthError?.error {
            case "access_denied":
                throw SwitchbackError(.authorizationError, "the user declined in the wallet (access_denied)", oauthError: error.oauthError)
            case "invalid_presentation":
                throw SwitchbackError(.presentationInvalid, "the companion refused the wallet's presentation", oauthError: error.oauthError)
            default:
                throw error
            }
        }
    }

    /// `POST /wallet/apple/start`: a Verify with Wallet request bound to `binding`; its ID, the nonce for
    /// `PKIdentityRequest` (32 bytes) and the merchant identifier.
    @_spi(SwitchbackInternals) public func startAppleIdentity(binding: String) async throws -> (
        requestID: String, nonce: Data, merchantIdentifier: String
    ) {
        let started = try await post(
            CompanionAPI.Path.appleIdentityStart, CompanionAPI.WalletStart(binding: binding), expecting: [200],
            as: CompanionAPI.AppleIdentityStarted.self
        ).value
        guard let nonce = Base64URL.decode(started.nonce), (16...64).contains(nonce.count), !started.merchantIdentifier.isEmpty,
            !started.requestID.isEmpty, started.requestID.utf8.count <= 256
        else {
            throw SwitchbackError(
                .malformedResponse, "the companion's Verify with Wallet start lacks a request_id, a nonce of 16 to 64 bytes or a merchant")
        }
        return (started.requestID, nonce, started.merchantIdentifier)
    }

    /// `POST /wallet/apple/verify`: Wallet's `encryptedData` for a started request; the verified claims, once.
    @_spi(SwitchbackInternals) public func verifyAppleIdentity(requestID: String, binding: String, encryptedData: Data) async throws
        -> WalletPresentation
    {
        do {
            let presented = try await post(
                CompanionAPI.Path.appleIdentityVerify,
                CompanionAPI.AppleIdentityVerify(requestID: requestID, binding: binding, encryptedData: Base64URL.encode(encryptedData)),
                expecting: [200], as: CompanionAPI.WalletPresented.self
            ).value
            return WalletPresentation(credentials: presented.credentials)
        } catch let error as SwitchbackError where error.httpStatus == 400 && error.oauthError?.error == "invalid_presentation" {
            throw SwitchbackError(.presentationInvalid, "the companion refused Wallet's answer", oauthError: error.oauthError)
        }
    }

    // MARK: The hybrid bridge and session hand-off

    /// `POST /bridge/start`: the authorization URL for a hybrid app's sign-in (``HybridBridge``). The
    /// companion refuses a scheme off its allow-list (``SwitchbackError/oauthError`` is `not_allowed`).
    func startBridge(_ request: CompanionAPI.BridgeStart) async throws -> URL {
        let started = try await post(CompanionAPI.Path.bridgeStart, request, expecting: [200], as: CompanionAPI.AuthorizationStarted.self).value
        return try Self.acceptableURL(started.authorizationURL, "authorization_url")
    }

    /// `POST /handoff` with the app's access token (``SessionHandOff``): a one-time code for `destination`,
    /// and the companion's redeem URL that carries it. `authorization` is the `Authorization` header and
    /// `proof` the `DPoP` header of a sender-constrained token. Refusals throw
    /// ``SwitchbackError/Code/handOffRefused``.
    func issueHandOff(for destination: URL, authorization: String, proof: String?) async throws -> CompanionAPI.HandOffIssued {
        var headers = ["Authorization": authorization]
        if let proof { headers["DPoP"] = proof }
        do {
            return try await post(
                CompanionAPI.Path.handOff, CompanionAPI.HandOffRequest(goto: destination.absoluteString), headers: headers, expecting: [201],
                refusal: .handOffRefused, as: CompanionAPI.HandOffIssued.self
            ).value
        } catch let error as SwitchbackError where error.code == .malformedResponse {
            throw SwitchbackError(.handOffRefused, "the companion's answer holds no hand-off code", underlying: error)
        }
    }

    /// `POST /session/logout` with `Authorization: Session …`: ends the companion's first-party session
    /// (``CompanionSignIn/session``) at sign-out. The companion answers the same whether or not the session
    /// still existed, so ending one twice is not an error.
    public func endSession(_ session: String) async throws {
        _ = try await send(
            CompanionAPI.Path.sessionLogout, body: Data("{}".utf8), headers: ["Authorization": "Session " + session], expecting: [204],
            refusal: .tokenEndpointError)
    }

    /// The URL of the companion's route `path`.
    func url(_ path: String) -> URL {
        CompanionAPI.url(path, below: baseURL)
    }

    // MARK: Answers

    private static func tokens(in answer: CompanionAPI.SignInAnswer) throws -> TokenResponse? {
        guard answer.accessToken != nil else { return nil }
        guard answer.tokenType?.isEmpty == false else {
            throw SwitchbackError(.malformedResponse, "the companion's tokens name no token_type")
        }
        return answer.tokens
    }

    private static func signIn(from answer: CompanionAPI.SignInAnswer, now: Date) throws -> CompanionSignIn {
        let tokens = try tokens(in: answer)
        guard let subject = answer.subject, !subject.isEmpty, answer.session != nil || tokens != nil else {
            throw SwitchbackError(.malformedResponse, "the companion's answer names no subject, or has neither a session nor tokens")
        }
        return CompanionSignIn(
            subject: subject, acr: answer.acr, session: answer.session, tokens: tokens,
            expiresAt: answer.expiresIn.map { now.addingTimeInterval(TimeInterval($0)) })
    }

    /// The authorization options a companion route forwards: the rest is the companion's configuration,
    /// which also says which extra parameters it passes on (`provider.forwardedParameters`).
    private static func requestFields(_ options: AuthorizationOptions) -> (
        acrValues: [String]?, loginHint: String?, uiLocales: [String]?, parameters: [String: String]?
    ) {
        (
            options.acrValues.isEmpty ? nil : options.acrValues, options.loginHint, options.uiLocales.isEmpty ? nil : options.uiLocales,
            options.extraParameters.isEmpty ? nil : Dictionary(options.extraParameters, uniquingKeysWith: { _, last in last })
        )
    }

    /// An authorization URL from the companion: https (or loopback http), never a script or a file.
    private static func acceptableURL(_ string: String, _ name: String) throws -> URL {
        guard let url = URL(string: string), EndpointSecurity.isAcceptable(url) else {
            throw SwitchbackError(.malformedResponse, "the companion's \(name) is not an https URL")
        }
        return url
    }

    // MARK: Transport

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Posts `body` as JSON to the route `path` and decodes an answer with one of `statuses`; any other
    /// status throws `refusal` with the companion's OAuth-style error.
    private func post<Body: Encodable, Answer: Decodable>(
        _ path: String, _ body: Body, headers extra: [String: String] = [:], challenged: Bool? = nil, expecting statuses: Set<Int>,
        refusal: SwitchbackError.Code = .tokenEndpointError, as type: Answer.Type
    ) async throws -> (status: Int, value: Answer) {
        let response = try await send(
            path, body: try Self.encoder.encode(body), headers: extra, challenged: challenged, expecting: statuses, refusal: refusal)
        do {
            return (response.status, try JSONDecoder().decode(Answer.self, from: response.body))
        } catch {
            throw SwitchbackError(.malformedResponse, "the companion's answer to \(path) could not be read", underlying: error)
        }
    }

    /// Posts `body` to the route `path` and returns an answer with one of `statuses`; any other status
    /// throws `refusal` with the companion's OAuth-style error. An attested request is asserted over a fresh
    /// challenge on a start path, or when `challenged` says so (a route that starts sign-ins in one use
    /// and collects results in another).
    private func send(
        _ path: String, body: Data, headers extra: [String: String], challenged: Bool? = nil, expecting statuses: Set<Int>,
        refusal: SwitchbackError.Code
    ) async throws -> HTTPResponse {
        guard EndpointSecurity.isAcceptable(baseURL) else {
            throw SwitchbackError(.insecureEndpoint, "the companion \(Redaction.describe(baseURL)) is not HTTPS")
        }
        var headers = ["Content-Type": "application/json", "Accept": "application/json"]
        headers.merge(extra) { $1 }
        let challenged = challenged ?? Self.startPaths.contains(path)
        if let attestation, challenged || Self.resultPaths.contains(path),
            let assertion = try await attestation.header(method: "POST", path: path, body: body, challenged: challenged, companion: self)
        {
            headers[CompanionAPI.attestationHeader] = assertion
        }
        let request = HTTPRequest(method: .post, url: url(path), headers: headers, body: body)
        var response: HTTPResponse
        do {
            response = try await transport.send(request)
            // The companion no longer knows the attested key (expired, or its store was reset): attest a new
            // one and ask once more.
            if let attestation, headers[CompanionAPI.attestationHeader] != nil, response.status == 401,
                (try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body))?.error == "attestation_key_unknown"
            {
                await attestation.forgetKey()
                var retried = request
                retried.headers[CompanionAPI.attestationHeader] = try await attestation.header(
                    method: "POST", path: path, body: body, challenged: challenged, companion: self)
                response = try await transport.send(retried)
            }
        } catch let error as SwitchbackError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw SwitchbackError(.transportFailed, "the companion could not be reached", underlying: error)
        }
        guard statuses.contains(response.status) else {
            let refused = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body)
            // Only a plain code goes into the log and the message; the body itself stays in `oauthError`.
            let code = refused.map { OAuthErrorResponse.plainCode($0.error) ?? "‹not a code›" }
            logger.notice("the companion refused", metadata: ["route": "\(path)", "status": "\(response.status)", "error": "\(code ?? "-")"])
            throw SwitchbackError(
                refusal, "the companion refused \(path) (HTTP \(response.status)\(code.map { ", \($0)" } ?? ""))", oauthError: refused,
                httpStatus: response.status)
        }
        return response
    }
}
