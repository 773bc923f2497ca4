import Foundation

/// Checks an authorization response before any code is redeemed.
///
/// Order: the exact redirect URI, then `state` (constant-time), then the RFC 9207 `iss` parameter, then
/// the OAuth error, then the code. An error response whose `state` or `iss` is wrong is reported as that
/// mismatch, not as the provider's error: its origin is not trusted.
enum CallbackValidator {
    static func code(from callback: AuthorizationCallback, session: AuthorizationSession, metadata: ProviderMetadata) throws -> String {
        guard RedirectURIMatcher.matches(callback.url, registered: session.redirectURI) else {
            throw SwitchbackError(
                .redirectURIMismatch,
                "the callback arrived at \(Redaction.describe(callback.url)), not at the registered \(session.redirectURI)"
            )
        }
        let response = try AuthorizationResponse(callback, mode: session.responseMode)
        guard let state = response.parameters["state"] else {
            throw SwitchbackError(.stateMissing, "the callback carries no state")
        }
        guard ConstantTime.equals(state, session.state) else {
            throw SwitchbackError(.stateMismatch, "the callback's state is not the one this sign-in sent")
        }
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
        if let error = response.oauthError {
            throw SwitchbackError(.authorizationError, "the provider refused the authorization request", oauthError: error)
        }
        guard let code = response.parameters["code"], !code.isEmpty else {
            throw SwitchbackError(.codeMissing, "the callback carries neither a code nor an error")
        }
        return code
    }
}
