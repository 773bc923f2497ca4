import Foundation

extension OIDCClient {
    /// Sends `request` to a resource server (an API, userinfo) with `credential`'s access token: the
    /// `Bearer` scheme, or for a DPoP-bound token the `DPoP` scheme with a fresh proof for this method and
    /// URL that binds the token (`ath`, RFC 9449 §7). When the server asks for a nonce (401 with
    /// `use_dpop_nonce` and `DPoP-Nonce`, §9), the request is sent once more with a proof carrying it.
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
        let response = try await sendOnce(request, authorizedBy: credential, nonce: nil)
        guard credential.dpopKey != nil, let nonce = DPoPKey.nonceRequested(by: response, resourceServer: true) else { return response }
        return try await sendOnce(request, authorizedBy: credential, nonce: nonce)
    }

    private func sendOnce(_ request: HTTPRequest, authorizedBy credential: Credential, nonce: String?) async throws -> HTTPResponse {
        var request = request
        if credential.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame {
            guard let dpop = credential.dpopKey else {
                throw SwitchbackError(.invalidConfiguration, "the access token is DPoP-bound but the credential holds no DPoP key")
            }
            request.headers["Authorization"] = "DPoP \(credential.accessToken)"
            request.headers["DPoP"] = try dpop.proof(
                method: request.method.rawValue, url: request.url, accessToken: credential.accessToken, nonce: nonce, now: clock.now(),
                jti: entropy.token(bytes: 16))
        } else {
            request.headers["Authorization"] = "Bearer \(credential.accessToken)"
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
