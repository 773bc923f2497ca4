public import Foundation

extension ProviderMetadata {
    /// UAE Pass's documented endpoints, for ``ProviderSource/static(_:)``: it publishes no discovery
    /// document (UAE Pass "Endpoints": `https://id.uaepass.ae/idshub/{authorize,token,userinfo,logout}`,
    /// staging on `stg-id.uaepass.ae`). Pair it with ``IdentitySource/userInfo``: UAE Pass's token response
    /// carries no ID token. UAE Pass documents no JWKS; `jwksURI` follows its path scheme and is fetched only
    /// if an ID token ever arrives, which then fails closed if nothing is there.
    public static func uaePass(_ environment: AuthenticatorRule.Environment = .production) -> ProviderMetadata {
        uaePass(base: URL(string: environment == .production ? "https://id.uaepass.ae" : "https://stg-id.uaepass.ae")!)
    }

    /// UAE Pass's endpoint layout under another base URL (the emulator's uaepass profile serves the same
    /// paths on loopback).
    ///
    /// Its logout takes only `redirect_uri` (UAE Pass "4. Logout": `https://stg-id.uaepass.ae/idshub/logout?redirect_uri=…`),
    /// hence ``EndSessionStyle/redirectURIOnly``.
    public static func uaePass(base: URL) -> ProviderMetadata {
        let root = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        func endpoint(_ path: String) -> URL { URL(string: root + "/idshub/" + path)! }
        var metadata = ProviderMetadata(
            issuer: root, authorizationEndpoint: endpoint("authorize"), tokenEndpoint: endpoint("token"), jwksURI: endpoint("jwks"),
            userinfoEndpoint: endpoint("userinfo"), endSessionEndpoint: endpoint("logout"),
            tokenEndpointAuthMethodsSupported: ["client_secret_basic"],
            scopesSupported: [
                "openid", "urn:uae:digitalid:profile:general", "urn:uae:digitalid:profile:general:profileType",
                "urn:uae:digitalid:profile:general:unifiedId",
            ],
            acrValuesSupported: ["urn:safelayer:tws:policies:authentication:level:low", "urn:digitalid:authentication:flow:mobileondevice"]
        )
        metadata.endSessionStyle = .redirectURIOnly
        return metadata
    }
}
