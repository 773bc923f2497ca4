extension ProviderContract {
    /// MitID through Signaturgruppen (Nets eID Broker), the `mitid` preset.
    public static let mitID = ProviderContract(
        provider: "mitid",
        terms: [
            Term(
                .providerReturnPage, .flag(false),
                source: "https://signaturgruppen-a-s.github.io/signaturgruppen-broker-documentation/idps/mitid-ios.html",
                says:
                    #""Render a button on the last redirect step (therefore, your OIDC redirect_uri must be an https:// URL)": the broker redirects to the redirect URI, and the button back to the app is the integrator's"#
            )
        ])
}

extension ProviderContract {
    /// MitID through Idura (formerly Criipto), the `mitid-idura` preset.
    public static let mitIDIdura = ProviderContract(
        provider: "mitid-idura",
        terms: [
            Term(
                .providerReturnPage, .flag(false),
                source: "https://docs.idura.app/verify/guides/appswitch",
                says:
                    "after the MitID app switches back, the login request continues in the web component and ends with an OAuth2 response to the redirect URI, which ASWebAuthenticationSession (required) catches"
            )
        ])
}
