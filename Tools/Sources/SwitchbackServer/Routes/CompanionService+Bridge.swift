import Foundation
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback

/// The native-callback bridge: the provider answers this server (query, fragment or form_post); the
/// server redeems the code and sends the browser to the app's deep link with a one-time code, never tokens.
extension CompanionService {
    static let bridgeCallbackPath = CompanionAPI.Path.bridgeCallback

    struct BridgeRecord: Codable {
        let outcome: SignInOutcome
        let bindingDigest: String
    }

    /// `POST /bridge/start`: checks the scheme against the allow-list and the path, then starts the
    /// authorization whose answer comes back to this server.
    func startBridge(_ request: Request) async throws -> Response {
        guard let bridge = configuration.bridge else { throw CompanionError(.notConfigured, "the native-callback bridge is off") }
        let body = try await decode(CompanionAPI.BridgeStart.self, from: request)
        guard bridge.schemes.contains(body.scheme) else {
            throw CompanionError(.notAllowed, "the deep-link scheme is not on this server's allow-list")
        }
        guard Self.isSafeReturnPath(body.path) else {
            throw CompanionError(.invalidRequest, "path must start with / and hold only letters, digits, /, -, _ and . (no empty or dot segments)")
        }
        guard Secrets.isPlausible(body.binding) else { throw CompanionError(.invalidRequest, "binding must be 16…512 printable characters") }
        if bridge.responseType == .idTokenToken, body.responseMode == .query {
            throw CompanionError(.invalidRequest, "implicit tokens are never sent in a query; use fragment or form_post")
        }
        let session = try await startAuthorization(
            redirectURI: url(Self.bridgeCallbackPath),
            purpose: .bridge(scheme: body.scheme, path: body.path, bindingDigest: Secrets.digest(body.binding)),
            options: AuthorizationOptions(responseType: bridge.responseType, responseMode: body.responseMode, acrValues: body.acrValues ?? [])
        )
        return Replies.json(
            CompanionAPI.AuthorizationStarted(authorizationURL: session.authorizationURL.absoluteString, expiresIn: Int(Self.authorizationLifetime)))
    }

    /// The return path rule the app's ``HybridBridge`` applies too.
    static func isSafeReturnPath(_ path: String) -> Bool { HybridBridge.isSafePath(path) }

    /// `GET /bridge/callback`: a query answer is finished here; without a query the answer is in the
    /// fragment, which only the browser sees, so a minimal page posts it back.
    func bridgeCallback(_ request: Request) async throws -> Response {
        guard let bridge = configuration.bridge else { throw CompanionError(.notConfigured, "the native-callback bridge is off") }
        guard let query = request.uri.query, !query.isEmpty else {
            return Self.fragmentForwardingPage(action: url(CompanionAPI.Path.bridgeFragment), returnSchemes: bridge.schemes)
        }
        guard let callback = url(Self.bridgeCallbackPath, query: query) else {
            throw CompanionError(.invalidRequest, "the answer's query is malformed")
        }
        let state = Self.parameters(of: callback)["state"]
        return try await finishBridge(.redirect(callback), state: state)
    }

    /// `POST /bridge/callback`: a form_post answer.
    func bridgeFormPost(_ request: Request) async throws -> Response {
        let form = try await self.form(from: request)
        return try await finishBridge(.formPost(url(Self.bridgeCallbackPath), body: form.raw), state: form.fields["state"])
    }

    /// `POST /bridge/fragment`: the fragment, forwarded by the page.
    func bridgeFragment(_ request: Request) async throws -> Response {
        let form = try await self.form(from: request)
        guard let fragment = form.fields["fragment"], !fragment.isEmpty,
            let callback = URL(string: url(Self.bridgeCallbackPath).absoluteString + "#" + fragment)
        else { throw CompanionError(.invalidRequest, "no answer was forwarded") }
        return try await finishBridge(.redirect(callback), state: Self.parameters(of: callback)["state"])
    }

    private func finishBridge(_ callback: AuthorizationCallback, state: String?) async throws -> Response {
        guard let bridge = configuration.bridge else { throw CompanionError(.notConfigured, "the native-callback bridge is off") }
        let pending = try await takeAuthorization(state: state, for: .bridge)
        guard case .bridge(let scheme, let path, let bindingDigest) = pending.purpose else {
            throw CompanionError(.invalidState, "this state belongs to another route")
        }
        // The allow-list is checked again: it may have changed since the sign-in started.
        guard bridge.schemes.contains(scheme) else { throw CompanionError(.notAllowed, "the deep-link scheme is no longer allowed") }
        let base = "\(scheme)://oauth\(path)"
        let outcome: SignInOutcome
        do {
            outcome = try await complete(callback, pending: pending)
        } catch let error as CompanionError where error.code == .signInFailed || error.code == .providerFailed {
            return Replies.redirect(base + "?error=" + (error.code == .signInFailed ? "access_denied" : "server_error"), status: .found)
        }
        let record = BridgeRecord(outcome: bridge.returns == .tokens ? outcome : outcome.withoutTokens(), bindingDigest: bindingDigest)
        let code = try await store.issue(.bridgeCode, record, expiresAt: clock.now().addingTimeInterval(bridge.codeLifetime), entropy: entropy)
        metrics.record(.bridgeCodeIssued)
        logger.info("bridge returning to the app", metadata: ["scheme": "\(scheme)"])
        return Replies.redirect(base + "?handoffotp=" + code, status: .found)
    }

    /// `POST /bridge/redeem`: the app (or its web app) redeems the deep link's code once, with the binding
    /// it started with, and receives the tokens or a session.
    func redeemBridge(_ request: Request) async throws -> Response {
        guard let bridge = configuration.bridge else { throw CompanionError(.notConfigured, "the native-callback bridge is off") }
        let body = try await decode(CompanionAPI.BridgeRedeem.self, from: request)
        guard Secrets.isIssued(body.handoffotp),
            let record = try await store.redeem(.bridgeCode, secret: body.handoffotp, as: BridgeRecord.self, now: clock.now())
        else {
            throw CompanionError(.invalidGrant, "this code has expired or was already used")
        }
        guard ConstantTime.equals(record.bindingDigest, Secrets.digest(body.binding)) else {
            logger.warning("bridge code presented with another binding; the code is used up")
            throw CompanionError(.invalidGrant, "this code belongs to another session")
        }
        metrics.record(.bridgeCodeRedeemed)
        return Replies.json(try await deliver(record.outcome, as: bridge.returns))
    }

    /// What the fragment-forwarding page runs: post the fragment, then drop it from the address bar.
    static let fragmentScript = """
        var answer = window.location.hash.substring(1);
        if (answer) { document.getElementById("fragment").value = answer; history.replaceState(null, "", window.location.pathname); document.getElementById("forward").submit(); }
        else { document.getElementById("message").textContent = "This page was opened without a sign-in answer."; }
        """

    /// A page that posts its own fragment to `action` (the fragment never reaches a server otherwise). The
    /// action is this server's absolute URL, so a path prefix in `publicURL` is kept; the CSP allows only
    /// this page's script, by its hash. Its `form-action` names the app's return schemes as well as this
    /// server: the POST is answered with a redirect to `<scheme>://oauth/…`, and browsers hold a form's
    /// redirects to `form-action` (without them WebKit stopped the return to the app).
    static func fragmentForwardingPage(action: URL, returnSchemes: [String]) -> Response {
        let body = """
            <!doctype html>
            <html><head><title>Finishing sign-in</title></head><body>
            <form method="post" action="\(Replies.escape(action.absoluteString))" id="forward"><input type="hidden" name="fragment" id="fragment"></form>
            <p id="message">Finishing sign-in…</p>
            <noscript>This step needs JavaScript.</noscript>
            <script>\(fragmentScript)</script>
            </body></html>

            """
        return Replies.html(body, script: fragmentScript, formTargets: returnSchemes.map { "\($0.lowercased()):" })
    }
}
