import Foundation

extension OIDCClient {
    /// Sends `request` to a resource server (an API, userinfo) with `credential`'s access token: the
    /// `Bearer` scheme, or for a DPoP-bound token the `DPoP` scheme with a fresh proof for this method and
    /// URL that binds the token (`ath`, RFC 9449 §7), carrying the nonce that server gave last. When the
    /// server asks for a nonce (401 with `use_dpop_nonce` and `DPoP-Nonce`, §9), the request is sent once
    /// more with a proof carrying it.
    ///
    /// ```swift
    /// let credential = try await manager.validCredential()
    /// let response = try await client.send(HTTPRequest(method: .get, url: ordersURL), authorizedBy: credential)
    /// ```
    ///
    /// Throws `transportFailed` when the server cannot be reached; any HTTP status is returned as it came.
    /// The URL must be https (or http on loopback, for development): a token is never sent in clear text.
    public func send(_ request: HTTPRequest, authorizedBy credential: Credential) async throws -> HTTPResponse {
        guard EndpointSecurity.isAcceptable(request.url) else {
            throw SwitchbackError(.insecureEndpoint, "an access token goes only to https (or loopback http), not \(Redaction.describe(request.url))")
        }
        let bound = credential.dpopKey != nil
        let response = try await sendOnce(request, authorizedBy: credential, nonce: bound ? dpopNonces.nonce(for: request.url) : nil)
        if bound { dpopNonces.remember(response, from: request.url) }
        guard bound, let nonce = DPoPKey.nonceRequested(by: response, resourceServer: true) else { return response }
        let retried = try await sendOnce(request, authorizedBy: credential, nonce: nonce)
        dpopNonces.remember(retried, from: request.url)
        return retried
    }

    /// The headers that present `credential`'s access token on a `method` request to `url`: `Authorization`
    /// (Bearer or DPoP) and, for a DPoP-bound token, a fresh `DPoP` proof carrying the nonce that server
    /// gave last. The URL must be https (or http on loopback).
    func authorizationHeaders(method: String, url: URL, credential: Credential) throws -> [String: String] {
        guard EndpointSecurity.isAcceptable(url) else {
            throw SwitchbackError(.insecureEndpoint, "an access token goes only to https (or loopback http), not \(Redaction.describe(url))")
        }
        return try authorizationHeaders(method: method, url: url, credential: credential, nonce: dpopNonces.nonce(for: url))
    }

    private func authorizationHeaders(method: String, url: URL, credential: Credential, nonce: String?) throws -> [String: String] {
        guard credential.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame else {
            return ["Authorization": "Bearer \(credential.accessToken)"]
        }
        guard let dpop = credential.dpopKey else {
            throw SwitchbackError(.invalidConfiguration, "the access token is DPoP-bound but the credential holds no DPoP key")
        }
        return [
            "Authorization": "DPoP \(credential.accessToken)",
            "DPoP": try dpop.proof(
                method: method, url: url, accessToken: credential.accessToken, nonce: nonce, now: clock.now(), jti: entropy.token(bytes: 16)),
        ]
    }

    private func sendOnce(_ request: HTTPRequest, authorizedBy credential: Credential, nonce: String?) async throws -> HTTPResponse {
        var request = request
        for (name, value) in try authorizationHeaders(method: request.method.rawValue, url: request.url, credential: credential, nonce: nonce) {
            request.headers[name] = value
        }
        do {
            return try await transport.send(request)
        } catch let error as CancellationError {
            throw error
        } catch let error as SwitchbackError {
            throw error
        } catch {
            throw SwitchbackError(.transportFailed, "could not reach \(Redaction.describe(request.url))", underlying: error)
        }
    }
}
