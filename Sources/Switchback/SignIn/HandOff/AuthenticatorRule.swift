public import Foundation

/// How one provider's pages hand off to its authenticator app: the app's scheme in each environment,
/// the deep-link parameters that carry the return URLs, and the hosts those URLs must belong to.
///
/// ```swift
/// let uaePass = AuthenticatorRule(
///     schemes: [.production: "uaepass", .staging: "uaepassstg"],
///     successParameters: ["successurl"], failureParameters: ["failureurl"],
///     providerHosts: ["stg-id.uaepass.ae", "id.uaepass.ae"]
/// )
/// ```
public struct AuthenticatorRule: Sendable, Equatable, Codable {
    /// A provider environment; each may use its own authenticator app.
    public struct Environment: Hashable, Sendable, Codable, CustomStringConvertible {
        public let name: String
        public init(_ name: String) { self.name = name }
        public var description: String { name }

        public init(from decoder: any Decoder) throws { name = try decoder.singleValueContainer().decode(String.self) }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(name)
        }

        public static let production = Environment("production")
        public static let staging = Environment("staging")
        /// A provider's test environment beside staging (UAE Pass's QA app, `uaepassqa://`).
        public static let qa = Environment("qa")
    }

    /// The authenticator's URL scheme per environment.
    public var schemes: [Environment: String]
    /// Names of the parameters carrying the URL to go to after approval, compared case-insensitively.
    public var successParameters: [String]
    /// Names of the parameters carrying the URL to go to after a decline, compared case-insensitively.
    public var failureParameters: [String]
    /// Hosts the return URLs must be on (exactly); they must also be https.
    public var providerHosts: Set<String>

    public init(schemes: [Environment: String], successParameters: [String], failureParameters: [String] = [], providerHosts: Set<String>) {
        self.schemes = schemes.mapValues { $0.lowercased() }
        self.successParameters = successParameters.map { $0.lowercased() }
        self.failureParameters = failureParameters.map { $0.lowercased() }
        self.providerHosts = Set(providerHosts.map { $0.lowercased() })
    }

    /// Whether `url` opens this provider's authenticator, in any environment (a staging page may emit
    /// the production scheme).
    public func launches(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return schemes.values.contains(scheme)
    }
}
