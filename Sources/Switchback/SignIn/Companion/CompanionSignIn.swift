public import Foundation

/// How the backend companion takes part in a sign-in it runs itself (``Authorizer/companion(_:route:)``):
/// the companion's client at the provider prepares the authorization and redeems the code, and the app
/// shows the provider and relays what comes back. For providers whose client cannot live in an app —
/// FAPI 2.0 (Singpass: PAR, `private_key_jwt` and DPoP with the backend's keys) — and for providers that
/// answer the backend's https page rather than the app (MitID's backend completion).
public enum CompanionRoute: Sendable, Equatable {
    /// `POST /exchange/start` and `POST /exchange`: the provider answers the app's `redirectURI` (one of the
    /// companion's exchange redirect URIs); the app checks the response is its own and hands it to the
    /// companion, which redeems it.
    case exchange(redirectURI: URL)
    /// `POST /completion/start` and `POST /completion/status`: the provider answers the companion, which
    /// finishes the sign-in and shows a page whose button opens the app's link. The app learns the result
    /// from the companion as soon as it is known, whether or not the user taps the button.
    case completion

    /// Which of the two, without its details: what a sign-in's journal records.
    public enum Kind: String, Sendable, Codable {
        case exchange, completion
        /// A wallet's presentation (``WalletRequest``), which the companion verifies whatever its sign-in route.
        case wallet
    }

    public var kind: Kind {
        switch self {
        case .exchange: .exchange
        case .completion: .completion
        }
    }
}

/// An authorization the backend companion started for the app: what the app needs to show it, recognise
/// its end and collect the result. The companion keeps the verifier and the nonce.
///
/// ``flowSecret`` is the app's proof of this authorization: the exchange's binding, or the completion's
/// flow ID. Store it only where the flow journal goes, and never log it or put it in a URL.
@_spi(SwitchbackInternals) public struct CompanionAuthorization: Sendable, Codable, Equatable {
    public let route: CompanionRoute.Kind
    /// The URL to open in the user agent.
    public let authorizationURL: URL
    /// Where the browser part ends for the app: its redirect URI (exchange) or the link the companion's
    /// final page opens (completion).
    public let returnURL: URL
    /// The `state` the companion put in the request (exchange): a response without it is not this sign-in's.
    public let state: String?
    /// The app's secret for this authorization, sent only in request bodies to the companion: the binding
    /// the exchange is redeemed with (exchange), or the flow ID the result is asked for with (completion).
    public let flowSecret: String?
    public let createdAt: Date
    /// The base URL of the companion that started it, so that only a coordinator of that companion takes its
    /// journal back (nil in journals written before it was recorded).
    public let companion: URL?

    public init(
        route: CompanionRoute.Kind, authorizationURL: URL, returnURL: URL, state: String?, flowSecret: String?, createdAt: Date, companion: URL? = nil
    ) {
        self.route = route
        self.authorizationURL = authorizationURL
        self.returnURL = returnURL
        self.state = state
        self.flowSecret = flowSecret
        self.createdAt = createdAt
        self.companion = companion
    }
}

extension CompanionAuthorization {
    /// The one-time `result` value the companion's final page put in the app link (completion).
    public static func returnValue(in url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.last { $0.name == "result" }?.value
    }
}

extension CompanionAuthorization: CustomStringConvertible {
    /// No state or flow secret is shown.
    public var description: String {
        "CompanionAuthorization(route: \(route.rawValue), returnURL: \(Redaction.describe(returnURL)))"
    }
}

/// The authorization a sign-in was started with: the app's own (it holds the verifier and nonce) or one
/// its backend companion started. A journal keeps it (``FlowJournal``).
@_spi(SwitchbackInternals) public enum StartedAuthorization: Sendable, Equatable {
    case app(AuthorizationSession)
    case companion(CompanionAuthorization)
    /// Not a sign-in: an RP-initiated logout shown in a user agent (``SignInCoordinator/endSession(_:strategy:timeout:)``).
    case signOut(EndSessionRequest)

    /// The `state` a response for this sign-in carries, when the app knows it.
    public var state: String? {
        switch self {
        case .app(let session): session.state
        case .companion(let authorization): authorization.state
        case .signOut(let request): request.state
        }
    }

    /// When the authorization was prepared; the journal lists sign-ins in this order (a sign-out is never journaled).
    public var createdAt: Date {
        switch self {
        case .app(let session): session.createdAt
        case .companion(let authorization): authorization.createdAt
        case .signOut: .distantPast
        }
    }

    var isSignOut: Bool {
        if case .signOut = self { return true }
        return false
    }

    /// A sign-in the companion completes itself (its final page opens the app).
    var isCompletion: Bool {
        if case .companion(let authorization) = self { return authorization.route == .completion }
        return false
    }
}

/// What the backend companion hands the app at the end of a sign-in it ran: who signed in and, as its
/// configuration says, a first-party session or the provider's tokens. The companion validated the ID
/// token; tokens bound to its DPoP key are of no use to the app, so FAPI providers return a session.
public struct CompanionSignIn: Sendable, Equatable {
    public let subject: String
    public let acr: String?
    /// The companion's session (`"returns": "session"`), sent back to it as `Authorization: Session …`.
    public let session: String?
    /// The provider's tokens (`"returns": "tokens"`).
    public let tokens: TokenResponse?
    /// When the session or the access token expires, as the companion reported it.
    public let expiresAt: Date?

    public init(subject: String, acr: String?, session: String?, tokens: TokenResponse?, expiresAt: Date?) {
        self.subject = subject
        self.acr = acr
        self.session = session
        self.tokens = tokens
        self.expiresAt = expiresAt
    }
}

extension CompanionSignIn: CustomStringConvertible {
    /// Never shows the session or a token.
    public var description: String {
        "CompanionSignIn(subject: \(subject), acr: \(acr ?? "none"), session: \(session != nil), tokens: \(tokens.map { "\($0)" } ?? "none"))"
    }
}

/// How a sign-in ended well: with a credential the app validated, with what its companion handed back, or
/// with the claims a wallet presented and the companion verified.
public enum SignInResult: Sendable, Equatable {
    case credential(Credential)
    case companion(CompanionSignIn)
    /// A wallet sign-in (``SignInRoute/wallet(_:)``): the verified claims; there is no provider session.
    case presentation(WalletPresentation)

    public var subject: String? {
        switch self {
        case .credential(let credential): credential.subject
        case .companion(let signIn): signIn.subject
        case .presentation: nil
        }
    }

    public var acr: String? {
        switch self {
        case .credential(let credential): credential.acr
        case .companion(let signIn): signIn.acr
        case .presentation: nil
        }
    }

    /// The credential, when the app holds the provider's tokens itself.
    public var credential: Credential? {
        if case .credential(let credential) = self { return credential }
        return nil
    }

    /// The companion's answer, for a sign-in it ran.
    public var companion: CompanionSignIn? {
        if case .companion(let signIn) = self { return signIn }
        return nil
    }

    /// The verified claims, for a wallet sign-in.
    public var presentation: WalletPresentation? {
        if case .presentation(let presentation) = self { return presentation }
        return nil
    }
}

extension SignInResult: CustomStringConvertible {
    public var description: String {
        switch self {
        case .credential(let credential): "\(credential)"
        case .companion(let signIn): "\(signIn)"
        case .presentation(let presentation): "\(presentation)"
        }
    }
}
