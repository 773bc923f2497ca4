public import Foundation
public import Switchback

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
        let (path, fields): (String, [(String, String)]) =
            switch decision {
            case .approve(let username): ("approve", [("txn", launch.reference)] + (username.map { [("username", $0)] } ?? []))
            case .decline: ("decline", [("txn", launch.reference)])
            case .ignore: ("ignore", [("txn", launch.reference)])
            }
        // The app opens the request first (the user sees what they approve), then answers.
        let authenticator = issuer.appendingPathComponent("authenticator")
        let opened = try await transport.send(.form(authenticator.appendingPathComponent("open"), [("txn", launch.reference)]))
        guard opened.status == 200 else { throw AuthenticatorAppError.providerRefused(status: opened.status) }
        let response = try await transport.send(.form(authenticator.appendingPathComponent(path), fields))
        guard response.status == 200 else {
            throw AuthenticatorAppError.providerRefused(status: response.status)
        }
        switch decision {
        case .approve: return launch.successURL
        case .decline: return launch.failureURL
        case .ignore: return nil
        }
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
