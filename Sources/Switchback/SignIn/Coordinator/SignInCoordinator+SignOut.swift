public import Foundation

/// How the provider's page of an RP-initiated logout ended.
public enum EndSessionOutcome: Sendable, Equatable {
    /// The user agent came back to the post-logout redirect URI with the request's `state`.
    case returned
    /// The user agent came back to the post-logout redirect URI of a provider that returns no `state` (UAE
    /// Pass): the address is right, but anyone who can open that URL could have opened it, so it does not
    /// prove that the provider ended its session.
    case returnedWithoutState
    /// The user closed the provider's page before it came back; the provider may or may not have ended
    /// its session, which only its page said.
    case closed
}

/// How a flow the coordinator ran ended: a sign-in's result, or a sign-out's page.
enum FlowEnding: Sendable {
    case signedIn(SignInResult)
    case endedSession(EndSessionOutcome)
}

/// Sign-out through the user agents sign-in uses: the provider's end-session page is shown by the same
/// host, with the same strategy, and its return is caught as a sign-in's is (the callback of an
/// authentication session, a WebView's navigation, or ``handle(url:)`` for the Safari view and universal
/// links), checked against the request's `state`.
extension SignInCoordinator {
    /// Signs out with `manager`: revokes the tokens (through the companion when it redeems this app's codes),
    /// removes the credential (``CredentialManager/signOut(signedInWith:postLogoutRedirectURI:revokingThrough:)``),
    /// then shows the provider's end-session page with `strategy` when there is one to show. A sign-in
    /// made in an ephemeral browser, or a provider without an `end_session_endpoint`, shows nothing: no
    /// "wants to use … to Sign In" prompt appears for a sign-out that needs no browser. `strategy` nil takes
    /// the user agent the credential's sign-in recorded (``Credential/userAgent``), else the system browser.
    ///
    /// ```swift
    /// let signOut = try await coordinator.signOut(manager, postLogoutRedirectURI: URL(string: "com.example.app:/signed-out")!)
    /// ```
    public func signOut(
        _ manager: CredentialManager, signedInWith strategy: UserAgentStrategy? = nil, postLogoutRedirectURI: URL, timeout: TimeInterval = 300
    ) async throws -> SignOut {
        var recorded = strategy
        if recorded == nil { recorded = try await manager.credential()?.userAgent }
        let strategy = recorded ?? .systemBrowser
        // Checked before anything is revoked, so that a configuration mistake signs nobody half out.
        try Self.requireReturn(postLogoutRedirectURI, strategy: strategy)
        // An app whose codes the companion redeems revokes through it: the client authentication is the companion's.
        var signOut = try await manager.signOut(
            signedInWith: strategy, postLogoutRedirectURI: postLogoutRedirectURI,
            revokingThrough: authorizer.client == nil ? nil : authorizer.companion)
        if let request = signOut.endSession {
            signOut.userAgent = try await endSession(request, strategy: strategy, timeout: timeout)
        }
        return signOut
    }

    /// Shows `request` (an RP-initiated logout) with `strategy` and waits until the user agent comes back to
    /// its post-logout redirect URI, or the user closes it. Throws `invalidConfiguration` for a request
    /// without a post-logout redirect URI (nothing would bring the user agent back), the errors of
    /// ``EndSessionRequest/verifyReturn(_:)`` for a return that is not this request's, `timedOut` after
    /// `timeout`, and `CancellationError` when the task is cancelled (the user agent is dismissed).
    public func endSession(_ request: EndSessionRequest, strategy: UserAgentStrategy, timeout: TimeInterval = 300) async throws
        -> EndSessionOutcome
    {
        guard let returnURL = request.postLogoutRedirectURI else {
            throw SwitchbackError(
                .invalidConfiguration,
                "a sign-out shown in a user agent needs a post-logout redirect URI registered with the provider, or the user agent never comes back")
        }
        try Self.requireReturn(returnURL, strategy: strategy)
        let flow = SignInRequest(provider: "sign-out", strategy: strategy, timeout: timeout)
        let flowID = await begin(flow, authorization: .signOut(request), url: request.url, returnURL: returnURL)
        switch try await ending(of: flowID) {
        case .endedSession(let outcome): return outcome
        case .signedIn: throw SwitchbackError(.flowNotFound, "this flow was a sign-in, not a sign-out")
        }
    }

    /// Refuses a post-logout redirect URI that `strategy` can never bring back to the app.
    static func requireReturn(_ returnURL: URL, strategy: UserAgentStrategy) throws {
        try requireCallback(for: returnURL, strategy: strategy)
        if strategy == .safariView, returnURL.scheme?.lowercased() == "https" {
            // The provider redirects straight to it, and iOS never opens a universal link from a redirect
            // (``AuthenticationSessionCallback``, `IOSUserAgentRules`): the Safari view would stay on that page.
            throw SwitchbackError(
                .strategyNotSupported,
                "a Safari view comes back from a sign-out's redirect only by a custom scheme; an https post-logout redirect URI is never opened in the app from a redirect"
            )
        }
    }
}
