import Foundation
import Crypto
@_spi(SwitchbackInternals) import Switchback

/// The UAE Pass behaviours integrators meet, each switchable (`providers.md`).
public struct UAEPassOptions: Sendable, Equatable {
    public enum Environment: String, Sendable {
        case production
        case staging
    }

    /// Where the failure URL leads when the user declines in the authenticator.
    public enum Decline: String, Sendable {
        /// `error=access_denied` to the client.
        case accessDenied = "access_denied"
        /// `error=cancelled` to the client (not an RFC 6749 code; real pages send it).
        case cancelled
        /// A page that spins forever: the flow never completes.
        case never
    }

    public var environment: Environment = .production
    /// The staging page emits the production scheme `uaepass://` (staging pages that open the production app, which integrators meet).
    public var stagingEmitsProductionScheme = false
    /// `successURL`/`failureURL` instead of `successurl`/`failureurl`.
    public var camelCaseParameters = false
    /// The return URLs are percent-encoded twice.
    public var doubleEncoded = false
    /// Parameters follow the return URLs in the deep link.
    public var trailingParameters = false
    /// `closeondone=true` is in the deep link.
    public var closeOnDone = true
    public var decline: Decline = .accessDenied
    /// A tampered page: `successurl` points at a host that is not the provider's.
    public var foreignSuccessURL = false
    /// The documented token response carries no `id_token` (UAE Pass "Obtaining the access token"): the
    /// identity comes from userinfo. `id-token` switches one on, as an OpenID provider would.
    public var issuesIDToken = false
    /// UAE Pass publishes no discovery document; `discovery` serves one anyway.
    public var servesDiscovery = false
    /// The token endpoint authenticates the client with HTTP Basic (a client secret); `public-client`
    /// lets a public client redeem, which the real provider does not document.
    public var requiresClientSecret = true
    /// Seconds the login cookie lives (`Max-Age`), nil for a session cookie (`session-cookie`). Whether
    /// the system browser can return through Safari depends on it: an authentication session shares only
    /// persistent cookies with Safari. UAE Pass does not document it; persistent is assumed.
    public var loginCookieLifetime: Int? = 600
    /// The account's `userType` in userinfo: `SOP1` (basic, unverified), `SOP2` (verified) or `SOP3`
    /// (verified in person) (UAE Pass "User Account Types").
    public var accountType = "SOP3"

    public init() {}

    /// The authenticator app's scheme the page emits.
    public var scheme: String {
        environment == .staging && !stagingEmitsProductionScheme ? "uaepassstg" : "uaepass"
    }

    /// The variant names `switchback emulator --variant` takes.
    public enum Variant: String, Sendable, CaseIterable {
        case staging
        /// Staging that emits the production scheme.
        case stagingBug = "staging-bug"
        case camelCase = "successURL"
        case doubleEncoded = "double-encoded"
        case trailingParameters = "trailing-parameters"
        case noCloseOnDone = "no-closeondone"
        case declineCancelled = "decline-cancelled"
        case declineNever = "decline-never"
        case foreignSuccessURL = "foreign-successurl"
        case idToken = "id-token"
        case discovery
        case publicClient = "public-client"
        case basicAccount = "sop1"
        case verifiedAccount = "sop2"
        case sessionCookie = "session-cookie"
    }

    public mutating func apply(_ variant: Variant) {
        switch variant {
        case .staging: environment = .staging
        case .stagingBug:
            environment = .staging
            stagingEmitsProductionScheme = true
        case .camelCase: camelCaseParameters = true
        case .doubleEncoded: doubleEncoded = true
        case .trailingParameters: trailingParameters = true
        case .noCloseOnDone: closeOnDone = false
        case .declineCancelled: decline = .cancelled
        case .declineNever: decline = .never
        case .foreignSuccessURL: foreignSuccessURL = true
        case .idToken: issuesIDToken = true
        case .discovery: servesDiscovery = true
        case .publicClient: requiresClientSecret = false
        case .basicAccount: accountType = "SOP1"
        case .verifiedAccount: accountType = "SOP2"
        case .sessionCookie: loginCookieLifetime = nil
        }
    }

    /// The deep link for transaction `reference`, with the provider's https resume and cancel URLs.
    func deepLink(reference: String, successURL: String, failureURL: String) -> String {
        func value(_ url: String) -> String {
            let once = FormEncoding.escape(url)
            return doubleEncoded ? FormEncoding.escape(once) : once
        }
        var link = "\(scheme)://digitalid?txn=\(reference)"
        let success = foreignSuccessURL ? "https://attacker.example/collect?txn=\(reference)" : successURL
        link += "&\(camelCaseParameters ? "successURL" : "successurl")=\(value(success))"
        link += "&\(camelCaseParameters ? "failureURL" : "failureurl")=\(value(failureURL))"
        if closeOnDone { link += "&closeondone=true" }
        if trailingParameters { link += "&lang=en&browserpackage=com.android.chrome&flow=mobileondevice" }
        return link
    }
}
