import Foundation
import Crypto
@_spi(SwitchbackInternals) import Switchback

extension Profile {
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
                "UAE-Pass-like WebView rewrite provider: the page navigates to uaepass://digitalid (uaepassstg:// in staging) with https successurl/failureurl on the provider; no discovery, client_secret_basic, no ID token (identity from userinfo), no refresh tokens",
            handOff: .uaePass(options), contract: .uaePass
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
        handOff: .bankIDNorway, contract: .bankIDNorway
    )

    /// MitID through a broker: the MitID web client opens the MitID app by a universal link on
    /// `appswitch.mitid.nets.eu` behind the user's tap on "Open MitID app" (Idura's app-switch guide).
    /// The broker is Signaturgruppen (`idp_params`) unless the variant `idura` asks for Idura's shape
    /// (`login_hint`). Both end with a plain redirect to the https redirect URI: Signaturgruppen's "MitID on
    /// iOS" has the integrator render the button on that last step, Idura's session catches it.
    public static let mitID = Profile(
        name: "mitid",
        summary:
            "MitID-via-broker-like: the user taps \"Open MitID app\" (a universal link), the app switches back by a parameterless universal link (Signaturgruppen's idp_params; variant idura: login_hint), then a plain redirect with the broker's code to the https redirect URI (the app's page there has the button back); no embedded WebViews",
        handOff: .mitID(.signaturgruppen), strictRedirects: true, refusesEmbeddedWebViews: true, handOffDelivery: .tap, contract: .mitID
    )

    /// Swedish BankID through a broker.
    public static func bankIDSweden(_ options: BankIDSwedenOptions = BankIDSwedenOptions()) -> Profile {
        Profile(
            name: "bankid-se",
            summary:
                "Swedish-BankID-via-broker-like: autostart link (bankid:/// or the https app link), redirect=null unless asked, collect hintCodes",
            handOff: .bankIDSweden(options), contract: .bankIDSweden
        )
    }

    /// Singpass (FAPI 2.0), as its FAPI integration guide documents it: https redirect URIs only (no
    /// custom schemes), PAR with a DPoP proof (or `dpop_jkt`), the interstitial tap page only for
    /// `redirect_uri_https_type=app_claimed_https`, and its contract's terms (``ProviderContract/singpass``:
    /// 60-second request URIs and codes, no refresh tokens).
    public static let singpass = Profile(
        name: "singpass",
        summary:
            "Singpass-like FAPI 2.0: PAR with DPoP (proofs with exp), PKCE S256, authentication_context_type, 30+ character state and nonce, private_key_jwt (aud = issuer, ES256/384/512, <= 120 s), DPoP-bound tokens, encrypted ID tokens, 60-second request URIs and codes, no refresh tokens, registered app_launch_url, a tap page only for app_claimed_https; no embedded WebViews",
        handOff: .singpass, strictRedirects: true, refusesEmbeddedWebViews: true,
        returnPage: .tapPageWhen(parameter: "redirect_uri_https_type", value: "app_claimed_https"), fapi2: true, singpassRequests: true,
        contract: .singpass
    )

    /// ID.me, as its documentation describes it: a standard code flow with PKCE and RS256 ID tokens,
    /// access tokens that expire after five minutes (so refresh is exercised) and codes that live five
    /// minutes (docs.id.me, "Token expiration" and "Authorization duration").
    public static let idMe = Profile(
        name: "idme",
        summary:
            "ID.me-like: code + PKCE, RS256 ID tokens, 5-minute single-use access tokens (a second use is refused), 5-minute codes, refresh tokens",
        contract: .idMe
    )

    /// Every named profile, with its default options.
    public static let all: [Profile] = [
        .generic, .appleFormPost, .legacyImplicit, .strictRedirect, .uaePass(), .bankIDNorway, .mitID, .bankIDSweden(), .singpass, .idMe,
    ]
}
