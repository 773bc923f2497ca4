public import Foundation

/// The WebView rewrite: an authenticator deep link whose return URLs point at the
/// provider is rewritten so the authenticator returns to the app instead, and the provider's URLs are
/// kept to be loaded again, in the same WebView, when the app comes back.
///
/// Only the return parameters change; every other parameter, its spelling, order and encoding, goes
/// through untouched. The saved URLs must be https pages on the provider's hosts (http only for a
/// provider on loopback, such as the emulator): a link injected with a
/// foreign `successurl` is refused, so the app never loads a page an attacker chose.
public struct HandOffRewrite: Sendable, Equatable, Codable {
    /// The deep link to open instead of the page's.
    public let link: URL
    /// The provider's page to load after approval.
    public let successURL: URL
    /// The provider's page to load after a decline, when the link had one.
    public let failureURL: URL?

    /// The query parameters added to `returnTo` so a return can be matched to its flow and outcome.
    public static let flowParameter = "switchback_flow"
    public static let outcomeParameter = "switchback_outcome"

    /// Rewrites `link` for `environment`: the scheme becomes that environment's authenticator (a staging
    /// page emitting the production scheme is corrected), and each return parameter becomes `returnTo`
    /// carrying `flowID` and the outcome.
    public init(_ link: URL, rule: AuthenticatorRule, environment: AuthenticatorRule.Environment, returnTo: URL, flowID: String) throws {
        guard rule.launches(link), let scheme = rule.schemes[environment] else {
            throw SwitchbackError(.handOffLinkInvalid, "the link does not open this provider's authenticator in \(environment)")
        }
        let raw = link.absoluteString
        guard let colon = raw.firstIndex(of: ":") else { throw SwitchbackError(.handOffLinkInvalid, "the link has no scheme") }
        var rest = raw[raw.index(after: colon)...]
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        guard let question = rest.firstIndex(of: "?") else {
            throw SwitchbackError(.handOffLinkInvalid, "the link carries no return URL")
        }
        let path = rest[..<question]
        var success: URL?
        var failure: URL?
        var items: [String] = []
        for item in rest[rest.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = (String(parts[0]).removingPercentEncoding ?? String(parts[0])).lowercased()
            let isSuccess = rule.successParameters.contains(name)
            guard isSuccess || rule.failureParameters.contains(name) else {
                items.append(String(item))
                continue
            }
            let original = try Self.providerURL(parts.count == 2 ? String(parts[1]) : "", hosts: rule.providerHosts)
            if isSuccess { success = original } else { failure = original }
            let back = Self.returnURL(returnTo, flowID: flowID, outcome: isSuccess ? "success" : "failure")
            items.append(String(parts[0]) + "=" + FormEncoding.escape(back))
        }
        guard let success else { throw SwitchbackError(.handOffLinkInvalid, "the link carries no success return URL") }
        var rewritten = scheme + ":" + path + "?" + items.joined(separator: "&")
        if let fragment { rewritten += "#" + fragment }
        guard let rewrittenURL = URL(string: rewritten) else {
            throw SwitchbackError(.handOffLinkInvalid, "the rewritten link is not a valid URL")
        }
        self.link = rewrittenURL
        self.successURL = success
        self.failureURL = failure
    }

    /// Decodes a return parameter's value (once, or twice when the provider encoded it twice) and checks
    /// it is an https URL on one of `hosts` (http only on a loopback host).
    static func providerURL(_ encoded: String, hosts: Set<String>) throws -> URL {
        var value = encoded.removingPercentEncoding ?? encoded
        if !value.contains("://"), let again = value.removingPercentEncoding, again.contains("://") { value = again }
        guard let url = URL(string: value), let host = url.host?.lowercased(), hosts.contains(host), url.user == nil, url.password == nil,
            EndpointSecurity.isAcceptable(url)
        else {
            throw SwitchbackError(.foreignResumeURL, "a return URL in the authenticator link is not an https page of the provider")
        }
        return url
    }

    static func returnURL(_ base: URL, flowID: String, outcome: String) -> String {
        let separator = base.query == nil ? "?" : "&"
        return base.absoluteString + separator + FormEncoding.encode([(flowParameter, flowID), (outcomeParameter, outcome)])
    }

    /// What an incoming URL means for the flow `flowID` that returns to `returnTo`.
    public enum Return: Sendable, Equatable {
        /// The authenticator approved: load ``HandOffRewrite/successURL``.
        case success
        /// The authenticator declined: load ``HandOffRewrite/failureURL``.
        case failure
        /// The app's return URL, but for another flow (a stale or forged return): ignore it.
        case otherFlow
        /// Not a return from the authenticator at all.
        case unrelated
    }

    /// Matches `url` against `returnTo` exactly (as redirect URIs are matched) and reads flow and outcome.
    public static func match(_ url: URL, returnTo: URL, flowID: String) -> Return {
        guard RedirectURIMatcher.matches(url, registered: returnTo), let incoming = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return .unrelated
        }
        let items = incoming.queryItems ?? []
        guard let flow = items.first(where: { $0.name == flowParameter })?.value else { return .unrelated }
        guard ConstantTime.equals(flow, flowID) else { return .otherFlow }
        switch items.first(where: { $0.name == outcomeParameter })?.value {
        case "success": return .success
        case "failure": return .failure
        default: return .unrelated
        }
    }
}
