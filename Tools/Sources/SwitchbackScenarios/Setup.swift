import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import Crypto
import SwitchbackServer

/// What a scenario needs for one preset: the emulator profile that reproduces the provider, the client
/// registered there, and the authenticator apps on the device.
struct Setup: Sendable {
    private let basePreset: ProviderPreset
    /// The confidential client the companion plays for presets whose code the app cannot redeem itself
    /// (Norwegian BankID: permission and code exchange go through the companion), and for sign-ins the
    /// companion runs (Singpass's FAPI client, backend completion).
    let backendClient: (clientID: String, secret: String)?
    /// How the companion runs the sign-in, when it does: the app then has no client at the provider.
    let companionRoute: CompanionRoute?
    /// The companion's private_key_jwt and ID-token decryption keys (Singpass), written for its configuration (its
    /// DPoP keys are made per sign-in).
    let backendKeys: BackendKeys?

    struct BackendKeys: Sendable {
        let clientKey: String
        let decryptionKey: String
    }
    let profile: Profile
    let configuration: EmulatorConfiguration
    let client: ClientConfiguration
    /// Authenticator schemes, and whether each is the production app.
    let authenticatorSchemes: [(String, Bool)]
    /// The provider's endpoints are documented rather than discovered (UAE Pass): the app and the
    /// companion are given them.
    let documentedEndpoints: Bool
    /// The app's universal link the companion's response page forwards the broker's answer to (MitID
    /// through Signaturgruppen in a Safari view, whose last redirect loads as a page); nil: none.
    let responseLink: URL?

    static let nativeRedirect = URL(string: "com.example.app:/oauth/callback")!
    /// The domains authenticator apps claim as universal links, by their scheme.
    static let universalLinkHosts = ["bankid": "app.bankid.com", "mitid": MitID.appSwitchHost]
    static let universalRedirect = URL(string: "https://app.example.com/oauth/callback")!

    init(_ scenario: Scenario) async throws {
        var configuration = EmulatorConfiguration.defaults
        // One pair of signing keys for the run's emulators, not an RSA key generated for each.
        configuration.signingKeys = .perProcess
        configuration.clients[0].appReturnURLs.append("com.example.app:/handoff")
        var variants = scenario.variants
        var client = ClientConfiguration(clientID: "native-rs", redirectURI: Self.nativeRedirect)
        var preset: ProviderPreset
        var backendClient: (clientID: String, secret: String)?
        var companionRoute: CompanionRoute?
        var backendKeys: BackendKeys?
        var documentedEndpoints = false
        var responseLink: URL?
        let profileName: String
        switch scenario.provider {
        case "uaepass":
            // As UAE Pass documents it: the token endpoint authenticates the client with a secret, so the
            // app's companion redeems the code; the token response has no ID token, so the identity comes
            // from userinfo; there is no discovery document, so the documented endpoints are given.
            client = ClientConfiguration(
                clientID: "backend", redirectURI: Self.nativeRedirect, pushedAuthorization: .never, identitySource: .userInfo)
            backendClient = ("backend", "backend-secret")
            documentedEndpoints = true
            preset = .uaePass
            profileName = "uaepass"
            if scenario.environment == .staging { variants.insert(scenario.stagingSchemeBug ? "staging-bug" : "staging", at: 0) }
            authenticatorSchemes = [("uaepass", true), ("uaepassstg", false)]
        case "bankid-no":
            // Permissions are registered, and codes redeemed, by a confidential client: the app's backend
            // companion holds the secret. The app uses the client ID alone, without PAR (which needs the secret).
            client = ClientConfiguration(clientID: "backend", redirectURI: Self.nativeRedirect, pushedAuthorization: .never)
            configuration.clients[2].appReturnURLs = EmulatorConfiguration.defaultAppReturnURLs
            preset = .bankIDNorway(permission: { _ in [] })
            backendClient = ("backend", "backend-secret")
            profileName = "bankid-no"
            authenticatorSchemes = [("bankid-no", true)]
        case "mitid-idura":
            // Idura: login_hint, and the redirect URI caught by the authentication session (no page to tap).
            preset = .mitID(.idura)
            profileName = "mitid"
            variants.insert(MitIDBroker.idura.rawValue, at: 0)
            client = ClientConfiguration(clientID: "native-rs", redirectURI: Self.universalRedirect)
            authenticatorSchemes = [("mitid", true)]
        case "mitid":
            // Signaturgruppen: idp_params, and a plain redirect to the https redirect URI. An authentication
            // session catches it; a Safari view loads it, so the redirect URI is the app's page with the
            // button back (the companion's response page, on api.example.com, opening app.example.com).
            preset = .mitID(.signaturgruppen)
            profileName = "mitid"
            client = ClientConfiguration(clientID: "native-rs", redirectURI: Self.universalRedirect)
            authenticatorSchemes = [("mitid", true)]
            if !scenario.backendCompletion, (scenario.strategy ?? .safariView) == .safariView, !scenario.withoutResponsePage {
                let page = Self.companionURL + CompanionAPI.Path.response
                client = ClientConfiguration(clientID: "native-rs", redirectURI: URL(string: page)!)
                configuration.clients[0].redirectURIs.append(page)
                responseLink = Self.universalRedirect
            }
            if scenario.backendCompletion {
                // The broker answers the companion's page, which finishes the sign-in and links back to the app.
                backendClient = ("backend", "backend-secret")
                companionRoute = .completion
                configuration.clients[2].appReturnURLs = EmulatorConfiguration.defaultAppReturnURLs
                configuration.clients[2].redirectURIs.append(Self.companionURL + "/complete")
            }
        case "bankid-se":
            preset = .bankIDSweden
            profileName = "bankid-se"
            authenticatorSchemes = [("bankid", true)]
        case "singpass":
            let key = P256.Signing.PrivateKey()
            let jwk: JSONValue = .object(
                PublicJWK.p256(key.publicKey).merging(["kid": .string("app-key-1"), "use": .string("sig"), "alg": .string("ES256")]) { $1 })
            // Singpass encrypts every ID token to the client's registered use:enc key.
            let encryption = P256.KeyAgreement.PrivateKey()
            let encryptionJWK = try DecryptionKey(pem: encryption.pemRepresentation, keyID: "app-enc-1").publicJWK(algorithm: "ECDH-ES+A256KW")
            configuration.clients.append(
                .init(
                    clientID: "singpass-app", authentication: .privateKeyJWT, redirectURIs: [Self.universalRedirect.absoluteString],
                    idTokenAlgorithm: "ES256",
                    jwks: .object(["keys": .array([jwk, .object(encryptionJWK)])]), appReturnURLs: EmulatorConfiguration.defaultAppReturnURLs
                ))
            // The FAPI client (private_key_jwt, PAR, DPoP, decryption) is the companion; the app relays the response.
            backendKeys = BackendKeys(clientKey: key.pemRepresentation, decryptionKey: encryption.pemRepresentation)
            companionRoute = .exchange(redirectURI: Self.universalRedirect)
            preset = .singpass
            profileName = "singpass"
            authenticatorSchemes = [("singpass", true)]
        case "idme", "generic":
            preset = scenario.provider == "idme" ? .idMe : .generic
            profileName = scenario.provider
            authenticatorSchemes = []
        default:
            throw SwitchbackError(
                .invalidConfiguration, "unknown provider \(scenario.provider); known: \(Scenario.providers.joined(separator: ", "))")
        }
        switch Profile.named(scenario.emulatorProfile ?? profileName, variants: variants) {
        case .success(let profile): self.profile = profile
        case .failure(let unknown): throw SwitchbackError(.invalidConfiguration, unknown.description)
        }
        self.basePreset = preset
        self.backendClient = backendClient
        self.companionRoute = companionRoute
        self.backendKeys = backendKeys
        self.documentedEndpoints = documentedEndpoints
        self.responseLink = responseLink
        if scenario.concurrentRefresh != nil {
            // Strict rotation (RFC 9700 §4.14.2): a second refresh with the same token would revoke the family.
            configuration.refreshTokenReuse = .revokesFamily
        }
        if scenario.handOff != nil {
            // The app's access tokens are issued for the companion (RFC 9068 `aud`, and introspection's
            // `aud`), the audience its hand-off requires.
            configuration.accessTokenAudience = Self.companionURL
        }
        self.configuration = configuration
        self.client = client
    }

    /// Where the app and the companion find the provider's metadata: discovery, or UAE Pass's documented
    /// endpoint layout on the emulator.
    func providerSource(issuer: String) -> ProviderSource {
        guard documentedEndpoints, let base = URL(string: issuer) else { return .discovery(issuer: issuer) }
        return .static(.uaePass(base: base))
    }

    func authenticatorName(_ scheme: String) -> String {
        switch scheme {
        case "uaepass": "UAE Pass (production app)"
        case "uaepassstg": "UAE Pass (staging app)"
        case "bankid-no", "bankid": "BankID"
        case "mitid": "MitID"
        case "singpass": "Singpass"
        default: scheme
        }
    }

    /// The preset for the emulator at `issuer`: its pages are on the issuer's host, and when the app's
    /// code goes to a backend client the permission hook asks the companion for the permission, as the
    /// app does.
    /// `statement` is the shop's backend registering this order's statement with the companion.
    func preset(issuer: URL, companion: CompanionClient?, statement: @escaping @Sendable () async throws -> String) -> ProviderPreset {
        var preset = basePreset.serving(from: [issuer.host ?? "127.0.0.1"])
        if backendClient != nil, companionRoute == nil, let companion {
            preset.permission = { try await companion.permissionParameters(for: $0, statement: try await statement()) }
        }
        return preset
    }

    /// The permission proxy's backend token, which the shop's backend sends to register a statement.
    static let backendToken = "demo-shop-backend-token-0123456789abcdef"

    /// The order the demo's user approves with Norwegian BankID: a payment, in the shape of BankID's examples.
    static let payment: JSONValue = .object([
        "payments": .array([
            .object([
                "paymentId": .string("demo-1"), "amount": .string("100.00"), "currency": .string("NOK"), "creditorName": .string("Example Shop"),
            ])
        ])
    ])

    /// Where the app's companion completion page links back to.
    static let completionLink = "https://app.example.com/signed-in"
    /// The companion's public address, which the device resolves to its loopback port: MitID brokers
    /// accept only https redirect URIs.
    static let companionURL = "https://api.example.com"

    /// Turns on session hand-off: the companion, at its public name (`https://api.example.com`, which the
    /// device and the engine resolve to its loopback port), allows its own `/session` page as the one
    /// destination, and accepts the app's access tokens (checked by introspection at the provider, as the
    /// backend client).
    func allowHandOff(_ configuration: inout ServerConfiguration, issuer: String) throws {
        guard backendClient == nil, companionRoute == nil else {
            throw SwitchbackError(.invalidConfiguration, "a hand-off scenario runs with a preset whose companion has no other part (generic)")
        }
        configuration.publicURL = Self.companionURL
        configuration.provider = .init(issuer: issuer, clientID: "backend", clientSecret: "backend-secret")
        // The app's access tokens name the companion as their audience (see `init`), which the hand-off requires.
        configuration.handOff = .init(
            audience: Self.companionURL, allowedRedirects: [Self.companionURL + "/session"], acceptedClients: [client.clientID])
    }

    /// The companion's configuration: the app's association file, and for a backend client the
    /// permission proxy and the code exchange (returning tokens to the app), or the route it runs sign-ins
    /// through (returning a session). Key files go in `directory`.
    func companionConfiguration(issuer: String, associations: [AppAssociation], directory: URL) throws -> ServerConfiguration {
        if let keys = backendKeys, case .exchange(let redirectURI) = companionRoute {
            let clientKey = directory.appendingPathComponent("client-key.pem")
            let decryptionKey = directory.appendingPathComponent("decryption-key.pem")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try keys.clientKey.write(to: clientKey, atomically: true, encoding: .utf8)
            try keys.decryptionKey.write(to: decryptionKey, atomically: true, encoding: .utf8)
            return ServerConfiguration(
                port: 0,
                provider: .init(
                    issuer: issuer, clientID: "singpass-app", privateKeyFile: clientKey.path, keyAlgorithm: "ES256", keyID: "app-key-1",
                    dpop: true, authorizationParameters: [SingpassAuthenticationContext.typeParameter: "APP_AUTHENTICATION_DEFAULT"],
                    decryptionKeyFile: decryptionKey.path, decryptionKeyID: "app-enc-1"
                ),
                exchange: .init(redirectURIs: [redirectURI.absoluteString], returns: .session), associations: associations
            )
        }
        if let responseLink {
            return ServerConfiguration(
                port: 0, publicURL: Self.companionURL, associations: associations, responsePage: .init(appLink: responseLink.absoluteString))
        }
        guard let (clientID, secret) = backendClient else { return ServerConfiguration(port: 0, associations: associations) }
        if companionRoute == .completion {
            return ServerConfiguration(
                port: 0, publicURL: Self.companionURL,
                // Signaturgruppen's identity provider is the deployment's; the app forwards MitID's app switch alone.
                provider: .init(
                    issuer: issuer, clientID: clientID, clientSecret: secret, forwardedParameters: ["idp_params"],
                    authorizationParameters: ["idp_values": "mitid"]),
                completion: .init(appLink: Self.completionLink, returns: .session, maximumWait: 5), associations: associations
            )
        }
        var metadata: ProviderMetadata?
        if case .static(let documented) = providerSource(issuer: issuer) { metadata = documented }
        return ServerConfiguration(
            port: 0,
            provider: .init(issuer: issuer, clientID: clientID, clientSecret: secret, identitySource: client.identitySource, metadata: metadata),
            exchange: .init(redirectURIs: [Self.nativeRedirect.absoluteString], returns: .tokens),
            permission: .init(
                server: issuer + "/biometrics", appCallbackURIs: EmulatorConfiguration.defaultAppReturnURLs, type: "payment.v1",
                backendToken: Self.backendToken),
            associations: associations
        )
    }
}
