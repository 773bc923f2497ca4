public import Foundation

/// What is known about one provider's hand-off, as data: its authenticator, the user agents that work
/// with it and those that cannot (and why), how it takes an app return URL, and what to ask for when the
/// authenticator is not installed. ``request(strategy:pattern:environment:links:authenticatorInstalled:options:)``
/// turns it into a ``SignInRequest``, or refuses a combination that cannot work with a typed error.
///
/// ```swift
/// let request = try await ProviderPreset.uaePass.request(strategy: .webView, environment: .staging, links: links)
/// let credential = try await coordinator.signIn(request)
/// ```
public struct ProviderPreset: Sendable {
    public var name: String
    /// The authenticator the provider's pages hand off to, for the WebView rewrite; nil when the pages
    /// open it themselves and no rewrite is needed or possible.
    public var authenticator: AuthenticatorRule?
    /// User agents in order of preference: without an explicit choice the first usable one is taken.
    public var strategies: [UserAgentStrategy]
    /// Combinations that cannot work, with the reason given in the refusal.
    public var unusable: [Unusable]
    /// How the provider takes a URL to return to the app, when it does.
    public var appReturn: AppReturn?
    /// The acr that asks for the authenticator app, and the one to ask for when it is not installed.
    public var authenticatorACR: String?
    public var withoutAuthenticatorACR: String?
    /// Asks the app's backend for a permission to use `appReturnURL` (Norwegian BankID's `/permissions`)
    /// and returns the authorization parameters that carry it.
    public var permission: (@Sendable (_ appReturnURL: URL) async throws -> [(String, String)])?
    public var withoutReturn: SignInRequest.WithoutReturn
    /// Custom schemes of the provider's apps that also have an https universal-link form, tried first.
    public var appLinks: [String: URL]
    /// Authorization parameters every request to this provider carries (Singpass's
    /// `redirect_uri_https_type=app_claimed_https`, which gets the tap page a universal link needs).
    public var authorizationParameters: [(String, String)]
    /// The scopes the provider documents for a sign-in, sent unless the request names others (nil: the
    /// client configuration's).
    public var scopes: [String]?
    /// The provider's last step is a plain redirect to the redirect URI, with no page of its own to tap.
    /// An authentication session catches it; a Safari view loads an https one as a page, and iOS opens a
    /// universal link only from a user's tap, so the app needs its own page there with a button
    /// (``AppLinks/responseLink``), or the companion's completion route. True where the contract says
    /// so (its `providerReturnPage` term is false); set it for a provider of your own.
    public var redirectsWithoutTap: Bool {
        get { redirectsWithoutTapSetting ?? (contract?.flag(.providerReturnPage) == false) }
        set { redirectsWithoutTapSetting = newValue }
    }
    private var redirectsWithoutTapSetting: Bool?

    public init(
        name: String, authenticator: AuthenticatorRule? = nil, strategies: [UserAgentStrategy], unusable: [Unusable] = [],
        appReturn: AppReturn? = nil,
        authenticatorACR: String? = nil, withoutAuthenticatorACR: String? = nil,
        permission: (@Sendable (_ appReturnURL: URL) async throws -> [(String, String)])? = nil, withoutReturn: SignInRequest.WithoutReturn = .wait,
        appLinks: [String: URL] = [:], authorizationParameters: [(String, String)] = [], scopes: [String]? = nil
    ) {
        self.scopes = scopes
        self.appLinks = appLinks
        self.authorizationParameters = authorizationParameters
        self.name = name
        self.authenticator = authenticator
        self.strategies = strategies
        self.unusable = unusable
        self.appReturn = appReturn
        self.authenticatorACR = authenticatorACR
        self.withoutAuthenticatorACR = withoutAuthenticatorACR
        self.permission = permission
        self.withoutReturn = withoutReturn
    }

    /// A user agent that cannot work with the provider (in one environment, or in all when nil).
    public struct Unusable: Sendable {
        public var strategy: UserAgentStrategy
        public var environment: AuthenticatorRule.Environment?
        public var reason: String

        public init(_ strategy: UserAgentStrategy, in environment: AuthenticatorRule.Environment? = nil, because reason: String) {
            self.strategy = strategy
            self.environment = environment
            self.reason = reason
        }
    }

    /// How the provider is told where the authenticator returns to.
    public struct AppReturn: Sendable {
        public enum Carrier: Sendable {
            /// An authorization parameter (`app_callback_uri`, `app_launch_url`).
            case parameter(String)
            /// Words added to `login_hint`, the URL after `prefix` (Idura's `appswitch:resumeUrl:`).
            case loginHint(words: [String], prefix: String)
            /// An authorization parameter whose value `value` makes from the URL (Signaturgruppen's JSON
            /// `idp_params`).
            case parameterValue(String, value: @Sendable (URL) -> String)
        }

        public var carrier: Carrier
        /// The return patterns the provider accepts for it.
        public var patterns: [ReturnPattern]

        public init(_ carrier: Carrier, patterns: [ReturnPattern]) {
            self.carrier = carrier
            self.patterns = patterns
        }
    }

    /// The app's own return URLs.
    public struct AppLinks: Sendable {
        /// A custom-scheme URL the app registered (pattern B), such as `com.example.app:/handoff`.
        public var scheme: URL?
        /// A universal link on the app's associated domain (pattern C).
        public var universalLink: URL?
        /// The universal link the app's own page at the redirect URI opens by a button, carrying the
        /// authorization response's query unchanged, on a host other than the redirect URI's: how a Safari
        /// view returns from a provider that ends with a plain redirect (``redirectsWithoutTap``).
        public var responseLink: URL?

        public init(scheme: URL? = nil, universalLink: URL? = nil, responseLink: URL? = nil) {
            self.scheme = scheme
            self.universalLink = universalLink
            self.responseLink = responseLink
        }

        func url(for pattern: ReturnPattern) -> URL? {
            switch pattern {
            case .appScheme: scheme
            case .universalLink: universalLink
            case .providerPage: nil
            }
        }
    }

    /// What the provider documents (``ProviderContract``), when this preset has a contract.
    public var contract: ProviderContract? { ProviderContract.of(name) }

    /// Whether the provider issues refresh tokens: not where its contract says it does not (Singpass, UAE
    /// Pass). Without one a credential cannot be refreshed (``SwitchbackError/Code/noRefreshToken``): the
    /// user signs in again when the access token expires.
    public var issuesRefreshTokens: Bool { contract?.flag(.refreshTokens) ?? true }

    /// The user agents that can work in `environment`, in order of preference.
    public func usableStrategies(in environment: AuthenticatorRule.Environment) -> [UserAgentStrategy] {
        strategies.filter { refusal(of: $0, in: environment) == nil }
    }

    /// The return patterns `strategy` can use: the WebView rewrite returns to the app (B or C); other user
    /// agents use what the provider accepts, or the provider's own page (A).
    public func returnPatterns(for strategy: UserAgentStrategy) -> [ReturnPattern] {
        if strategy == .webView, authenticator != nil { return [.appScheme, .universalLink] }
        return (appReturn?.patterns ?? []) + [.providerPage]
    }

    private func refusal(of strategy: UserAgentStrategy, in environment: AuthenticatorRule.Environment) -> String? {
        if let unusable = unusable.first(where: { $0.strategy == strategy && ($0.environment == nil || $0.environment == environment) }) {
            return unusable.reason
        }
        return strategies.contains(strategy) ? nil : "\(name) is not set up for \(strategy)"
    }

    /// The sign-in request for `strategy` (the first usable one when nil) and `pattern` (the first the
    /// app has a link for when nil), or ``SwitchbackError/Code/strategyNotSupported`` naming why not.
    public func request(
        strategy: UserAgentStrategy? = nil, pattern: ReturnPattern? = nil, environment: AuthenticatorRule.Environment = .production,
        links: AppLinks = AppLinks(), authenticatorInstalled: Bool = true, options: AuthorizationOptions = AuthorizationOptions()
    ) async throws -> SignInRequest {
        guard let strategy = strategy ?? usableStrategies(in: environment).first else {
            throw SwitchbackError(.strategyNotSupported, "no user agent works with \(name) in \(environment)")
        }
        if let reason = refusal(of: strategy, in: environment) {
            throw SwitchbackError(.strategyNotSupported, "\(strategy) cannot be used with \(name) in \(environment): \(reason)")
        }
        let allowed = returnPatterns(for: strategy)
        guard let pattern = pattern ?? allowed.first(where: { $0 == .providerPage || links.url(for: $0) != nil }) else {
            throw SwitchbackError(.strategyNotSupported, "\(strategy) with \(name) returns to the app, but no app link was given")
        }
        guard allowed.contains(pattern) else {
            throw SwitchbackError(
                .strategyNotSupported,
                "\(name) with \(strategy) cannot return by \(pattern); it can by \(allowed.map(\.rawValue).joined(separator: ", "))")
        }
        let returnURL = links.url(for: pattern)
        if pattern != .providerPage, returnURL == nil {
            throw SwitchbackError(
                .strategyNotSupported, "returning by \(pattern) needs the app's \(pattern == .appScheme ? "scheme URL" : "universal link")")
        }
        var options = options
        if options.scopes == nil { options.scopes = scopes }
        if let allowed = contract?.list(.allowedScopes), let asked = options.scopes {
            // The provider refuses the whole request for one scope it does not allow (invalid_scope).
            let refused = asked.filter { !allowed.contains($0) }
            guard refused.isEmpty, asked.contains("openid") else {
                throw SwitchbackError(
                    .invalidConfiguration,
                    "\(name) allows the scopes \(allowed.joined(separator: " ")) (openid required); \(refused.isEmpty ? "openid is missing" : "not " + refused.joined(separator: " "))"
                )
            }
        }
        for (name, value) in authorizationParameters where !options.extraParameters.contains(where: { $0.0 == name }) {
            options.extraParameters.append((name, value))
        }
        if let acr = authenticatorInstalled ? authenticatorACR : withoutAuthenticatorACR, !options.acrValues.contains(acr) {
            options.acrValues.append(acr)
        }
        var request = SignInRequest(provider: name, strategy: strategy, options: options, withoutReturn: withoutReturn)
        request.appLinks = appLinks
        request.responseLink = links.responseLink
        request.needsResponsePage = redirectsWithoutTap && strategy == .safariView
        request.returnsThroughProviderPage = authenticator != nil && pattern == .providerPage
        if strategy == .webView, let authenticator, let returnURL {
            request.rewrite = SignInFlow.Plan.Rewrite(rule: authenticator, environment: environment, returnTo: returnURL)
        } else if let returnURL, let appReturn {
            request.appReturnURL = returnURL
            switch appReturn.carrier {
            case .parameter(let name):
                request.options.extraParameters.append((name, returnURL.absoluteString))
            case .parameterValue(let name, let value):
                request.options.extraParameters.append((name, value(returnURL)))
            case .loginHint(let words, let prefix):
                let hint = (words + [prefix + returnURL.absoluteString]).joined(separator: " ")
                request.options.loginHint = [request.options.loginHint, hint].compactMap { $0 }.joined(separator: " ")
            }
            if let permission {
                request.options.extraParameters += try await permission(returnURL)
            }
        }
        return request
    }

    /// The same preset for a provider served from other hosts (a staging deployment, or the emulator on
    /// loopback): the authenticator's return URLs must then be on `hosts`.
    public func serving(from hosts: Set<String>) -> ProviderPreset {
        var copy = self
        copy.authenticator?.providerHosts = Set(hosts.map { $0.lowercased() })
        return copy
    }
}
