import Foundation

/// Checks an authorization response before any code is redeemed.
///
/// Order: the exact redirect URI, then `state` (constant-time), then the RFC 9207 `iss` parameter, then
/// the OAuth error, then the code. An error response whose `state` or `iss` is wrong is reported as that
/// mismatch, not as the provider's error: its origin is not trusted.
enum CallbackValidator {
    static func code(from callback: AuthorizationCallback, session: AuthorizationSession, metadata: ProviderMetadata) throws -> String {
        try code(in: checked(callback, session: session, metadata: metadata))
    }

    /// The tokens of an implicit response (`response_type=id_token token`), after the same checks. A code
    /// in it means the provider answered another flow than the one requested.
    static func implicitTokens(from callback: AuthorizationCallback, session: AuthorizationSession, metadata: ProviderMetadata) throws
        -> TokenResponse
    {
        let parameters = try checked(callback, session: session, metadata: metadata).parameters
        guard parameters["code"] == nil else {
            throw SwitchbackError(.malformedResponse, "the implicit response carries a code, which response type \"id_token token\" never does")
        }
        guard let accessToken = parameters["access_token"], !accessToken.isEmpty, let tokenType = parameters["token_type"], !tokenType.isEmpty else {
            throw SwitchbackError(.invalidTokenResponse, "the implicit response carries no access_token and token_type")
        }
        guard let idToken = parameters["id_token"], !idToken.isEmpty else {
            throw SwitchbackError(.idTokenMissing, "the implicit response carries no id_token")
        }
        var expiresIn: Int?
        if let text = parameters["expires_in"] {
            guard let seconds = Int(text), seconds >= 0 else { throw SwitchbackError(.invalidTokenResponse, "expires_in is not a number of seconds") }
            expiresIn = seconds
        }
        return TokenResponse(
            accessToken: accessToken, tokenType: tokenType, expiresIn: expiresIn, refreshToken: nil, idToken: idToken, scope: parameters["scope"])
    }

    /// A response to an authorization the backend companion started, before the app relays it: the
    /// redirect URI and the state the companion gave the app (an app relaying a response it did not ask
    /// for would sign its user in as someone else), then the OAuth error and the code. The response must
    /// be a query redirect, which the app can relay as a URL. The companion checks `iss` and redeems.
    static func companionResponse(_ callback: AuthorizationCallback, authorization: CompanionAuthorization) throws -> URL {
        let response = try stateChecked(callback, redirectURI: authorization.returnURL, mode: .query, state: authorization.state)
        try refuseError(in: response)
        _ = try code(in: response)
        return callback.url
    }

    /// Redirect URI, state, `iss` and the OAuth error, for either response type.
    private static func checked(_ callback: AuthorizationCallback, session: AuthorizationSession, metadata: ProviderMetadata) throws
        -> AuthorizationResponse
    {
        let response = try stateChecked(callback, redirectURI: session.redirectURI, mode: session.responseMode, state: session.state)
        if let issuer = response.parameters["iss"] {
            guard issuer == metadata.issuer else {
                throw SwitchbackError(
                    .issuerParameterMismatch,
                    "the callback's iss \"\(issuer.prefix(200))\" is not the provider's issuer \"\(metadata.issuer)\""
                )
            }
        } else if metadata.authorizationResponseIssParameterSupported {
            throw SwitchbackError(.issuerParameterMissing, "the provider promises an iss parameter but the callback has none")
        }
        try refuseError(in: response)
        return response
    }

    /// The exact redirect URI, the parameters where `mode` puts them, and `state` (constant-time); a
    /// sign-in without an expected state accepts none.
    private static func stateChecked(_ callback: AuthorizationCallback, redirectURI: URL, mode: ResponseMode, state expected: String?) throws
        -> AuthorizationResponse
    {
        guard RedirectURIMatcher.matches(callback.url, registered: redirectURI) else {
            throw SwitchbackError(
                .redirectURIMismatch, "the callback arrived at \(Redaction.describe(callback.url)), not at the registered \(redirectURI)")
        }
        let response = try AuthorizationResponse(callback, mode: mode)
        guard let state = response.parameters["state"] else {
            throw SwitchbackError(.stateMissing, "the callback carries no state")
        }
        guard let expected, ConstantTime.equals(state, expected) else {
            throw SwitchbackError(.stateMismatch, "the callback's state is not the one this sign-in sent")
        }
        return response
    }

    private static func refuseError(in response: AuthorizationResponse) throws {
        if let error = response.oauthError {
            throw SwitchbackError(.authorizationError, "the provider refused the authorization request", oauthError: error)
        }
    }

    private static func code(in response: AuthorizationResponse) throws -> String {
        guard let code = response.parameters["code"], !code.isEmpty else {
            throw SwitchbackError(.codeMissing, "the callback carries neither a code nor an error")
        }
        return code
    }
}
