public import Foundation

/// Checks the app's Info.plist against a sign-in request before it runs, so a missing entry is a typed
/// problem at launch rather than a silent failure on a user's phone.
public struct SetupCheck: Sendable {
    /// `LSApplicationQueriesSchemes`: schemes `canOpenURL` may ask about.
    public var queriedSchemes: Set<String>
    /// Every `CFBundleURLSchemes` entry of `CFBundleURLTypes`.
    public var urlSchemes: Set<String>

    public init(queriedSchemes: [String], urlSchemes: [String]) {
        self.queriedSchemes = Set(queriedSchemes.map { $0.lowercased() })
        self.urlSchemes = Set(urlSchemes.map { $0.lowercased() })
    }

    /// Reads the two keys from an Info.plist dictionary (`Bundle.main.infoDictionary`).
    public init(infoDictionary: [String: Any]) {
        let queried = infoDictionary["LSApplicationQueriesSchemes"] as? [String] ?? []
        let types = infoDictionary["CFBundleURLTypes"] as? [[String: Any]] ?? []
        self.init(queriedSchemes: queried, urlSchemes: types.flatMap { $0["CFBundleURLSchemes"] as? [String] ?? [] })
    }

    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// The authenticator's scheme is not in `LSApplicationQueriesSchemes`: the app cannot tell whether it is installed.
        case authenticatorSchemeNotQueried(String)
        /// A custom scheme the sign-in returns to is not registered in `CFBundleURLTypes`.
        case schemeNotRegistered(String)
        /// The sign-in returns by a universal link: the associated-domains entitlement must list `applinks:<host>`
        /// (the entitlement cannot be read at run time, so this is a reminder).
        case associatedDomainNeeded(String)
        /// The sign-in uses an authentication session but its redirect URI is http, which no session catches
        /// (``AuthenticationSessionCallback``): the coordinator refuses it.
        case callbackNeverCaught(URL)
        /// The Keychain answered `errSecMissingEntitlement` (-34018) for this access group: the
        /// keychain-access-groups entitlement must list it (nil: the app's default group).
        case keychainEntitlementMissing(String?)

        public var description: String {
            switch self {
            case .authenticatorSchemeNotQueried(let scheme): "add \(scheme) to LSApplicationQueriesSchemes"
            case .schemeNotRegistered(let scheme): "register \(scheme) in CFBundleURLTypes"
            case .associatedDomainNeeded(let host): "the associated-domains entitlement needs applinks:\(host)"
            case .callbackNeverCaught(let url):
                "an authentication session never catches \(url.scheme ?? "this") redirect URI \(url); use a custom scheme or https"
            case .keychainEntitlementMissing(let group): "the keychain-access-groups entitlement must list \(group ?? "the app's access group")"
            }
        }
    }

    /// The problems `request` would meet, given the preset's authenticator and the app's redirect URI.
    public func problems(for request: SignInRequest, preset: ProviderPreset, redirectURI: URL) -> [Problem] {
        var problems: [Problem] = []
        // The production app's scheme, and the scheme of the environment this request hands off in (the
        // staging or QA app): an app built for production need not declare the test apps' schemes.
        let environments: Set<AuthenticatorRule.Environment> = [.production, request.rewrite?.environment ?? .production]
        let schemes = Set(environments.compactMap { preset.authenticator?.schemes[$0] })
        for scheme in schemes.sorted() where !queriedSchemes.contains(scheme) {
            problems.append(.authenticatorSchemeNotQueried(scheme))
        }
        // With a response link, the redirect URI is a web page (the app's, on another host) and the link is the app's.
        let received = request.responseLink ?? redirectURI
        for url in [received, request.rewrite?.returnTo, request.appReturnURL].compactMap({ $0 }) {
            guard let scheme = url.scheme?.lowercased() else { continue }
            if scheme == "https", let host = url.host?.lowercased() {
                if !problems.contains(.associatedDomainNeeded(host)) { problems.append(.associatedDomainNeeded(host)) }
            } else if scheme != "http", !urlSchemes.contains(scheme), !problems.contains(.schemeNotRegistered(scheme)) {
                problems.append(.schemeNotRegistered(scheme))
            }
        }
        if request.strategy.hasCallbackHook, AuthenticationSessionCallback(redirectURI: redirectURI) == nil {
            problems.append(.callbackNeverCaught(redirectURI))
        }
        return problems
    }

    /// The problem a Keychain probe's failure reveals (`KeychainCredentialStore.probe()`), if it is one the
    /// app's setup can fix: a missing keychain-access-groups entitlement. A locked device is not a setup problem.
    public static func keychainProblem(_ error: any Error, accessGroup: String?) -> Problem? {
        guard let error = error as? SwitchbackError, error.code == .entitlementMissing else { return nil }
        return .keychainEntitlementMissing(accessGroup)
    }
}
