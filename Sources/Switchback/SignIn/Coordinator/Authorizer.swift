import Foundation

/// Who runs a ``SignInCoordinator``'s authorizations: who prepares the request, who redeems the code and
/// who validates the ID token. A coordinator is made with one, so each sign-in has what it needs; a
/// coordinator cannot be asked for a kind of sign-in it was not made for.
///
/// ```swift
/// // UAE Pass, MitID, Swedish BankID: the app is a public client with PKCE.
/// SignInCoordinator(.app(client), host: host, opener: application)
/// // Norwegian BankID: the app's request, the backend companion redeems the code as the confidential client.
/// SignInCoordinator(.app(client, redeemingCodesAt: companion), host: host, opener: application)
/// // Singpass (FAPI 2.0): the companion runs the whole authorization.
/// SignInCoordinator(.companion(companion, route: .exchange(redirectURI: callback)), host: host, opener: application)
/// ```
///
/// A struct with static members rather than an enum, so that another kind can be added without breaking
/// code that builds these. A coordinator whose authorizer has a companion also runs wallet sign-ins
/// (``SignInRoute/wallet(_:)``): the companion verifies them, whatever its route.
public struct Authorizer: Sendable {
    enum Kind: Sendable {
        case app(OIDCClient, redeemer: CompanionClient?)
        case companion(CompanionClient, CompanionRoute)
        case wallets(CompanionClient)
    }

    let kind: Kind

    /// The app's own client at the provider, as a public client with PKCE: it prepares the request, redeems
    /// the code and validates the ID token. Sign-ins end with ``SignInResult/credential(_:)``.
    public static func app(_ client: OIDCClient) -> Authorizer {
        Authorizer(kind: .app(client, redeemer: nil))
    }

    /// The app's own client prepares the request, checks the response and validates the ID token; the
    /// backend companion, the confidential client, redeems the code (`POST /exchange`, configured to return
    /// tokens). Sign-ins end with ``SignInResult/credential(_:)``.
    public static func app(_ client: OIDCClient, redeemingCodesAt companion: CompanionClient) -> Authorizer {
        Authorizer(kind: .app(client, redeemer: companion))
    }

    /// The backend companion runs the authorization on `route` (``CompanionRoute``): it prepares the request
    /// with its own client, redeems the code and validates the ID token; the app shows the provider and
    /// relays what comes back. Sign-ins end with ``SignInResult/companion(_:)``.
    public static func companion(_ companion: CompanionClient, route: CompanionRoute) -> Authorizer {
        Authorizer(kind: .companion(companion, route))
    }

    /// Wallet sign-ins only (``SignInRoute/wallet(_:)``), verified by `companion`: for an app that offers no
    /// provider. A provider's ``SignInRequest`` is refused with ``SwitchbackError/Code/invalidConfiguration``.
    public static func wallets(verifiedBy companion: CompanionClient) -> Authorizer {
        Authorizer(kind: .wallets(companion))
    }

    /// The app's client at the provider, when the app runs the authorization.
    public var client: OIDCClient? {
        if case .app(let client, _) = kind { return client }
        return nil
    }

    /// The backend companion, when it takes part.
    public var companion: CompanionClient? {
        switch kind {
        case .app(_, let redeemer): redeemer
        case .companion(let companion, _), .wallets(let companion): companion
        }
    }

    /// Whether a sign-in started with `authorization` is one this authorizer can finish: the app's own at the
    /// same issuer with the same client ID, or the companion's at the same companion on the same kind of route
    /// (a journal from before the companion was recorded matches any). A journal another configuration of the
    /// app wrote is left for that configuration.
    func finishes(_ authorization: StartedAuthorization) -> Bool {
        switch (kind, authorization) {
        case (_, .companion(let started)) where started.route == .wallet:
            // A wallet's presentation needs only the companion that verifies it, whatever this authorizer's route;
            // its journal always names that companion. (One coordinator per journal store: two coordinators of
            // the same companion would both take it back.)
            companion.map { companion in started.companion == companion.baseURL } ?? false
        case (.app(let client, _), .app(let session)):
            session.clientID == client.configuration.clientID && session.issuer == client.provider.issuer
        case (.companion(let companion, let route), .companion(let started)):
            route.kind == started.route && (started.companion.map { $0 == companion.baseURL } ?? true)
        case (.app, .companion), (.companion, .app), (.wallets, _), (_, .signOut): false
        }
    }
}
