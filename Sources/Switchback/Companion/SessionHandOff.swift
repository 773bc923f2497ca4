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
/// let handOff = SessionHandOff(companion: URL(string: "https://auth.example.com")!)
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

    /// The companion's base URL: https, or http on a loopback host.
    public let companion: URL
    /// The key the app's access tokens are bound to (RFC 9449), when the provider issues DPoP-bound
    /// tokens: each request then carries `Authorization: DPoP` and a fresh proof by this key.
    public let dpop: DPoPKey?
    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let entropy: any EntropySource
    private let logger: Logger

    public init(
        companion: URL, dpop: DPoPKey? = nil, transport: any HTTPTransport = URLSessionTransport(), clock: any WallClock = SystemClock(),
        entropy: any EntropySource = SystemEntropy(), logger: Logger = Logger(label: "switchback.handoff")
    ) {
        self.companion = companion
        self.dpop = dpop
        self.transport = transport
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
        guard EndpointSecurity.isAcceptable(companion) else {
            throw SwitchbackError(.insecureEndpoint, "the companion \(Redaction.describe(companion)) is not HTTPS")
        }
        guard
            destination.scheme?.lowercased() == "https"
                || (destination.scheme?.lowercased() == "http" && EndpointSecurity.isLoopback(destination.host))
        else {
            throw SwitchbackError(.invalidURL, "a hand-off opens an https web app, not \(Redaction.describe(destination))")
        }
        guard !accessToken.isEmpty else { throw SwitchbackError(.invalidConfiguration, "a hand-off needs the app's access token") }
        let body = try JSONSerialization.data(withJSONObject: ["goto": destination.absoluteString])
        let url = endpoint("handoff")
        var headers = ["Content-Type": "application/json", "Accept": "application/json"]
        if let dpop {
            headers["Authorization"] = "DPoP \(accessToken)"
            headers["DPoP"] = try dpop.proof(method: "POST", url: url, accessToken: accessToken, now: clock.now(), jti: entropy.token(bytes: 16))
        } else {
            headers["Authorization"] = "Bearer \(accessToken)"
        }
        let request = HTTPRequest(method: .post, url: url, headers: headers, body: body)
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as SwitchbackError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw SwitchbackError(.transportFailed, "the companion could not be reached", underlying: error)
        }
        guard response.status == 201 else {
            let refusal = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body)
            logger.notice("hand-off refused", metadata: ["status": "\(response.status)", "error": "\(refusal?.error ?? "-")"])
            throw SwitchbackError(
                .handOffRefused, "the companion refused the hand-off (HTTP \(response.status)\(refusal.map { ", \($0.error.prefix(40))" } ?? ""))",
                oauthError: refusal, httpStatus: response.status
            )
        }
        struct Issued: Decodable { let redeem_url: String? }
        guard let text = (try? JSONDecoder().decode(Issued.self, from: response.body))?.redeem_url, let redeem = URL(string: text),
            isRedeemRoute(redeem)
        else {
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

    private func endpoint(_ path: String) -> URL {
        companion.appendingPathComponent(path)
    }

    /// The companion's own origin and `…/handoff/redeem` path: a compromised or misconfigured answer
    /// cannot send the browser, and the code, anywhere else.
    private func isRedeemRoute(_ url: URL) -> Bool {
        let expected = endpoint("handoff/redeem")
        return url.scheme?.lowercased() == expected.scheme?.lowercased() && url.host?.lowercased() == expected.host?.lowercased()
            && url.port == expected.port && url.path == expected.path && url.user == nil && url.fragment == nil
    }
}
