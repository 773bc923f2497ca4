import Foundation
import Logging

extension OIDCClient {
    /// Redeems the refresh token. A new ID token, when sent, must keep `iss`, `sub` and `aud`.
    ///
    /// The provider may have rotated the refresh token by the time the new ID token is checked, so losing
    /// the answer loses the sign-in. A new ID token that cannot be checked for want of the provider's keys
    /// (`jwksFetchFailed`: a key rotation while offline) is therefore set aside, the identity of the sign-in
    /// kept, and the new tokens returned, unless the configuration requires acr values or claims; one that
    /// is checked and fails still fails.
    public func refresh(_ credential: Credential) async throws -> Credential {
        guard let refreshToken = credential.refreshToken else {
            throw SwitchbackError(.noRefreshToken, "this credential holds no refresh token")
        }
        let metadata = try await metadata()
        let tokens = try await tokenClient(metadata).refresh(refreshToken: refreshToken, dpop: credential.dpopKey)
        var idToken: IDToken?
        if let raw = tokens.idToken {
            let validated: IDToken
            do {
                validated = try await idTokenValidator().validate(raw, expectations: .init(nonce: nil, accessToken: tokens.accessToken))
            } catch let error as SwitchbackError
                where error.code == .jwksFetchFailed && configuration.requiredACRValues.isEmpty && configuration.requiredClaims.isEmpty
            {
                // Only where the ID token adds nothing the sign-in must still meet: with required acr values or
                // claims, a token that cannot be checked fails as before.
                logger.notice("the refreshed ID token could not be checked (the provider's keys are unreachable); keeping the sign-in's identity")
                return self.credential(from: tokens, idToken: nil, previous: credential, issuer: metadata.issuer, dpopKey: credential.dpopKey)
            }
            if let previous = credential.idTokenClaims {
                try IDTokenValidator.checkRefreshed(validated.claims, previous: previous)
            } else if validated.claims.sub != credential.subject {
                // An identity read from userinfo keeps its subject across refreshes too.
                throw SwitchbackError(.refreshedIDTokenMismatch, "the refreshed ID token names another subject than the sign-in")
            }
            if !configuration.requiredClaims.isEmpty { try Self.checkRequiredClaims(configuration.requiredClaims, in: validated.allClaims) }
            idToken = validated
        }
        logger.info("credential refreshed", metadata: ["newIDToken": "\(idToken != nil)"])
        return self.credential(from: tokens, idToken: idToken, previous: credential, issuer: metadata.issuer, dpopKey: credential.dpopKey)
    }
}
