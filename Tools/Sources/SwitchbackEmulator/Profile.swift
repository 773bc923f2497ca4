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
    /// Seconds a code lives, when the profile sets it (Singpass: 60 seconds); else the configuration's.
    public var codeLifetime: TimeInterval?
    /// Seconds an access token lives, when the profile sets it (ID.me: 5 minutes); else the configuration's.
    public var accessTokenLifetime: TimeInterval?
    /// An access token works once at userinfo and is revoked by that use; a second use is refused
    /// (ID.me, "Token expiration": access tokens are single use, a reused one is denied and revoked).
    public var singleUseAccessTokens: Bool

    public init(
        name: String, summary: String, handOff: HandOff? = nil, responseModes: [String] = ["query", "fragment", "form_post"],
        responseTypes: [String] = ["code"],
        strictRedirects: Bool = false, refusesEmbeddedWebViews: Bool = false, handOffDelivery: HandOffDelivery = .script,
        returnPage: ReturnPage = .redirect, fapi2: Bool = false, singpassRequests: Bool = false, codeLifetime: TimeInterval? = nil,
        accessTokenLifetime: TimeInterval? = nil, singleUseAccessTokens: Bool = false
    ) {
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

    /// A well-behaved provider: password page, code + PKCE S256, every response mode.
    public static let generic = Profile(name: "generic", summary: "a well-behaved OpenID provider (code + PKCE S256, query, fragment and form_post)")

    /// Sign in with Apple's shape: responses only by form_post.
    public static let appleFormPost = Profile(
        name: "apple-form-post", summary: "responses only by form_post, as Sign in with Apple sends them", responseModes: ["form_post"]
    )

    /// Providers from the implicit-flow era: responses in the fragment unless asked otherwise, and the
    /// tokens themselves (`response_type=id_token token`) to a client that asks for them.
    public static let legacyImplicit = Profile(
        name: "legacy-implicit", summary: "responses in the URL fragment by default; also response_type=id_token token (tokens in the fragment)",
        responseModes: ["fragment", "query", "form_post"], responseTypes: ["code", "id_token token"]
    )

    /// Strict redirect matching: https only, no query, exact (a trailing slash is another URI).
    public static let strictRedirect = Profile(
        name: "strict-redirects", summary: "redirect URIs must be registered exactly, https, without a query", strictRedirects: true
    )

    /// UAE Pass with the given options (production by default), as its documentation describes it: no
    /// discovery document (the endpoints are also served under `/idshub/`), client_secret_basic at the
    /// token endpoint, no ID token in the token response, the identity (`uuid`, `userType`, `acr`)
    /// from userinfo.
    public static func uaePass(_ options: UAEPassOptions = UAEPassOptions()) -> Profile {
        Profile(
            name: "uaepass",
            summary:
                "UAE-Pass-like WebView rewrite provider: the page navigates to uaepass://digitalid (uaepassstg:// in staging) with https successurl/failureurl on the provider; no discovery, client_secret_basic, no ID token (identity from userinfo)",
            handOff: .uaePass(options)
        )
    }

    /// The UAE Pass options, when this is the uaepass profile.
    var uaePassOptions: UAEPassOptions? {
        if case .uaePass(let options) = handOff { options } else { nil }
    }

    /// Norwegian BankID with biometrics.
    public static let bankIDNorway = Profile(
        name: "bankid-no",
        summary: "Norwegian-BankID-like: code + PKCE S256, BankID app hand-off, https app_callback_uri only with an upfront permission token",
        handOff: .bankIDNorway
    )

    /// MitID through a broker: the MitID web client opens the MitID app by a universal link on
    /// `appswitch.mitid.nets.eu` behind the user's tap on "Open MitID app" (Idura's app-switch guide).
    /// The broker is Signaturgruppen (`idp_params`, a tap-to-return page) unless the variant `idura` asks
    /// for Idura's shape (`login_hint`, and a plain redirect that the authentication session catches).
    public static let mitID = Profile(
        name: "mitid",
        summary:
            "MitID-via-broker-like: the user taps \"Open MitID app\" (a universal link), the app switches back by a parameterless universal link (Signaturgruppen's idp_params; variant idura: login_hint), then the broker's code on a tap-to-return page (idura: a redirect); no embedded WebViews",
        handOff: .mitID(.signaturgruppen), strictRedirects: true, refusesEmbeddedWebViews: true, handOffDelivery: .tap, returnPage: .tapPage
    )

    /// Swedish BankID through a broker.
    public static func bankIDSweden(_ options: BankIDSwedenOptions = BankIDSwedenOptions()) -> Profile {
        Profile(
            name: "bankid-se",
            summary:
                "Swedish-BankID-via-broker-like: autostart link (bankid:/// or the https app link), redirect=null unless asked, collect hintCodes",
            handOff: .bankIDSweden(options)
        )
    }

    /// Singpass (FAPI 2.0), as its FAPI integration guide documents it: https redirect URIs only (no
    /// custom schemes), PAR with a DPoP proof (or `dpop_jkt`), codes that live 60 seconds, and the
    /// interstitial tap page only for `redirect_uri_https_type=app_claimed_https`.
    public static let singpass = Profile(
        name: "singpass",
        summary:
            "Singpass-like FAPI 2.0: PAR with DPoP (proofs with exp), PKCE S256, authentication_context_type, 30+ character state and nonce, private_key_jwt (aud = issuer, ES256/384/512, <= 120 s), DPoP-bound tokens, encrypted ID tokens, 60-second codes, registered app_launch_url, a tap page only for app_claimed_https; no embedded WebViews",
        handOff: .singpass, strictRedirects: true, refusesEmbeddedWebViews: true,
        returnPage: .tapPageWhen(parameter: "redirect_uri_https_type", value: "app_claimed_https"), fapi2: true, singpassRequests: true,
        codeLifetime: 60
    )

    /// ID.me, as its documentation describes it: a standard code flow with PKCE and RS256 ID tokens,
    /// access tokens that expire after five minutes (so refresh is exercised) and codes that live five
    /// minutes (docs.id.me, "Token expiration" and "Authorization duration").
    public static let idMe = Profile(
        name: "idme",
        summary:
            "ID.me-like: code + PKCE, RS256 ID tokens, 5-minute single-use access tokens (a second use is refused), 5-minute codes, refresh tokens",
        codeLifetime: 300, accessTokenLifetime: 300, singleUseAccessTokens: true
    )

    /// Every named profile, with its default options.
    public static let all: [Profile] = [
        .generic, .appleFormPost, .legacyImplicit, .strictRedirect, .uaePass(), .bankIDNorway, .mitID, .bankIDSweden(), .singpass, .idMe,
    ]

    /// The profile called `name`, with `variants` applied; fails naming what is unknown.
    public static func named(_ name: String, variants: [String] = []) -> Result<Profile, UnknownProfile> {
        guard var profile = all.first(where: { $0.name == name }) else {
            return .failure(UnknownProfile(description: "unknown profile \"\(name)\"; available: \(all.map(\.name).joined(separator: ", "))"))
        }
        for variant in variants {
            // Any profile can refuse embedded WebViews, as MitID and Singpass do.
            if variant == "no-webview" {
                profile.refusesEmbeddedWebViews = true
                continue
            }
            if let delivery = HandOffDelivery(rawValue: variant), profile.handOff != nil {
                profile.handOffDelivery = delivery
                continue
            }
            switch profile.handOff {
            case .uaePass(var options):
                guard let known = UAEPassOptions.Variant(rawValue: variant) else {
                    let names = UAEPassOptions.Variant.allCases.map(\.rawValue) + HandOffDelivery.allCases.map(\.rawValue)
                    return .failure(
                        UnknownProfile(description: "unknown uaepass variant \"\(variant)\"; available: \(names.joined(separator: ", "))"))
                }
                options.apply(known)
                profile.handOff = .uaePass(options)
            case .bankIDSweden(var options):
                switch variant {
                case "app-link": options.appLinkForm = true
                case "short-order": (options.orderLifetime, options.startLifetime) = (2, 2)
                case "continue-button": profile.returnPage = .tapPage
                default:
                    return .failure(
                        UnknownProfile(
                            description:
                                "unknown bankid-se variant \"\(variant)\"; available: app-link, short-order, continue-button, \(HandOffDelivery.allCases.map(\.rawValue).joined(separator: ", "))"
                        ))
                }
                profile.handOff = .bankIDSweden(options)
            case .mitID where variant == MitIDBroker.idura.rawValue:
                profile.handOff = .mitID(.idura)
                profile.returnPage = .redirect
            case .mitID:
                return .failure(
                    UnknownProfile(
                        description:
                            "unknown mitid variant \"\(variant)\"; available: idura, no-webview, \(HandOffDelivery.allCases.map(\.rawValue).joined(separator: ", "))"
                    ))
            case nil, .bankIDNorway, .singpass:
                return .failure(
                    UnknownProfile(
                        description:
                            "the \(name) profile has no variants but no-webview\(profile.handOff == nil ? "" : ", \(HandOffDelivery.allCases.map(\.rawValue).joined(separator: ", "))")"
                    ))
            }
        }
        return .success(profile)
    }

    /// A profile or variant name the emulator does not know.
    public struct UnknownProfile: Error, CustomStringConvertible {
        public let description: String
    }
}

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

/// The Swedish BankID behaviours that vary.
public struct BankIDSwedenOptions: Sendable, Equatable {
    /// The autostart link as `https://app.bankid.com/?…` instead of `bankid:///?…`.
    public var appLinkForm = false
    /// Seconds an order stays pending before collect reports `failed` with `expiredTransaction`. BankID
    /// publishes no figure the review could confirm; three minutes is assumed (`short-order`: 2 s).
    public var orderLifetime: TimeInterval = 180
    /// Seconds an order waits for an app to open it (by autostart or by scanning the QR code) before
    /// collect reports `failed` with `startFailed`: 30 s, the window Pointsharp's BankID guide gives for
    /// scanning (secondary; `short-order`: 2 s).
    public var startLifetime: TimeInterval = 30
    /// How old, in seconds, a scanned QR code may be: the code changes every second, so only the
    /// current one and the one before pass (assumed; BankID publishes no figure).
    public static let qrCodeAge = 2

    /// The animated QR code's content at `seconds` since the order started (BankID RP API v6, "secure
    /// start"): `bankid.<qrStartToken>.<seconds>.<qrAuthCode>`, the code being HMAC-SHA256 keyed with
    /// `qrStartSecret` over the decimal seconds, in lowercase hex.
    public static func qrCode(startToken: String, startSecret: String, seconds: Int) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data(String(seconds).utf8), using: SymmetricKey(data: Data(startSecret.utf8)))
        return "bankid.\(startToken).\(seconds).\(code.map { String(format: "%02x", $0) }.joined())"
    }

    public init() {}

    func autostartLink(token: String, redirect: String?) -> String {
        let base = appLinkForm ? "https://app.bankid.com/" : "bankid:///"
        return "\(base)?autostarttoken=\(token)&redirect=\(redirect.map(FormEncoding.escape) ?? "null")"
    }
}
