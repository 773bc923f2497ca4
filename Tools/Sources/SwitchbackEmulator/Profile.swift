public import Foundation
import Crypto
@_spi(SwitchbackInternals) public import Switchback

/// The provider an emulator plays: how the user authenticates (a password page, or a hand-off to an
/// authenticator app), how the authorization response leaves, and which requests it refuses. Profiles
/// combine with every ``Fault``.
public struct Profile: Sendable {
    /// The name `switchback emulator --profile` takes.
    public var name: String
    /// One line on what the profile reproduces.
    public var summary: String
    /// The authenticator hand-off; nil signs in with a username and password on the provider's page.
    public var handOff: HandOff?
    /// Response modes accepted; the first is used when a request names none.
    public var responseModes: [String]
    /// Response types accepted: `code`, and `id_token token` for a provider from the implicit era.
    public var responseTypes: [String]
    /// Redirect URIs must be https and carry no query (on top of exact matching, which every profile does).
    public var strictRedirects: Bool
    /// Refuses user agents that identify as embedded WebViews, as MitID and Singpass do.
    public var refusesEmbeddedWebViews: Bool
    /// How the hand-off page sends the user agent to the authenticator's deep link.
    public var handOffDelivery: HandOffDelivery
    /// Whether the authorization response is a redirect or a page with a link the user taps: a
    /// universal link reached by redirects alone would not open the app.
    public var returnPage: ReturnPage
    /// FAPI 2.0 requirements: authorization requests only by PAR, clients only by `private_key_jwt`,
    /// tokens only DPoP-bound.
    public var fapi2: Bool
    /// Singpass's own request rules on top of FAPI 2.0 (Singpass developer docs, "1. The authorization
    /// request", "Demonstrating Proof of Possession (DPoP)", "JSON Web Key Sets"; GovTech's MockPass checks
    /// the same): `state` and `nonce` of 30 to 255 characters of `A-Z a-z 0-9 / + _ - = .`; a documented
    /// `authentication_context_type` (Login apps must send one) with a valid message; DPoP proofs with `exp`;
    /// a client whose JWKS has a `use: enc` key, since every ID token is encrypted.
    public var singpassRequests: Bool
    /// Seconds a code lives, when the profile sets it (ID.me: 5 minutes; a contract's term wins); else the
    /// configuration's.
    public var codeLifetime: TimeInterval?
    /// Seconds an access token lives, when the profile sets it (ID.me: 5 minutes); else the configuration's.
    public var accessTokenLifetime: TimeInterval?
    /// An access token works once at userinfo and is revoked by that use; a second use is refused
    /// (ID.me, "Token expiration": access tokens are single use, a reused one is denied and revoked).
    public var singleUseAccessTokens: Bool
    /// The provider's documented behaviour, term by term (``ProviderContract``): every term is enforced
    /// here, and wins over the profile's own setting of the same thing.
    public var contract: ProviderContract?

    public init(
        name: String, summary: String, handOff: HandOff? = nil, responseModes: [String] = ["query", "fragment", "form_post"],
        responseTypes: [String] = ["code"],
        strictRedirects: Bool = false, refusesEmbeddedWebViews: Bool = false, handOffDelivery: HandOffDelivery = .script,
        returnPage: ReturnPage = .redirect, fapi2: Bool = false, singpassRequests: Bool = false, codeLifetime: TimeInterval? = nil,
        accessTokenLifetime: TimeInterval? = nil, singleUseAccessTokens: Bool = false, contract: ProviderContract? = nil
    ) {
        self.contract = contract
        self.singleUseAccessTokens = singleUseAccessTokens
        self.singpassRequests = singpassRequests
        self.accessTokenLifetime = accessTokenLifetime
        self.name = name
        self.summary = summary
        self.handOff = handOff
        self.responseModes = responseModes
        self.responseTypes = responseTypes
        self.strictRedirects = strictRedirects
        self.refusesEmbeddedWebViews = refusesEmbeddedWebViews
        self.handOffDelivery = handOffDelivery
        self.returnPage = returnPage
        self.fapi2 = fapi2
        self.codeLifetime = codeLifetime
    }

    /// How the authorization response reaches the redirect URI.
    public enum ReturnPage: Sendable, Equatable {
        /// A `302` (or the form_post page), as most providers send it.
        case redirect
        /// Always a page with a link the user taps: MitID brokers put a button on the last page because
        /// the final redirect would not trigger the app switch (Signaturgruppen's MitID iOS guidance).
        case tapPage
        /// A tap page only when the request carries `parameter=value`, a redirect otherwise: Singpass
        /// shows its interstitial for `redirect_uri_https_type=app_claimed_https` and redirects for the
        /// default `standard_https` (Singpass "1. The Authorization Request").
        case tapPageWhen(parameter: String, value: String)

        func tapToReturn(_ parameters: [String: String]) -> Bool {
            switch self {
            case .redirect: false
            case .tapPage: true
            case .tapPageWhen(let parameter, let value): parameters[parameter] == value
            }
        }
    }

    /// How a hand-off reaches the deep link. The page always carries a link the user can tap.
    public enum HandOffDelivery: String, Sendable, CaseIterable {
        /// Page script sets `location.href`, as real providers do; a user agent without script stays on the page.
        case script
        /// Page script plus `<meta http-equiv="refresh">`, which user agents without script follow.
        case metaRefresh = "handoff-meta-refresh"
        /// A `302` straight to the deep link, without a page.
        case redirect = "handoff-302"
        /// No navigation by the page: the user taps "Open …" (MitID's web client shows an "Open MitID
        /// app" button; a universal link opens its app only from a tap).
        case tap = "handoff-tap"
    }

    /// How the provider's page sends the user to the authenticator app.
    public enum HandOff: Sendable {
        /// UAE-Pass-like: the page navigates to `<scheme>://digitalid?…&successurl=…&failureurl=…`, both
        /// https pages on the provider that work only with the original session cookie (pattern A).
        case uaePass(UAEPassOptions)
        /// Norwegian-BankID-like: the page opens the BankID app (`bankid-no://authenticate?txn=…`), which
        /// returns to the `app_callback_uri` when the request carried one — accepted only as https and
        /// only with a permission token registered upfront (`POST /permissions`). The sign-in then
        /// continues only in the browser session that started it.
        case bankIDNorway
        /// MitID-via-broker-like: the MitID app returns to the app's universal link (allow-listed for the
        /// client) carrying no parameters; the broker's page then finishes in the same browser and sends the
        /// code to the https redirect URI (a second hop). The broker's syntax for that link: Idura's
        /// `login_hint=appswitch:ios appswitch:resumeUrl:<url>`, or Signaturgruppen's JSON `idp_params`
        /// (`mitid.enable_app_switch`, `app_switch_os`, `app_switch_url`); each ignores the other's.
        case mitID(MitIDBroker)
        /// Swedish-BankID-via-broker-like: the broker's page opens `bankid:///?autostarttoken=…&redirect=…`
        /// (or the https app link form), shows the animated QR code for another device, and polls collect,
        /// whose hintCode moves from `outstandingTransaction` to `userSign` once the app has opened the
        /// order, and ends `failed` with `userCancel` or `expiredTransaction`; `redirect` is the client's
        /// allow-listed return URL given as `login_hint=appswitch:resumeUrl:<url>` (Idura's form), or
        /// the literal `null`.
        case bankIDSweden(BankIDSwedenOptions)
        /// Singpass-like: the page opens `singpass://auth?txn=…&app_launch_url=…` (registered for the
        /// client), polls, and ends on a tap-to-return page.
        case singpass
    }

    /// The authorization parameter naming where the authenticator app returns, for this hand-off.
    var appReturnParameter: String? {
        switch handOff {
        case .bankIDNorway: "app_callback_uri"
        case .singpass: "app_launch_url"
        case .uaePass, .mitID, .bankIDSweden, nil: nil
        }
    }
}

extension Profile {
    /// Seconds a code lives: the contract's term, the profile's, else `configured`.
    func codeLifetime(configured: TimeInterval) -> TimeInterval {
        contract?.seconds(.codeLifetime) ?? codeLifetime ?? configured
    }

    /// Seconds a pushed request lives: the contract's term, else 90 (RFC 9126 suggests a short lifetime).
    var pushedRequestLifetime: TimeInterval { contract?.seconds(.pushedRequestLifetime) ?? 90 }

    /// Whether tokens come with a refresh token and the `refresh_token` grant is taken: not where the
    /// contract says the provider offers none.
    var issuesRefreshTokens: Bool { contract?.flag(.refreshTokens) ?? true }

    /// Seconds an access token lives: the contract's term, else the profile's (nil: the configuration's).
    var effectiveAccessTokenLifetime: TimeInterval? { contract?.seconds(.accessTokenLifetime) ?? accessTokenLifetime }

    /// Whether an access token answers once: the contract's term, else the profile's.
    var spendsAccessTokens: Bool { contract?.flag(.singleUseAccessTokens) ?? singleUseAccessTokens }

    /// The response modes taken: the contract's term, else the profile's.
    var acceptedResponseModes: [String] { contract?.list(.responseModes) ?? responseModes }

    /// The error for a request without the DPoP proof it needs: the contract's, else RFC 9449's `invalid_dpop_proof`.
    var missingDPoPError: String { contract?.text(.missingDPoPError) ?? "invalid_dpop_proof" }

    /// The error for a DPoP proof that is invalid: the contract's, else RFC 9449's `invalid_dpop_proof`.
    var invalidDPoPError: String { contract?.text(.invalidDPoPError) ?? "invalid_dpop_proof" }

    /// What ends the sign-in after the authenticator returned: the contract's term (a page of the provider's
    /// own, or a plain redirect), else the profile's.
    var effectiveReturnPage: ReturnPage {
        switch contract?.flag(.providerReturnPage) {
        case true?: .tapPage
        case false?: .redirect
        case nil: returnPage
        }
    }
}
