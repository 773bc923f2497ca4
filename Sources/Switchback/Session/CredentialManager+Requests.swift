public import Foundation
import Logging
#if canImport(FoundationNetworking)
    public import FoundationNetworking
#endif

/// The calls an app makes on every API request: a fresh token on the request in one call, and a token the
/// API refuses answered with one refresh and one retry.
extension CredentialManager {
    /// Sends `request` to an API with a fresh access token (``validCredential(minimumValidity:)``): Bearer,
    /// or DPoP with a proof for this method and URL that binds the token (``OIDCClient/send(_:authorizedBy:)``).
    /// When the API answers 401 with `error="invalid_token"` (RFC 6750 §3.1: revoked or expired early), the
    /// token is refreshed once and the request sent once more; any other answer is returned as it came.
    ///
    /// ```swift
    /// let response = try await manager.send(HTTPRequest(method: .get, url: ordersURL))
    /// ```
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let credential = try await validCredential()
        let response = try await client.send(request, authorizedBy: credential)
        guard Self.refusesToken(response) else { return response }
        logger.info("the API refused the access token; refreshing once and sending again", metadata: ["key": "\(key)"])
        let refreshed = try await refreshAfterRefusal(of: credential)
        return try await client.send(request, authorizedBy: refreshed)
    }

    /// Sets `request`'s `Authorization` (and, for a DPoP-bound token, `DPoP`) header for a fresh access
    /// token, with the proof's time and `jti` new and the nonce the API gave last, for apps that send with
    /// their own `URLSession`. A 401 `invalid_token` is then the app's to answer, with ``refresh()``; give
    /// the answer to ``record(_:for:)`` so that the API's next nonce is used.
    ///
    /// The token goes where the request goes: set its URL yourself, and do not let an authorized request
    /// follow a redirect to another origin (refuse it in `urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`).
    /// ``send(_:)`` follows no redirect.
    ///
    /// ```swift
    /// var request = URLRequest(url: ordersURL)
    /// try await manager.authorize(&request)
    /// let (data, _) = try await URLSession.shared.data(for: request)
    /// ```
    public nonisolated func authorize(_ request: inout URLRequest, minimumValidity: TimeInterval = 60) async throws {
        guard let url = request.url else { throw SwitchbackError(.invalidURL, "the request has no URL") }
        let credential = try await validCredential(minimumValidity: minimumValidity)
        let headers = try await client.authorizationHeaders(method: request.httpMethod ?? "GET", url: url, credential: credential)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    }

    /// Records what the answer to a request authorized by ``authorize(_:minimumValidity:)`` tells the
    /// client: the DPoP nonce its server gave (RFC 9449 §8.2), used in the next proof to that origin.
    public nonisolated func record(_ response: HTTPURLResponse, for url: URL) {
        guard let nonce = response.value(forHTTPHeaderField: "DPoP-Nonce") else { return }
        client.dpopNonces.remember(HTTPResponse(status: response.statusCode, headers: ["DPoP-Nonce": nonce]), from: url)
    }

    /// Whether `response` says the access token itself was refused (RFC 6750 §3.1; RFC 9449 §7.1 for DPoP).
    static func refusesToken(_ response: HTTPResponse) -> Bool {
        guard response.status == 401, let challenge = response.headers["www-authenticate"] else { return false }
        return challenge.range(of: #"error\s*=\s*"?invalid_token"#, options: [.regularExpression, .caseInsensitive]) != nil
    }

    /// One refresh after the API refused `credential`'s access token: a credential another caller's refresh
    /// already stored in its place is taken instead of a second refresh, and a refresh under way that
    /// kept the refused token (it was still valid by its expiry) is followed by one that replaces it.
    private func refreshAfterRefusal(of credential: Credential) async throws -> Credential {
        let refreshed = try await refresh(unlessValidFor: nil, refused: credential.accessToken)
        guard refreshed.accessToken == credential.accessToken else { return refreshed }
        return try await refresh(unlessValidFor: nil, refused: credential.accessToken)
    }
}
