import Foundation

/// A broker MitID is reached through. MitID itself has no OpenID interface for apps; each broker has its
/// own syntax for the MitID app's way back and its own rules on the user agent.
public enum MitIDBroker: String, Sendable, CaseIterable {
    /// Idura (formerly Criipto): `login_hint=appswitch:ios appswitch:resumeUrl:<universal link>`, and
    /// `ASWebAuthenticationSession` required (Idura, "App switching", docs.idura.app/verify/guides/appswitch;
    /// its iOS SDK, criipto/idura-verify-ios, defaults to an ephemeral session).
    case idura
    /// Signaturgruppen (Nets eID Broker): `idp_params={"mitid":{"enable_app_switch":true,"app_switch_os":"ios",
    /// "app_switch_url":…}}` with `idp_values=mitid`. The Safari view is the user agent MitID supports
    /// officially; the broker ends with a plain redirect to the https redirect URI, where the integrator
    /// renders the button back to the app (Signaturgruppen broker documentation, "MitID app switch" and
    /// "MitID on iOS"). `ASWebAuthenticationSession` is permitted, without MitID's official support.
    case signaturgruppen
}

extension ProviderPreset {
    /// MitID through `broker`: the MitID app returns by the app's universal link, which arrives without
    /// parameters; the broker's page then redirects to the https redirect URI, which an authentication
    /// session catches and a Safari view loads (the app's page there, or the companion's, has the button
    /// back). WebViews are refused by MitID. Sources for each broker: ``MitIDBroker`` and `Documentation/Providers.md`.
    public static func mitID(_ broker: MitIDBroker) -> ProviderPreset {
        switch broker {
        case .idura:
            // The broker redirects to the app's https redirect URI with no page to tap: only the
            // authentication session, which catches that URI itself, brings the user back.
            ProviderPreset(
                name: "mitid-idura",
                strategies: [.ephemeralBrowser, .systemBrowser],
                unusable: [
                    .init(.webView, because: "MitID refuses embedded WebViews"),
                    .init(.safariView, because: "Idura requires ASWebAuthenticationSession: its last redirect is caught by the session, not tapped"),
                ],
                appReturn: AppReturn(.loginHint(words: ["appswitch:ios"], prefix: "appswitch:resumeUrl:"), patterns: [.universalLink])
            )
        case .signaturgruppen:
            // The broker redirects plainly to the redirect URI (its contract, `providerReturnPage`): a Safari view
            // needs the app's page there (`AppLinks.responseLink`) or the companion's completion, which the coordinator checks.
            ProviderPreset(
                name: "mitid",
                strategies: [.safariView, .systemBrowser, .ephemeralBrowser],
                unusable: [.init(.webView, because: "MitID refuses embedded WebViews")],
                appReturn: AppReturn(.parameterValue("idp_params", value: signaturgruppenAppSwitch), patterns: [.universalLink]),
                authorizationParameters: [("idp_values", "mitid")]
            )
        }
    }

    /// Signaturgruppen's `idp_params` asking the MitID app to switch back to `url` on iOS.
    @Sendable static func signaturgruppenAppSwitch(_ url: URL) -> String {
        let value: JSONValue = .object([
            "mitid": .object(["enable_app_switch": .bool(true), "app_switch_os": .string("ios"), "app_switch_url": .string(url.absoluteString)])
        ])
        return value.description
    }
}
