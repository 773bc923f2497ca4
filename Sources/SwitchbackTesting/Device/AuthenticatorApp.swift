public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// Plays an authenticator app (the UAE Pass app, say) against an emulator: reads the deep link the
/// provider's page opened, tells the provider what the user decided, and says which URL the app opens
/// next — the return URL from the deep link, exactly as received (rewritten or not).
///
/// ```swift
/// let app = AuthenticatorApp(issuer: URL(string: emulator.issuer)!)
/// let next = try await app.respond(to: deepLink, with: .approve())   // successurl, to open
/// ```
public struct AuthenticatorApp: Sendable {
    /// The emulator the app's backend is.
    public let issuer: URL
    private let transport: any HTTPTransport

    public init(issuer: URL, transport: any HTTPTransport = URLSessionTransport()) {
        self.issuer = issuer
        self.transport = transport
    }

    /// What a deep link asks of the app.
    public struct Launch: Sendable, Equatable {
        public let scheme: String
        /// The provider's transaction reference.
        public let reference: String
        /// Where to go when the user approves, and when they decline: `successurl`/`failureurl` in
        /// either spelling (decoded once more when the provider encoded them twice), or an
        /// `app_callback_uri` / `app_switch_url` / `app_launch_url` / `redirect` (Swedish BankID; `null`
        /// is none) for both.
        public let successURL: URL?
        public let failureURL: URL?
        /// `closeondone=true`: the app closes instead of returning when there is nowhere to go.
        public let closeOnDone: Bool
    }

    /// What the user does in the app.
    public enum Decision: Sendable {
        /// Approves with biometrics, as `username` (the emulator's first user when nil).
        case approve(username: String? = nil)
        case decline
        /// Never answers: the provider's page keeps waiting.
        case ignore
        /// The app fails with its own reason, reported to the provider as `hintCode` (Swedish BankID's
        /// `certificateErr`: a blocked, revoked or invalid BankID).
        case fail(hintCode: String)
    }

    /// Reads a deep link; fails with ``AuthenticatorAppError/notALaunchLink`` when it is not one.
    public static func parse(_ deepLink: URL) throws(AuthenticatorAppError) -> Launch {
        guard let components = URLComponents(url: deepLink, resolvingAgainstBaseURL: false), let scheme = components.scheme,
            let reference = components.queryItems?.first(where: { $0.name == "txn" || $0.name == "autostarttoken" })?.value, !reference.isEmpty
        else {
            throw .notALaunchLink
        }
        func url(_ name: String) -> URL? {
            guard var value = components.queryItems?.first(where: { $0.name.lowercased() == name })?.value else { return nil }
            // A value encoded twice still reads `https%3A%2F%2F…` after one decoding.
            if !value.contains("://"), let decoded = value.removingPercentEncoding { value = decoded }
            guard let url = URL(string: value), url.scheme != nil else { return nil }
            return url
        }
        let callback = url("app_callback_uri") ?? url("app_switch_url") ?? url("app_launch_url") ?? url("redirect")
        return Launch(
            scheme: scheme, reference: reference, successURL: url("successurl") ?? callback, failureURL: url("failureurl") ?? callback,
            closeOnDone: components.queryItems?.first { $0.name == "closeondone" }?.value == "true"
        )
    }

    /// Sends the decision to the provider and returns the URL the app opens next: the success URL after
    /// an approval, the failure URL after a decline, nil when the user ignores the request.
    public func respond(to deepLink: URL, with decision: Decision) async throws -> URL? {
        let launch = try Self.parse(deepLink)
        // The app opens the request first (the user sees what they approve), then answers.
        try await post("open", [("txn", launch.reference)] + Self.user(decision))
        try await decide(reference: launch.reference, decision)
        switch decision {
        case .approve: return launch.successURL
        case .decline, .fail: return launch.failureURL
        case .ignore: return nil
        }
    }

    /// Sends the user's decision on the request `reference` (already open in the app); `match` is the
    /// number the user picked when the provider matches numbers.
    public func decide(reference: String, _ decision: Decision, match: String? = nil) async throws {
        let user = Self.user(decision)
        switch decision {
        case .approve: try await post("approve", [("txn", reference)] + user + (match.map { [("match", $0)] } ?? []))
        case .decline: try await post("decline", [("txn", reference)])
        case .ignore: try await post("ignore", [("txn", reference)])
        case .fail(let hintCode): try await post("fail", [("txn", reference), ("hintCode", hintCode)])
        }
    }

    /// Scans a QR code a provider's page shows (on another phone): the request it names opens in the app.
    /// Returns its reference.
    public func scan(_ content: String, as username: String? = nil) async throws -> String {
        let body = try await post("scan", [("qr", content)] + (username.map { [("username", $0)] } ?? []))
        guard case .object(let answer) = try JSONDecoder().decode(JSONValue.self, from: body), case .string(let reference)? = answer["txn"] else {
            throw AuthenticatorAppError.providerRefused(status: 200)
        }
        return reference
    }

    /// The requests waiting for `username` (push notifications): each reference with the numbers offered
    /// when the provider matches one.
    public func inbox(of username: String) async throws -> [(reference: String, choices: [String])] {
        var components = URLComponents(url: issuer.appendingPathComponent("authenticator/inbox"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "username", value: username)]
        guard let url = components?.url else { throw AuthenticatorAppError.notALaunchLink }
        let response = try await transport.send(HTTPRequest(method: .get, url: url))
        guard response.status == 200, case .object(let answer) = try JSONDecoder().decode(JSONValue.self, from: response.body),
            case .array(let requests)? = answer["requests"]
        else { throw AuthenticatorAppError.providerRefused(status: response.status) }
        return requests.compactMap { request in
            guard case .object(let fields) = request, case .string(let reference)? = fields["txn"] else { return nil }
            var choices: [String] = []
            if case .array(let offered)? = fields["choices"] {
                choices = offered.compactMap { if case .string(let choice) = $0 { choice } else { nil } }
            }
            return (reference, choices)
        }
    }

    private static func user(_ decision: Decision) -> [(String, String)] {
        if case .approve(let username?) = decision { [("username", username)] } else { [] }
    }

    @discardableResult
    private func post(_ action: String, _ fields: [(String, String)]) async throws -> Data {
        let response = try await transport.send(.form(issuer.appendingPathComponent("authenticator").appendingPathComponent(action), fields))
        guard response.status == 200 else { throw AuthenticatorAppError.providerRefused(status: response.status) }
        return response.body
    }
}

/// Why the simulated authenticator app could not act.
public enum AuthenticatorAppError: Error, Equatable, CustomStringConvertible {
    /// The URL carries no transaction reference (`txn`).
    case notALaunchLink
    /// The provider refused the decision (unknown or already decided transaction).
    case providerRefused(status: Int)

    public var description: String {
        switch self {
        case .notALaunchLink: "the URL is not an authenticator launch link (no txn)"
        case .providerRefused(let status): "the provider refused the decision (HTTP \(status))"
        }
    }
}
