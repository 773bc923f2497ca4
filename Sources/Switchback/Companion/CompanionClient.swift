public import Foundation
public import Logging

/// The app's side of the backend companion's routes for providers whose client is confidential (Norwegian
/// BankID): the upfront permission (`POST /permission`) and the code exchange (`POST /exchange`), where the
/// backend redeems the app's code with the client secret and hands the tokens back. Give it to
/// ``SignInCoordinator`` as ``CodeExchange/companion(_:)``; the companion's exchange must return tokens.
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
        let granted = try await post("permission", ["app_callback_uri": appCallbackURI.absoluteString], expecting: 201, as: Granted.self)
        return [("permission_token", granted.permission_token)]
    }

    /// Has the companion redeem `code` with the session's PKCE verifier, for the session's redirect URI
    /// and nonce. Throws ``SwitchbackError/Code/tokenEndpointError`` when it refuses, and
    /// ``SwitchbackError/Code/invalidTokenResponse`` when it answers with a session rather than tokens.
    public func exchange(code: String, session: AuthorizationSession) async throws -> TokenResponse {
        let body = ["code": code, "code_verifier": session.pkce.verifier, "redirect_uri": session.redirectURI.absoluteString, "nonce": session.nonce]
        do {
            return try await post("exchange", body, expecting: 200, as: TokenResponse.self)
        } catch let error as SwitchbackError where error.code == .malformedResponse {
            // A session answer (no access_token) is the companion's configuration, not a broken response.
            throw SwitchbackError(.invalidTokenResponse, "the companion answered without tokens; configure its exchange with \"returns\": \"tokens\"")
        }
    }

    private func post<T: Decodable>(_ path: String, _ body: [String: String], expecting status: Int, as type: T.Type) async throws -> T {
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
        guard response.status == status else {
            let refusal = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body)
            logger.notice("the companion refused", metadata: ["route": "\(path)", "status": "\(response.status)", "error": "\(refusal?.error ?? "-")"])
            throw SwitchbackError(
                .tokenEndpointError, "the companion refused /\(path) (HTTP \(response.status)\(refusal.map { ", \($0.error.prefix(40))" } ?? ""))",
                oauthError: refusal, httpStatus: response.status
            )
        }
        do {
            return try JSONDecoder().decode(T.self, from: response.body)
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
