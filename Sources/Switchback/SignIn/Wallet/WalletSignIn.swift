public import Foundation

/// An identity wallet the app sends the user to, declared as a provider preset is: how the wallet is
/// opened. The companion (with a `wallet` section) is the verifier; the wallet fetches its request, asks the
/// user, answers the companion and opens the app's return link (OpenID4VP 1.0 same device, HAIP 1.0).
///
/// ```swift
/// let eudi = WalletPreset.openID4VP                       // any wallet registered for openid4vp://
/// let result = try await coordinator.signIn(.wallet(eudi.request()))
/// let pid = result.presentation?.claims("pid")            // the claims the companion verified
/// ```
public struct WalletPreset: Sendable, Equatable, Codable {
    /// The wallet's name, kept in the journal and the log.
    public var name: String
    /// The custom scheme the wallet registers: `openid4vp` (OpenID4VP 1.0 §13.1.2) or `haip-vp` (HAIP 1.0 §5.1).
    public var scheme: String
    /// An https link the wallet claims as a universal link (a wallet's own invocation URL), opened instead of
    /// the scheme: no other app can claim it, where any app can register a custom scheme. When no app claims
    /// it (the wallet is not installed) the sign-in fails with ``SwitchbackError/Code/authenticatorUnavailable``
    /// rather than fall back to the scheme, which would hand the request to whichever app registered it.
    public var universalLink: URL?

    public init(name: String, scheme: String, universalLink: URL? = nil) {
        self.name = name
        self.scheme = scheme.lowercased()
        self.universalLink = universalLink
    }

    /// Any wallet registered for OpenID4VP's own scheme (OpenID4VP 1.0 §13.1.2).
    public static let openID4VP = WalletPreset(name: "wallet", scheme: "openid4vp")
    /// Any wallet registered for HAIP's scheme (HAIP 1.0 §5.1).
    public static let haip = WalletPreset(name: "wallet", scheme: "haip-vp")

    /// A request for this wallet. A wallet answers the companion, not the app, so coming back without its
    /// link waits by default (``SignInRequest/WithoutReturn/wait``) until the link or `timeout`; the
    /// companion keeps a presentation request for five minutes.
    public func request(
        withoutReturn: SignInRequest.WithoutReturn = .wait, gracePeriod: TimeInterval = 2, timeout: TimeInterval = 300
    ) -> WalletRequest {
        WalletRequest(wallet: self, withoutReturn: withoutReturn, gracePeriod: gracePeriod, timeout: timeout)
    }

    /// The companion's wallet link (`openid4vp://?client_id=…&request_uri=…`) made again in this wallet's
    /// scheme, with nothing else: exactly one `client_id`, one `request_uri` on `companion`'s origin, and a
    /// `request_uri_method` of `get` or `post` when there is one (§5.4, §5.10). Nil for anything else (a
    /// second `request_uri`, a by-value `request`, another parameter), so that a link rewritten on the way
    /// cannot send the wallet elsewhere.
    @_spi(SwitchbackInternals) public func invocation(of link: URL, companion: URL) -> URL? {
        guard let items = URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems,
            Set(items.map(\.name)).isSubset(of: ["client_id", "request_uri", "request_uri_method"]),
            Set(items.map(\.name)).count == items.count,
            let clientID = items.first(where: { $0.name == "client_id" })?.value, !clientID.isEmpty,
            let requestText = items.first(where: { $0.name == "request_uri" })?.value, let requestURI = URL(string: requestText),
            EndpointSecurity.isAcceptable(requestURI), requestURI.webOrigin == companion.webOrigin
        else { return nil }
        let method = items.first { $0.name == "request_uri_method" }?.value
        guard method == nil || method == "get" || method == "post" else { return nil }
        // Every value escaped as a form value, as wallets decode the query.
        let fields = [("client_id", clientID), ("request_uri", requestText)] + (method.map { [("request_uri_method", $0)] } ?? [])
        return URL(string: scheme + "://?" + FormEncoding.encode(fields))
    }
}

/// One wallet sign-in: which wallet, and how long to wait for it.
public struct WalletRequest: Sendable {
    public var wallet: WalletPreset
    /// What coming back to the app without the wallet's link does.
    public var withoutReturn: SignInRequest.WithoutReturn
    public var gracePeriod: TimeInterval
    /// The sign-in fails with ``SwitchbackError/Code/timedOut`` when not finished by then.
    public var timeout: TimeInterval

    public init(wallet: WalletPreset, withoutReturn: SignInRequest.WithoutReturn = .wait, gracePeriod: TimeInterval = 2, timeout: TimeInterval = 300)
    {
        self.wallet = wallet
        self.withoutReturn = withoutReturn
        self.gracePeriod = gracePeriod
        self.timeout = timeout
    }
}

/// The ways a user may sign in, offered together ("BankID, MitID or a wallet"): the app lists them, the
/// user picks one, and ``SignInCoordinator/signIn(_:)-(SignInRoute)`` runs it to one ``SignInResult``.
public enum SignInRoute: Sendable {
    /// A provider, shown in a user agent (``SignInRequest``).
    case provider(SignInRequest)
    /// An identity wallet, verified by the companion (``WalletRequest``).
    case wallet(WalletRequest)
    /// An ID in Apple Wallet, through the system's Verify with Wallet sheet, verified by the companion
    /// (``IdentityDocumentRequest``); the coordinator needs an ``IdentityDocumentProvider``.
    case verifyWithWallet(IdentityDocumentRequest)

    /// The provider's or the wallet's name, for the app's list.
    public var name: String {
        switch self {
        case .provider(let request): request.provider
        case .wallet(let request): request.wallet.name
        case .verifyWithWallet(let request): request.name
        }
    }
}

/// What a wallet presented, as the companion verified it (issuer, disclosures, key binding to this request,
/// status, the query): the disclosed claims of each credential, by the query's credential `id`. Nothing the
/// user did not disclose is here.
public struct WalletPresentation: Sendable, Equatable {
    /// Each credential's claims, by the DCQL query's credential `id`; more than one where the query allows several.
    public let credentials: [String: [[String: JSONValue]]]

    public init(credentials: [String: [[String: JSONValue]]]) {
        self.credentials = credentials
    }

    /// The claims of the first credential answering the query's `id`.
    public func claims(_ id: String) -> [String: JSONValue]? {
        credentials[id]?.first
    }

    /// The one-time `response_code` in the fragment of the link the wallet opened (OpenID4VP 1.0 §8.2).
    @_spi(SwitchbackInternals) public static func responseCode(in url: URL) -> String? {
        guard let fragment = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedFragment else { return nil }
        var query = URLComponents()
        query.percentEncodedQuery = fragment
        let codes = query.queryItems?.filter { $0.name == "response_code" } ?? []
        guard codes.count == 1, let code = codes[0].value, !code.isEmpty else { return nil }
        return code
    }
}

extension WalletPresentation: CustomStringConvertible {
    /// The credential ids and claim names, never a value.
    public var description: String {
        let listed = credentials.keys.sorted().map { id in
            "\(id): [\((credentials[id]?.first?.keys.sorted() ?? []).joined(separator: ", "))]"
        }
        return "WalletPresentation(\(listed.joined(separator: "; ")))"
    }
}
