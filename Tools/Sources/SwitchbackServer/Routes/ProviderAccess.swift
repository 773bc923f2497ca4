import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback

/// The server's confidential client at the provider: one ``OIDCClient`` per redirect URI it redeems
/// codes for, sharing the client authentication.
actor ProviderAccess {
    let configuration: ServerConfiguration.Provider
    private let authentication: ClientAuthentication
    private let decryptionKeys: [DecryptionKey]
    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let entropy: any EntropySource
    private let logger: Logger
    private var clients: [URL: OIDCClient] = [:]

    init(
        _ configuration: ServerConfiguration.Provider, transport: any HTTPTransport, clock: any WallClock, entropy: any EntropySource, logger: Logger
    ) async throws {
        self.configuration = configuration
        let credentials = try await configuration.credentials()
        authentication = credentials.authentication
        decryptionKeys = credentials.decryptionKeys
        self.transport = transport
        self.clock = clock
        self.entropy = entropy
        self.logger = logger
    }

    /// The client redeeming codes sent to `redirectURI`.
    func client(for redirectURI: URL) -> OIDCClient {
        if let client = clients[redirectURI] { return client }
        let client = OIDCClient(
            configuration: ClientConfiguration(
                clientID: configuration.clientID, redirectURI: redirectURI, authentication: authentication, scopes: configuration.scopes,
                requiredACRValues: Set(configuration.acrValues), dpop: configuration.dpop ? .perSignIn : .off, decryptionKeys: decryptionKeys,
                identitySource: configuration.identitySource, requiredClaims: configuration.requiredClaims.mapValues(Set.init)
            ),
            provider: configuration.metadata.map(ProviderSource.static) ?? .discovery(issuer: configuration.issuer), transport: transport,
            clock: clock, entropy: entropy, logger: logger
        )
        clients[redirectURI] = client
        return client
    }

    /// Sends a request to another server of the provider's (Norwegian BankID's biometrics server) through
    /// the same transport.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await transport.send(request)
    }

    /// Any of the clients, for calls that do not depend on a redirect URI (introspection, permissions).
    func anyClient() -> OIDCClient {
        client(for: clients.keys.first ?? URL(string: "https://switchback.invalid/unused")!)
    }
}
