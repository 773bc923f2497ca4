import Foundation

extension ProviderSource {
    /// Singpass's FAPI 2.0 server, discovered (Singpass, "OpenID Connect discovery":
    /// `https://id.singpass.gov.sg/fapi/.well-known/openid-configuration`, staging on `stg-id.singpass.gov.sg/fapi`).
    /// The issuer without `/fapi` is the legacy API, which ends on 31 December 2026.
    public static func singpass(_ environment: AuthenticatorRule.Environment = .production) -> ProviderSource {
        .discovery(issuer: environment == .production ? "https://id.singpass.gov.sg/fapi" : "https://stg-id.singpass.gov.sg/fapi")
    }
}
