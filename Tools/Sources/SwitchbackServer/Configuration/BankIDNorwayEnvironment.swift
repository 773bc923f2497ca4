import Foundation

/// Norwegian BankID's two environments, each an OIDC issuer and a biometrics server that only accept each
/// other's tokens: a client-credentials token from the test issuer is refused by the production
/// biometrics server, and the other way round (BankID, "OpenID Connect Authorization Code flow for upfront
/// permissions", developer.bankid.no; BankIDNorge/oidc-integration-examples, `appsettings.example.json`,
/// pairs the test ones).
enum BankIDNorwayEnvironment: String, CaseIterable {
    case test
    case production

    /// The OIDC issuer's host.
    var issuerHost: String {
        switch self {
        case .test: "auth.current.bankid.no"
        case .production: "auth.bankid.no"
        }
    }

    /// The biometrics server's host; the server (`permission.server`) is its https root, whose discovery
    /// document names `permissions_endpoint`.
    var biometricsHost: String {
        switch self {
        case .test: "current.aletheia-test.idtech.no"
        case .production: "app.bankid.no"
        }
    }

    var biometricsServer: String { "https://" + biometricsHost }

    /// The environment whose issuer is `issuer`, when it is one of BankID's.
    static func ofIssuer(_ issuer: String) -> BankIDNorwayEnvironment? {
        let host = URL(string: issuer)?.host?.lowercased()
        return allCases.first { $0.issuerHost == host }
    }

    /// The environment whose biometrics server is `server`, when it is one of BankID's.
    static func ofBiometricsServer(_ server: String) -> BankIDNorwayEnvironment? {
        let host = URL(string: server)?.host?.lowercased()
        return allCases.first { $0.biometricsHost == host }
    }
}
