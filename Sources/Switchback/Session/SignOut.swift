public import Foundation

/// An RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2): the provider's
/// `end_session_endpoint` with `id_token_hint`, `client_id`, `post_logout_redirect_uri` and a fresh
/// `state`, to show in the user agent the sign-in used; ``verifyReturn(_:)`` checks where it came back.
/// A provider with its own logout (``ProviderMetadata/EndSessionStyle/redirectURIOnly``, UAE Pass) gets
/// only `redirect_uri` and returns no `state`.
public struct EndSessionRequest: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The URL to show.
    public let url: URL
    /// The `state` sent, which the return must carry; nil for a provider that takes none (UAE Pass).
    public let state: String?
    /// Where the provider sends the user agent afterwards; nil to stay on the provider's signed-out page.
    public let postLogoutRedirectURI: URL?

    /// The URL without its query (which holds the ID token as `id_token_hint`), for logs.
    public var description: String { "EndSessionRequest(\(Redaction.describe(url)))" }

    /// A request as ``OIDCClient/endSessionRequest(for:postLogoutRedirectURI:)`` builds it (or as kept across a relaunch).
    public init(url: URL, state: String?, postLogoutRedirectURI: URL?) {
        self.url = url
        self.state = state
        self.postLogoutRedirectURI = postLogoutRedirectURI
    }

    /// Checks the URL the user agent came back to: exactly the post-logout redirect URI (as redirect URIs
    /// are matched), carrying this request's `state` once when one was sent. Throws `redirectURIMismatch`,
    /// `stateMissing`, `duplicateParameter` or `stateMismatch`.
    public func verifyReturn(_ returned: URL) throws {
        guard let postLogoutRedirectURI, RedirectURIMatcher.matches(returned, registered: postLogoutRedirectURI) else {
            throw SwitchbackError(.redirectURIMismatch, "the sign-out came back to \(Redaction.describe(returned)), not the post-logout redirect URI")
        }
        // Without a state (UAE Pass's logout takes none), the address is all there is to check: a forged
        // return could only end this sign-out's page early, the credential being removed already.
        guard let state = self.state else { return }
        let states = URLComponents(url: returned, resolvingAgainstBaseURL: false)?.queryItems?.filter { $0.name == "state" } ?? []
        guard states.count <= 1 else { throw SwitchbackError(.duplicateParameter, "the sign-out's return carries state twice") }
        guard let received = states.first?.value else { throw SwitchbackError(.stateMissing, "the sign-out's return carries no state") }
        guard ConstantTime.equals(received, state) else {
            throw SwitchbackError(.stateMismatch, "the sign-out's return carries another state than the one sent")
        }
    }
}

/// What ``CredentialManager/signOut(signedInWith:postLogoutRedirectURI:revokingThrough:)`` did, and what is left to show.
public struct SignOut: Sendable {
    /// Where tokens are revoked: at the provider by the app, or through the app's backend companion, which
    /// holds the client authentication of a confidential client (UAE Pass, Norwegian BankID).
    public enum Revoker: Sendable, Equatable, CustomStringConvertible {
        case provider
        case companion(URL)

        public var description: String {
            switch self {
            case .provider: "at the provider"
            case .companion(let url): "through the companion \(Redaction.describe(url))"
            }
        }
    }

    /// The token types the provider revoked (`refresh_token`, `access_token`), in order: the ones it
    /// accepted, also when a later one failed.
    public let revoked: [String]
    /// Where they were revoked, or were to be.
    public let revokedThrough: Revoker
    /// Why revocation did not happen or stopped, when it did (no `revocation_endpoint`, the provider
    /// unreachable, a token it refused): the local credential is removed anyway, and ``revoked`` lists
    /// what was revoked before.
    public let revocationError: SwitchbackError?
    /// The provider's session to end in the user agent the sign-in used; nil when none needs a browser
    /// (no `end_session_endpoint`, or an ephemeral sign-in that left no session behind), so no sign-in
    /// prompt is ever shown for a sign-out, or when it could not be built (``endSessionError``).
    public let endSession: EndSessionRequest?
    /// Why the end-session request could not be built (the provider's metadata unreachable, a URL that
    /// does not form), when it could not; the provider's session may then still be open.
    public let endSessionError: SwitchbackError?
    /// How the end-session page ended, when ``SignInCoordinator/signOut(_:signedInWith:postLogoutRedirectURI:timeout:)``
    /// showed it; nil when nothing was shown.
    public internal(set) var userAgent: EndSessionOutcome?

    init(
        revoked: [String], revokedThrough: Revoker = .provider, revocationError: SwitchbackError?, endSession: EndSessionRequest?,
        endSessionError: SwitchbackError? = nil
    ) {
        self.revoked = revoked
        self.revokedThrough = revokedThrough
        self.revocationError = revocationError
        self.endSession = endSession
        self.endSessionError = endSessionError
    }
}

extension OIDCClient {
    /// The RP-initiated logout for `credential`, or nil when the provider publishes no
    /// `end_session_endpoint`. `id_token_hint` is sent when the credential holds an ID token.
    public func endSessionRequest(for credential: Credential, postLogoutRedirectURI: URL? = nil) async throws -> EndSessionRequest? {
        let metadata = try await metadata()
        guard let endpoint = metadata.endSessionEndpoint, var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)
        else { return nil }
        let existing = components.percentEncodedQuery.map { $0 + "&" } ?? ""
        if metadata.endSessionStyle == .redirectURIOnly {
            if let postLogoutRedirectURI {
                components.percentEncodedQuery = existing + FormEncoding.encode([("redirect_uri", postLogoutRedirectURI.absoluteString)])
            }
            guard let url = components.url else { throw SwitchbackError(.invalidURL, "the end-session URL could not be built") }
            return EndSessionRequest(url: url, state: nil, postLogoutRedirectURI: postLogoutRedirectURI)
        }
        let state = entropy.token(bytes: 32)
        var parameters: [(String, String)] = [("client_id", configuration.clientID), ("state", state)]
        if let idToken = credential.idToken { parameters.insert(("id_token_hint", idToken), at: 0) }
        if let postLogoutRedirectURI { parameters.append(("post_logout_redirect_uri", postLogoutRedirectURI.absoluteString)) }
        components.percentEncodedQuery = existing + FormEncoding.encode(parameters)
        guard let url = components.url else { throw SwitchbackError(.invalidURL, "the end-session URL could not be built") }
        return EndSessionRequest(url: url, state: state, postLogoutRedirectURI: postLogoutRedirectURI)
    }

    /// Revokes the credential's refresh token, then its access token (RFC 7009 §2.1 lets revoking the first
    /// revoke the second; the second call makes sure). Returns the types revoked.
    public func revoke(_ credential: Credential) async throws -> [String] {
        let (revoked, error) = try await revokeEach(credential)
        if let error { throw error }
        return revoked
    }

    /// Revokes what `credential` holds, one token after the other, at the provider or through `companion`,
    /// and says how far it got: the types revoked, and the error that stopped it, if one did. Only a
    /// cancellation is thrown.
    func revokeEach(_ credential: Credential, through companion: CompanionClient? = nil) async throws -> (
        revoked: [String], error: SwitchbackError?
    ) {
        var revoked: [String] = []
        do {
            let revoke: (String, String) async throws -> Void
            if let companion {
                revoke = { try await companion.revoke($0, typeHint: $1) }
            } else {
                let tokens = tokenClient(try await metadata())
                revoke = { try await tokens.revoke($0, typeHint: $1) }
            }
            if let refreshToken = credential.refreshToken {
                try await revoke(refreshToken, "refresh_token")
                revoked.append("refresh_token")
            }
            try await revoke(credential.accessToken, "access_token")
            revoked.append("access_token")
            return (revoked, nil)
        } catch let error as SwitchbackError {
            return (revoked, error)
        }
    }
}

extension CredentialManager {
    /// Signs out: revokes the tokens at the provider (when it offers revocation), removes the credential
    /// here whatever the provider answered, and returns the provider session still to end in a browser, if
    /// any. A sign-in made in an ephemeral browser left no provider session to end, so none is returned;
    /// show the returned request in the same kind of user agent the sign-in used, then check its return
    /// with ``EndSessionRequest/verifyReturn(_:)``.
    ///
    /// The sign-out replaces the credential before anything is revoked: a refresh under way (through any
    /// manager of this account) sends nothing more, or finishes first so that the token it rotated is the
    /// one revoked, and no refresh starts until the credential is gone.
    ///
    /// `strategy` is the user agent the sign-in used; nil takes the one the credential recorded
    /// (``Credential/userAgent``), else the system browser. With `companion`, the tokens are revoked through
    /// the app's backend companion (``CompanionClient/revoke(_:typeHint:)``): where the companion is the
    /// confidential client, the app cannot authenticate to the provider's revocation endpoint itself.
    public func signOut(
        signedInWith strategy: UserAgentStrategy? = nil, postLogoutRedirectURI: URL? = nil, revokingThrough companion: CompanionClient? = nil
    ) async throws -> SignOut {
        try await slot.write(replacing: true) { unsaved in
            try await self.revokeAndRemove(
                unsaved, signedInWith: strategy, postLogoutRedirectURI: postLogoutRedirectURI, companion: companion)
        }
    }

    /// The sign-out's work, holding the slot's write: `unsaved`, a refreshed credential the store never
    /// took, is the one to revoke when there is one. A protected refresh token is not read (that would
    /// ask the user to authenticate to sign out): the provider's end-session revokes it where the provider
    /// does, and it is deleted here with the credential.
    private func revokeAndRemove(
        _ unsaved: Credential?, signedInWith strategy: UserAgentStrategy?, postLogoutRedirectURI: URL?, companion: CompanionClient?
    ) async throws -> SignOut {
        // A credential the store never took is revoked whole: its refresh token is in memory, no prompt needed.
        let found: Credential? = if let unsaved { unsaved } else { try await loadStored() }
        guard var credential = found else {
            try await removeStored()
            return SignOut(revoked: [], revocationError: nil, endSession: nil)
        }
        let revoked: [String]
        let revocationError: SwitchbackError?
        do {
            (revoked, revocationError) = try await client.revokeEach(credential, through: companion)
        } catch {
            // Cancelled: the credential still goes.
            try await removeStored()
            throw error
        }
        credential.refreshToken = nil
        var endSession: EndSessionRequest?
        var endSessionError: SwitchbackError?
        if (strategy ?? credential.userAgent) != .ephemeralBrowser {
            do {
                endSession = try await client.endSessionRequest(for: credential, postLogoutRedirectURI: postLogoutRedirectURI)
            } catch let error as SwitchbackError {
                endSessionError = error
            }
        }
        try await removeStored()
        return SignOut(
            revoked: revoked, revokedThrough: companion.map { .companion($0.baseURL) } ?? .provider, revocationError: revocationError,
            endSession: endSession, endSessionError: endSessionError)
    }
}
