import Foundation
import Hummingbird
import Logging
import Switchback

/// Backend code exchange and the upfront permission proxy.
@available(macOS 14, iOS 17, *)
extension CompanionService {
    struct ExchangeStart: Decodable {
        let redirect_uri: String
        let acr_values: [String]?
        let login_hint: String?
    }

    /// `POST /exchange/start`: the server prepares the authorization (with PAR when the provider offers it)
    /// for the app's redirect URI, keeps the verifier, and gives the app the URL to open.
    func startExchange(_ request: Request) async throws -> Response {
        guard let exchange = configuration.exchange else { throw CompanionError(.notConfigured, "backend code exchange is off") }
        let body = try await decode(ExchangeStart.self, from: request)
        guard exchange.redirectURIs.contains(body.redirect_uri), let redirectURI = URL(string: body.redirect_uri) else {
            throw CompanionError(.notAllowed, "the redirect_uri is not one of this server's exchange redirect URIs")
        }
        let session = try await startAuthorization(
            redirectURI: redirectURI, purpose: .exchange,
            options: AuthorizationOptions(acrValues: body.acr_values ?? [], loginHint: body.login_hint)
        )
        return Replies.json(["authorization_url": session.authorizationURL.absoluteString, "state": session.state, "expires_in": Int(Self.authorizationLifetime)])
    }

    struct ExchangeCallback: Decodable {
        let callback_url: String
    }

    /// `POST /exchange`: the app hands over the callback URL it received; the server checks it against the
    /// authorization it started, redeems the code as a confidential client and validates the ID token.
    func exchange(_ request: Request) async throws -> Response {
        guard let exchange = configuration.exchange else { throw CompanionError(.notConfigured, "backend code exchange is off") }
        let body = try await decode(ExchangeCallback.self, from: request)
        guard let callback = URL(string: body.callback_url), body.callback_url.utf8.count <= 8192 else {
            throw CompanionError(.invalidRequest, "callback_url is not a URL")
        }
        let parameters = Self.parameters(of: callback)
        let pending = try await takeAuthorization(state: parameters["state"])
        guard case .exchange = pending.purpose else { throw CompanionError(.invalidState, "this state belongs to another route") }
        let outcome = try await complete(.redirect(callback), pending: pending)
        return Replies.json(try await deliver(outcome, as: exchange.returns))
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

    struct PermissionRequest: Decodable {
        let app_callback_uri: String
    }

    /// `POST /permission`: asks the provider for an upfront permission for one allow-listed
    /// `app_callback_uri`, as this server's confidential client, and hands the permission token to the app.
    func permission(_ request: Request) async throws -> Response {
        guard let permission = configuration.permission else { throw CompanionError(.notConfigured, "the permission proxy is off") }
        let body = try await decode(PermissionRequest.self, from: request)
        guard permission.appCallbackURIs.contains(body.app_callback_uri), let endpoint = URL(string: permission.endpoint) else {
            throw CompanionError(.notAllowed, "the app_callback_uri is not one of this server's allowed app callbacks")
        }
        let tokens: TokenClient
        let answer: Switchback.HTTPResponse
        do {
            tokens = try await requireProvider().anyClient().tokenClient()
            answer = try await tokens.sendAuthenticated(form: [("app_callback_uri", body.app_callback_uri)], to: endpoint)
        } catch let error as SwitchbackError {
            throw CompanionError(.providerFailed, "the permission endpoint could not be reached: \(error.message)")
        }
        struct Granted: Decodable {
            let permissionToken: String?
            let permission_token: String?
            let expires_in: Int?
        }
        guard (200...201).contains(answer.status), let granted = try? JSONDecoder().decode(Granted.self, from: answer.body),
            let token = granted.permissionToken ?? granted.permission_token
        else {
            logger.notice("permission refused by the provider", metadata: ["status": "\(answer.status)"])
            throw CompanionError(.providerFailed, "the provider refused the permission (HTTP \(answer.status))")
        }
        var reply: [String: Any] = ["permission_token": token]
        if let expiresIn = granted.expires_in { reply["expires_in"] = expiresIn }
        return Replies.json(reply, status: .created)
    }
}
