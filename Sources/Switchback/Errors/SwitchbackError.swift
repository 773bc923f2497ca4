public import Foundation

/// The one error type the Switchback core throws.
///
/// Every failure carries a ``Code`` you can switch on, a message that is safe to log (it never holds a
/// token, code, secret or verifier), the OAuth error the server sent when there was one, and the
/// underlying cause. `CancellationError` is never wrapped: it passes through untouched.
public struct SwitchbackError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, as an extensible set of codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Value: String, Sendable {
            case invalidConfiguration
            case invalidURL
            case transportFailed
            case httpStatus
            case responseTooLarge
            case malformedResponse
            case discoveryFailed
            case issuerMismatch
            case insecureEndpoint
            case parRequired
            case parFailed
            case duplicateParameter
            case redirectURIMismatch
            case stateMismatch
            case stateMissing
            case issuerParameterMissing
            case issuerParameterMismatch
            case authorizationError
            case codeMissing
            case callbackReplayed
            case tokenEndpointError
            case invalidTokenResponse
            case idTokenMissing
            case idTokenMalformed
            case idTokenDecryptionFailed
            case idTokenNotEncrypted
            case unsupportedAlgorithm
            case unknownSigningKey
            case signatureInvalid
            case jwksFetchFailed
            case idTokenIssuerInvalid
            case audienceInvalid
            case authorizedPartyInvalid
            case subjectMissing
            case tokenExpired
            case tokenNotYetValid
            case issuedAtInvalid
            case nonceMismatch
            case accessTokenHashInvalid
            case codeHashInvalid
            case authTimeInvalid
            case acrNotSatisfied
            case identityRequirementNotMet
            case refreshedIDTokenMismatch
            case userInfoSubjectMismatch
            case userInfoInvalid
            case logoutTokenInvalid
            case dpopKeyUnavailable
            case appAttestKeyInvalid
            case presentationInvalid
            case authenticationDeclined
            case authenticationUnavailable
            case noRefreshToken
            case reauthenticationRequired
            case rotationLost
            case notSignedIn
            case credentialUnavailable
            case entitlementMissing
            case storeFailed
            case userCancelled
            case handOffLinkInvalid
            case foreignResumeURL
            case authenticatorUnavailable
            case authenticatorDidNotReturn
            case userAgentFailed
            case userAgentRefused
            case timedOut
            case flowInterrupted
            case flowNotFound
            case strategyNotSupported
            case handOffRefused
            case unknown
        }

        fileprivate let value: Value
        fileprivate init(_ value: Value) { self.value = value }

        /// A stable, machine-readable name for the code (`"stateMismatch"`).
        public var description: String { value.rawValue }

        /// The client or provider configuration cannot work (missing endpoint, bad key, bad URL).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// A code this version does not know, read back from a journal or an answer written by a newer one.
        public static let unknown = Code(.unknown)
        /// A URL could not be parsed or built.
        public static let invalidURL = Code(.invalidURL)
        /// The HTTP transport failed before a response arrived.
        public static let transportFailed = Code(.transportFailed)
        /// The server answered with an HTTP status that the operation does not accept.
        public static let httpStatus = Code(.httpStatus)
        /// A response body exceeded the size the client accepts.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// A response body could not be parsed.
        public static let malformedResponse = Code(.malformedResponse)
        /// The discovery document could not be fetched or parsed.
        public static let discoveryFailed = Code(.discoveryFailed)
        /// The discovery document names an issuer other than the one asked for.
        public static let issuerMismatch = Code(.issuerMismatch)
        /// An endpoint uses plain HTTP on a host that is not loopback.
        public static let insecureEndpoint = Code(.insecureEndpoint)
        /// The provider requires Pushed Authorization Requests but publishes no endpoint, or PAR was disabled.
        public static let parRequired = Code(.parRequired)
        /// The pushed authorization request was refused.
        public static let parFailed = Code(.parFailed)
        /// A response parameter appeared more than once.
        public static let duplicateParameter = Code(.duplicateParameter)
        /// The callback did not arrive at exactly the registered redirect URI.
        public static let redirectURIMismatch = Code(.redirectURIMismatch)
        /// The callback's `state` differs from the one sent.
        public static let stateMismatch = Code(.stateMismatch)
        /// The callback carries no `state`.
        public static let stateMissing = Code(.stateMissing)
        /// The provider promises the RFC 9207 `iss` parameter but the callback lacks it.
        public static let issuerParameterMissing = Code(.issuerParameterMissing)
        /// The callback's RFC 9207 `iss` parameter names another issuer.
        public static let issuerParameterMismatch = Code(.issuerParameterMismatch)
        /// The provider answered the authorization request with an OAuth error; see ``SwitchbackError/oauthError``.
        public static let authorizationError = Code(.authorizationError)
        /// A success callback without an authorization code.
        public static let codeMissing = Code(.codeMissing)
        /// The token endpoint answered with an OAuth error; see ``SwitchbackError/oauthError``.
        public static let tokenEndpointError = Code(.tokenEndpointError)
        /// The token endpoint's answer is not a valid token response.
        public static let invalidTokenResponse = Code(.invalidTokenResponse)
        /// An OpenID Connect token response without an ID token.
        public static let idTokenMissing = Code(.idTokenMissing)
        /// The ID token is not a well-formed compact JWS.
        public static let idTokenMalformed = Code(.idTokenMalformed)
        /// An encrypted ID token (JWE) names no key the client holds, or does not decrypt with it (wrong
        /// key, or tampered).
        public static let idTokenDecryptionFailed = Code(.idTokenDecryptionFailed)
        /// The client expects encrypted ID tokens (it holds a decryption key) and the provider sent a
        /// plain one; it is refused rather than accepted as a downgrade.
        public static let idTokenNotEncrypted = Code(.idTokenNotEncrypted)
        /// The token's `alg` is not on the allow-list (`none` and HMAC never are).
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// No key in the provider's JWKS can verify the token, even after one refetch.
        public static let unknownSigningKey = Code(.unknownSigningKey)
        /// The signature does not verify.
        public static let signatureInvalid = Code(.signatureInvalid)
        /// The JWKS could not be fetched or holds no usable key.
        public static let jwksFetchFailed = Code(.jwksFetchFailed)
        /// The ID token's `iss` is not the provider's issuer.
        public static let idTokenIssuerInvalid = Code(.idTokenIssuerInvalid)
        /// The ID token's `aud` is missing or does not contain the client ID.
        public static let audienceInvalid = Code(.audienceInvalid)
        /// The ID token's `azp` is missing where required, or names another client.
        public static let authorizedPartyInvalid = Code(.authorizedPartyInvalid)
        /// The ID token has no `sub`.
        public static let subjectMissing = Code(.subjectMissing)
        /// The token's `exp` is in the past (beyond the allowed clock skew), or missing.
        public static let tokenExpired = Code(.tokenExpired)
        /// The token's `nbf` is in the future (beyond the allowed clock skew).
        public static let tokenNotYetValid = Code(.tokenNotYetValid)
        /// The token's `iat` is missing or in the future.
        public static let issuedAtInvalid = Code(.issuedAtInvalid)
        /// The ID token's `nonce` is missing or differs from the one sent.
        public static let nonceMismatch = Code(.nonceMismatch)
        /// The ID token's `at_hash` is missing where required, or does not match the access token.
        public static let accessTokenHashInvalid = Code(.accessTokenHashInvalid)
        /// The ID token's `c_hash` is missing where required, or does not match the code.
        public static let codeHashInvalid = Code(.codeHashInvalid)
        /// `auth_time` is missing while `max_age` was requested, or the authentication is too old.
        public static let authTimeInvalid = Code(.authTimeInvalid)
        /// The ID token's `acr` is not one of the required assurance levels.
        public static let acrNotSatisfied = Code(.acrNotSatisfied)
        /// The identity lacks a claim value ``ClientConfiguration/requiredClaims`` asks for (an unverified
        /// UAE Pass account, say).
        public static let identityRequirementNotMet = Code(.identityRequirementNotMet)
        /// A refreshed ID token changed `iss`, `sub` or `aud`, or newly carries `azp`.
        public static let refreshedIDTokenMismatch = Code(.refreshedIDTokenMismatch)
        /// The userinfo `sub` differs from the ID token's.
        public static let userInfoSubjectMismatch = Code(.userInfoSubjectMismatch)
        /// The userinfo response is malformed or fails its signature or claim checks.
        public static let userInfoInvalid = Code(.userInfoInvalid)
        /// A Back-Channel Logout token failed its checks (OpenID Connect Back-Channel Logout 1.0 §2.6): its
        /// signature, issuer, audience, times, `events`, `sub`/`sid`, a `nonce`, or it was used before.
        public static let logoutTokenInvalid = Code(.logoutTokenInvalid)
        /// The DPoP key cannot be made, read back or used: a hardware key on another device (a restored
        /// backup), a Secure Enclave that refused, or a stored key of a kind this app has no source for.
        /// The credential it binds is of no use any more; the user signs in again.
        public static let dpopKeyUnavailable = Code(.dpopKeyUnavailable)
        /// App Attest refused the key: it is unknown to this device (a restored backup), already attested,
        /// or Apple rejected it. ``AppAttestation`` then attests a new key once.
        public static let appAttestKeyInvalid = Code(.appAttestKeyInvalid)
        /// A verifiable presentation (an SD-JWT, RFC 9901) is refused: its issuer's signature, a disclosure
        /// (digest, name, referred to once), its validity times, or its Key Binding JWT (holder's key,
        /// audience, nonce, `sd_hash`, age). The message names the check.
        public static let presentationInvalid = Code(.presentationInvalid)
        /// The user declined (or failed) Face ID, Touch ID or the passcode that guards the refresh token
        /// (``RefreshTokenProtection``). Nothing changed: not a sign-out; ask again when the user acts.
        public static let authenticationDeclined = Code(.authenticationDeclined)
        /// The device cannot authenticate the user for the refresh token now (no passcode set, biometry not
        /// enrolled or locked out). The credential is kept; the app explains, or the user signs in again.
        public static let authenticationUnavailable = Code(.authenticationUnavailable)
        /// A refresh was asked for a credential that holds no refresh token.
        public static let noRefreshToken = Code(.noRefreshToken)
        /// The provider refused the refresh token (`invalid_grant`) and no newer credential was stored by
        /// anyone else: the grant is revoked, expired, or its rotation was lost. The user signs in again.
        public static let reauthenticationRequired = Code(.reauthenticationRequired)
        /// The provider refused the refresh token after an earlier refresh whose answer never reached the
        /// store (the app was terminated, the connection broke or timed out after the request was sent, or
        /// the answer could not be read): the provider rotated the token and the new one was lost. The user
        /// signs in again; counted apart from ``reauthenticationRequired`` (a revocation or an expiry).
        public static let rotationLost = Code(.rotationLost)
        /// No credential is stored for this key: never signed in, signed out, or removed while the call
        /// waited. Not a store failure (``storeFailed``) and not a locked device (``credentialUnavailable``).
        public static let notSignedIn = Code(.notSignedIn)
        /// The store holds a credential it cannot read now: the device has not been unlocked since it
        /// started (a prewarmed or background launch), so protected data is unavailable. Not a sign-out:
        /// try again once protected data is available (``ProtectedDataGate``).
        public static let credentialUnavailable = Code(.credentialUnavailable)
        /// The app lacks an entitlement the operation needs: the keychain-access-groups entry for the
        /// Keychain access group it named (`errSecMissingEntitlement`, -34018). A setup problem
        /// (``SetupCheck/keychainProblem(_:accessGroup:)``), not a runtime one.
        public static let entitlementMissing = Code(.entitlementMissing)
        /// A credential or journal store failed to read or write.
        public static let storeFailed = Code(.storeFailed)
        /// The callback belongs to a sign-in this client already completed, or is completing now (a deep
        /// link delivered twice). Nothing is redeemed: a second redemption would make the provider revoke
        /// the tokens the first one produced (RFC 6749 §4.1.2).
        public static let callbackReplayed = Code(.callbackReplayed)
        /// The user closed the sign-in before it finished.
        public static let userCancelled = Code(.userCancelled)
        /// The backend companion refused to issue a session hand-off (the access token was refused, the
        /// destination is not allow-listed) or answered with something other than its own redeem URL.
        public static let handOffRefused = Code(.handOffRefused)
        /// An authenticator deep link could not be read or carries no return URL to rewrite.
        public static let handOffLinkInvalid = Code(.handOffLinkInvalid)
        /// A return URL in an authenticator deep link is not an https page of the provider's hosts (an
        /// injected successurl); it is never saved or loaded.
        public static let foreignResumeURL = Code(.foreignResumeURL)
        /// The authenticator app is not installed (its link could not be opened) and the provider offers no
        /// sign-in without it.
        public static let authenticatorUnavailable = Code(.authenticatorUnavailable)
        /// The user came back from the authenticator without a return, and the flow is configured to fail
        /// then rather than wait (never reported as ``userCancelled``).
        public static let authenticatorDidNotReturn = Code(.authenticatorDidNotReturn)
        /// The provider's page failed to load in the user agent, or the user agent could not be shown.
        public static let userAgentFailed = Code(.userAgentFailed)
        /// The provider answered its sign-in page with an HTTP error in this user agent (providers that
        /// refuse embedded WebViews do): use another strategy.
        public static let userAgentRefused = Code(.userAgentRefused)
        /// The sign-in did not finish within its time limit.
        public static let timedOut = Code(.timedOut)
        /// The app was terminated at a point the sign-in cannot continue from (the provider's page lived
        /// only in the user agent that was closed with it).
        public static let flowInterrupted = Code(.flowInterrupted)
        /// A return URL names a sign-in that is unknown, finished or expired.
        public static let flowNotFound = Code(.flowNotFound)
        /// The chosen user agent or return pattern cannot work with this provider (it refuses embedded
        /// WebViews, or its return URL cannot be reached from that user agent).
        public static let strategyNotSupported = Code(.strategyNotSupported)
    }

    /// What went wrong.
    public let code: Code
    /// A human-readable explanation that never contains a secret.
    public let message: String
    /// The OAuth error response the server sent, when there was one.
    public let oauthError: OAuthErrorResponse?
    /// The HTTP status of the response that caused the error, when there was one.
    public let httpStatus: Int?
    /// The error that caused this one, when there was one.
    public let underlying: (any Error & Sendable)?

    /// Creates an error. Pass only redacted text as `message`.
    public init(
        _ code: Code,
        _ message: String,
        oauthError: OAuthErrorResponse? = nil,
        httpStatus: Int? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.oauthError = oauthError
        self.httpStatus = httpStatus
        self.underlying = underlying
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let oauthError { text += " (\(oauthError))" }
        return text
    }
}

extension SwitchbackError.Code: Codable {
    public init(from decoder: any Decoder) throws {
        // A newer version may know more codes: an unknown one reads as ``unknown`` rather than failing the
        // whole journal it is part of.
        let name = try decoder.singleValueContainer().decode(String.self)
        self.init(Value(rawValue: name) ?? .unknown)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value.rawValue)
    }
}

extension SwitchbackError: LocalizedError {
    public var errorDescription: String? { description }
}
