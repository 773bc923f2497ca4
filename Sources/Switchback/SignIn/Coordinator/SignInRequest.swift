public import Foundation

/// What one sign-in should do: the user agent, the authorization options, and how the authenticator
/// returns. ``ProviderPreset/request(strategy:pattern:environment:links:authenticatorInstalled:options:)`` builds one for a known provider.
public struct SignInRequest: Sendable {
    /// The provider's name, kept in the journal.
    public var provider: String
    public var strategy: UserAgentStrategy
    public var options: AuthorizationOptions
    /// The WebView rewrite of authenticator links.
    public var rewrite: Rewrite?
    /// A return URL given to the provider (for example `app_callback_uri`); it only brings the app forward.
    public var appReturnURL: URL?
    /// The authenticator returns to an https page of the provider (pattern A).
    public var returnsThroughProviderPage = false
    public var withoutReturn: WithoutReturn
    public var gracePeriod: TimeInterval
    /// The sign-in fails with ``SwitchbackError/Code/timedOut`` when not finished by then.
    public var timeout: TimeInterval
    /// Custom schemes whose apps also claim an https universal link, tried first (see ``AppLinkForm``).
    public var appLinks: [String: URL] = [:]
    /// The app's universal link that its own page at the redirect URI forwards the authorization response
    /// to, query unchanged, by a button (``ProviderPreset/AppLinks/responseLink``): the app takes a response
    /// there as if it had arrived at the redirect URI.
    public var responseLink: URL?
    /// The provider ends with a plain redirect to the redirect URI, which this user agent loads as a page
    /// (``ProviderPreset/redirectsWithoutTap``): the sign-in needs ``responseLink`` or the companion's
    /// completion route, and is refused without either.
    public var needsResponsePage = false
    /// The authorization URL opens another app (a wallet), not a user agent (``SignInRoute/wallet(_:)``).
    var startsInApp = false

    public init(
        provider: String, strategy: UserAgentStrategy, options: AuthorizationOptions = AuthorizationOptions(),
        rewrite: Rewrite? = nil,
        appReturnURL: URL? = nil, withoutReturn: WithoutReturn = .wait, gracePeriod: TimeInterval = 2, timeout: TimeInterval = 600
    ) {
        self.provider = provider
        self.strategy = strategy
        self.options = options
        self.rewrite = rewrite
        self.appReturnURL = appReturnURL
        self.withoutReturn = withoutReturn
        self.gracePeriod = gracePeriod
        self.timeout = timeout
    }

    /// The authenticator rule, its environment, and the app URL rewritten links return to.
    public struct Rewrite: Sendable, Codable, Equatable {
        public var rule: AuthenticatorRule
        public var environment: AuthenticatorRule.Environment
        /// The app's custom-scheme URL (pattern B) or universal link (pattern C).
        public var returnTo: URL

        public init(rule: AuthenticatorRule, environment: AuthenticatorRule.Environment, returnTo: URL) {
            self.rule = rule
            self.environment = environment
            self.returnTo = returnTo
        }
    }

    /// The outcome of coming back from the authenticator without a return URL.
    public enum WithoutReturn: String, Sendable, Codable, CaseIterable {
        /// Keep waiting: the provider's page (still in the user agent) continues by itself.
        case wait
        /// Load the provider's saved resume page again (it reports the authenticator's answer), or wait
        /// when there is none.
        case reload
        /// Fail with ``SwitchbackError/Code/authenticatorDidNotReturn``.
        case fail
    }
}
