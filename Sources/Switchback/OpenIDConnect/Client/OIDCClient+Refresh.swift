import Foundation
import Logging

/// What the token endpoint did with a refresh token, as far as the client can tell once it answered 200.
enum RefreshRotation: Sendable, Equatable, CustomStringConvertible {
    /// The answer holds no refresh token: the one presented stays valid (RFC 6749 §6).
    case unchanged
    /// The answer holds a new refresh token; the one presented is retired.
    case rotated(String)
    /// The answer cannot be read, so whether it rotated the token is unknown.
    case unreadable

    /// Reads only the `refresh_token` member, leniently: an answer refused for any other reason (its
    /// token type, its ID token, a missing member) still yields the token the provider rotated.
    init(answer body: Data) {
        guard case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: body) else {
            self = .unreadable
            return
        }
        switch members["refresh_token"] {
        case nil, .null?: self = .unchanged
        case .string(let token)? where !token.isEmpty: self = .rotated(token)
        default: self = .unreadable
        }
    }

    /// Never shows the token.
    var description: String {
        switch self {
        case .unchanged: "unchanged"
        case .rotated: "rotated(‹redacted›)"
        case .unreadable: "unreadable"
        }
    }
}

/// A refresh the provider answered: accepted, or answered with 200 and refused here (with what the answer
/// did to the refresh token, which the caller must keep).
enum RefreshAnswer: Sendable, CustomStringConvertible {
    case accepted(Credential)
    case refused(any Error, RefreshRotation)

    /// Never shows a token (a ``Credential`` describes itself without them).
    var description: String {
        switch self {
        case .accepted(let credential): "accepted(\(credential))"
        case .refused(let error, let rotation): "refused(\(error), \(rotation))"
        }
    }
}

extension OIDCClient {
    /// Redeems the refresh token. A new ID token, when sent, must keep `iss`, `sub` and `aud`.
    ///
    /// The provider may have rotated the refresh token by the time the new ID token is checked, so losing
    /// the answer loses the sign-in. A new ID token that cannot be checked for want of the provider's keys
    /// (`jwksFetchFailed`: a key rotation while offline) is therefore set aside, the identity of the sign-in
    /// kept, and the new tokens returned, unless the configuration requires acr values or claims; one that
    /// is checked and fails still fails.
    ///
    /// This call stores nothing: an answer it refuses after the provider rotated the refresh token loses
    /// that token. Apps refresh through ``CredentialManager``, which keeps a rotated token whatever happens
    /// to the rest of the answer.
    public func refresh(_ credential: Credential) async throws -> Credential {
        switch try await refreshAnswer(credential) {
        case .accepted(let refreshed): return refreshed
        case .refused(let error, _): throw error
        }
    }

    /// Sends the refresh and reads the answer. Throws when the provider did not answer 200 (or could not be
    /// reached); returns ``RefreshAnswer/refused(_:_:)`` for a 200 that cannot be accepted, with the
    /// rotation it carried.
    func refreshAnswer(_ credential: Credential) async throws -> RefreshAnswer {
        guard let refreshToken = credential.refreshToken else {
            throw SwitchbackError(.noRefreshToken, "this credential holds no refresh token")
        }
        let metadata = try await metadata()
        let tokenClient = tokenClient(metadata)
        let response = try await tokenClient.refreshResponse(refreshToken: refreshToken, dpop: credential.dpopKey)
        guard response.status == 200 else { throw TokenClient.endpointError(response, code: .tokenEndpointError, what: "the token request") }
        do {
            let tokens = try tokenClient.tokens(from: response, dpop: credential.dpopKey, grant: "refresh_token")
            return .accepted(try await refreshed(credential, with: tokens, metadata: metadata))
        } catch {
            return .refused(error, RefreshRotation(answer: response.body))
        }
    }

    private func refreshed(_ credential: Credential, with tokens: TokenResponse, metadata: ProviderMetadata) async throws -> Credential {
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
