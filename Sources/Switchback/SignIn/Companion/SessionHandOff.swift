public import Foundation
public import Logging

/// The app's half of session hand-off (`POST /handoff` on the backend companion): a signed-in app opens a
/// web app already signed in, without putting a token in any URL.
///
/// The app asks the companion for a one-time code with its access token in the `Authorization` header;
/// the companion answers with its own redeem URL (`/handoff/redeem?handoffotp=…&goto=…`). That page names
/// the account and the user continues with one tap, which sets the web session cookie once and redirects
/// to `goto` only when `goto` is on its allow-list. The code lives about a minute and works once, so the
/// URL is opened at once and never stored. A DPoP-bound access token is sent with a proof (``dpop``).
///
/// ```swift
/// let handOff = SessionHandOff(companion: CompanionClient(URL(string: "https://auth.example.com")!))
/// try await handOff.open(URL(string: "https://shop.example.com/orders")!, accessToken: credential.accessToken,
///                        in: .systemBrowser(application))
/// ```
public struct SessionHandOff: Sendable {
    /// Where the web app is opened.
    public enum Destination: Sendable {
        /// The system browser, through the operating system (`UIApplication.open`); the cookie lands in
        /// Safari's jar. Keep the companion's redeem path out of the app's associated-domain paths, or the
        /// system routes the link back to the app.
        case systemBrowser(any URLOpener)
        /// A WebView of the app's own: `load` loads the URL in it (`webView.load(URLRequest(url:))`).
        case webView(@Sendable (URL) async -> Void)
    }

    /// The backend companion that issues the codes.
    public let companion: CompanionClient
    /// The key the app's access tokens are bound to (RFC 9449), when the provider issues DPoP-bound
    /// tokens: each request then carries `Authorization: DPoP` and a fresh proof by this key.
    public let dpop: DPoPKey?
    private let clock: any WallClock
    private let entropy: any EntropySource
    private let logger: Logger

    public init(
        companion: CompanionClient, dpop: DPoPKey? = nil, clock: any WallClock = SystemClock(), entropy: any EntropySource = SystemEntropy(),
        logger: Logger = Logger(label: "switchback.handoff")
    ) {
        self.companion = companion
        self.dpop = dpop
        self.clock = clock
        self.entropy = entropy
        self.logger = logger
    }

    /// Asks for a one-time code for `destination` and returns the companion's redeem URL, to be opened at once.
    ///
    /// Throws ``SwitchbackError/Code/insecureEndpoint`` for a companion that is not https,
    /// ``SwitchbackError/Code/handOffRefused`` when the companion refuses (its OAuth-style error is in
    /// ``SwitchbackError/oauthError``) or answers with a URL that is not its own redeem route, and
    /// ``SwitchbackError/Code/transportFailed`` when it cannot be reached.
    public func redeemURL(for destination: URL, accessToken: String) async throws -> URL {
        guard
            destination.scheme?.lowercased() == "https"
                || (destination.scheme?.lowercased() == "http" && EndpointSecurity.isLoopback(destination.host))
        else {
            throw SwitchbackError(.invalidURL, "a hand-off opens an https web app, not \(Redaction.describe(destination))")
        }
        guard !accessToken.isEmpty else { throw SwitchbackError(.invalidConfiguration, "a hand-off needs the app's access token") }
        let authorization: String
        var proof: String?
        if let dpop {
            authorization = "DPoP \(accessToken)"
            proof = try dpop.proof(
                method: "POST", url: companion.url(CompanionAPI.Path.handOff), accessToken: accessToken, now: clock.now(),
                jti: entropy.token(bytes: 16))
        } else {
            authorization = "Bearer \(accessToken)"
        }
        let issued = try await companion.issueHandOff(for: destination, authorization: authorization, proof: proof)
        guard let redeem = issued.redeemURL.flatMap(URL.init(string:)), isRedeemRoute(redeem) else {
            throw SwitchbackError(.handOffRefused, "the companion's answer holds no redeem URL of its own")
        }
        logger.info("hand-off issued", metadata: ["destination": "\(Redaction.describe(destination))"])
        return redeem
    }

    /// Asks for a code and opens the redeem URL in `destination`; the web app opens signed in.
    /// Throws ``SwitchbackError/Code/userAgentFailed`` when the system browser could not open it.
    public func open(_ webApp: URL, accessToken: String, in destination: Destination) async throws {
        let url = try await redeemURL(for: webApp, accessToken: accessToken)
        switch destination {
        case .systemBrowser(let opener):
            guard await opener.open(url) else { throw SwitchbackError(.userAgentFailed, "the system could not open the hand-off link") }
        case .webView(let load):
            await load(url)
        }
    }

    /// The companion's own origin and `…/handoff/redeem` path: a compromised or misconfigured answer
    /// cannot send the browser, and the code, anywhere else.
    private func isRedeemRoute(_ url: URL) -> Bool {
        let expected = companion.url(CompanionAPI.Path.handOffRedeem)
        return url.scheme?.lowercased() == expected.scheme?.lowercased() && url.host?.lowercased() == expected.host?.lowercased()
            && url.port == expected.port && url.path == expected.path && url.user == nil && url.fragment == nil
    }
}
