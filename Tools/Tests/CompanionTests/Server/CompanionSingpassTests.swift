import Crypto
import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// The companion as Singpass's FAPI 2.0 client against the emulator's Singpass profile: a DPoP key per
/// sign-in that any instance sharing the store can use, and Login's authentication context forwarded
/// only when Singpass documents it.
@Suite("Companion as Singpass's FAPI client")
struct CompanionSingpassTests {
    static let redirect = "https://app.example.com/oauth/callback"

    /// The companion's keys, registered at the emulator (signing and `use: enc`) and written for its configuration.
    struct Keys {
        let directory: URL
        let jwks: JSONValue

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-singpass-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let signing = P256.Signing.PrivateKey()
            try signing.pemRepresentation.write(to: directory.appendingPathComponent("client.pem"), atomically: true, encoding: .utf8)
            let encryption = P256.KeyAgreement.PrivateKey()
            try encryption.pemRepresentation.write(to: directory.appendingPathComponent("enc.pem"), atomically: true, encoding: .utf8)
            let signingJWK: JSONValue = .object(
                PublicJWK.p256(signing.publicKey).merging(["kid": .string("sig-1"), "use": .string("sig"), "alg": .string("ES256")]) { $1 })
            let encryptionJWK = try DecryptionKey(pem: encryption.pemRepresentation, keyID: "enc-1").publicJWK(algorithm: "ECDH-ES+A256KW")
            jwks = .object(["keys": .array([signingJWK, .object(encryptionJWK)])])
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        func configuration(issuer: String, change: (inout ServerConfiguration.Provider) -> Void = { _ in }) -> ServerConfiguration {
            var provider = ServerConfiguration.Provider(
                issuer: issuer, clientID: "singpass-backend", privateKeyFile: directory.appendingPathComponent("client.pem").path,
                keyAlgorithm: "ES256", keyID: "sig-1", dpop: true,
                authorizationParameters: [SingpassAuthenticationContext.typeParameter: "APP_AUTHENTICATION_DEFAULT"],
                decryptionKeyFile: directory.appendingPathComponent("enc.pem").path, decryptionKeyID: "enc-1")
            change(&provider)
            return ServerConfiguration(
                port: 0, provider: provider, exchange: .init(redirectURIs: [CompanionSingpassTests.redirect], returns: .session))
        }
    }

    /// Runs `body` with a started emulator and stops it afterwards.
    static func withEmulator<Result>(_ keys: Keys, _ body: (Emulator) async throws -> Result) async throws -> Result {
        try await withStopping(try await emulator(keys), stop: { await $0.stop() }, body)
    }

    static func emulator(_ keys: Keys) async throws -> Emulator {
        var configuration = EmulatorConfiguration.defaults
        configuration.clients.append(
            .init(
                clientID: "singpass-backend", authentication: .privateKeyJWT, redirectURIs: [redirect], idTokenAlgorithm: "ES256",
                jwks: keys.jwks))
        return try await Emulator.start(
            profile: .singpass, configuration: configuration, logger: Logger(label: "emulator") { _ in SwiftLogNoOpLogHandler() })
    }

    static func post(_ companion: Companion, _ path: String, _ object: [String: Any]) async throws -> (status: Int, json: [String: Any]) {
        let response = try await URLSessionTransport().send(
            HTTPRequest(
                method: .post, url: try #require(URL(string: companion.baseURL.absoluteString + path)),
                headers: ["Content-Type": "application/json"], body: try JSONSerialization.data(withJSONObject: object)))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    /// Alice at the Singpass page: the app approves, the page continues, and the provider redirects.
    static func signIn(_ emulator: Emulator, authorizationURL: String) async throws -> String {
        let browser = EmulatorBrowser()
        let (link, page) = try await browser.handOff(try #require(URL(string: authorizationURL)))
        _ = try await AuthenticatorApp(issuer: try #require(URL(string: emulator.issuer))).respond(to: link, with: .approve())
        let marker = try #require(page.range(of: "id=\"continue\" href=\""))
        let end = try #require(page[marker.upperBound...].firstIndex(of: "\""))
        let next = try #require(URL(string: emulator.issuer + EmulatorBrowser.unescape(String(page[marker.upperBound..<end]))))
        guard case .redirect(let location) = try await browser.open(next) else { throw RigFailure("Singpass did not redirect") }
        return location
    }

    @Test(
        "a sign-in started at one instance is redeemed at another sharing the store: the DPoP key travels in the sealed record, no key file; two sign-ins, two keys",
        arguments: StoreKind.available)
    func keyPerSignInAcrossInstances(kind: StoreKind) async throws {
        let keys = try Keys()
        defer { keys.remove() }
        try await Self.withEmulator(keys) { emulator in
            try await kind.with { store, second in
                let quiet = Logger(label: "companion") { _ in SwiftLogNoOpLogHandler() }
                let first = try await Companion.start(keys.configuration(issuer: emulator.issuer), store: store, logger: quiet)
                let other = try await Companion.start(keys.configuration(issuer: emulator.issuer), store: try await second(), logger: quiet)
                var thumbprints: Set<String> = []
                for _ in 0..<2 {
                    let binding = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                    let started = try await Self.post(
                        first, "/exchange/start",
                        [
                            "redirect_uri": Self.redirect, "binding": binding,
                            "parameters": ["authentication_context_type": "APP_AUTHENTICATION_DEFAULT"],
                        ])
                    #expect(started.status == 200, "\(started.json)")
                    let url = try #require(started.json["authorization_url"] as? String)
                    let callback = try await Self.signIn(emulator, authorizationURL: url)
                    // The provider's record of the code names the key it is bound to: read it from the pending record's session.
                    let state = try #require(URLComponents(string: callback)?.queryItems?.first { $0.name == "state" }?.value)
                    let pending = try #require(
                        try await store.lookUp(.authorization, secret: state, as: PendingAuthorization.self, now: Date()))
                    thumbprints.insert(try #require(pending.session.dpopKey).thumbprint)
                    let exchanged = try await Self.post(other, "/exchange", ["callback_url": callback, "binding": binding])
                    #expect(exchanged.status == 200, "\(exchanged.json)")
                    #expect(exchanged.json["sub"] as? String == "9b1f7c2e-alice" && exchanged.json["session"] is String)
                }
                #expect(thumbprints.count == 2, "each sign-in has a key of its own")
                await other.stop()
                await first.stop()
            }
        }
    }

    @Test(
        "authentication_context_type: the server's own goes to Singpass and an app may only repeat it; forwarded on request, an undocumented one or a bad message is refused before Singpass; without any, Singpass refuses"
    )
    func authenticationContext() async throws {
        let keys = try Keys()
        defer { keys.remove() }
        try await Self.withEmulator(keys) { emulator in
            let quiet = Logger(label: "companion") { _ in SwiftLogNoOpLogHandler() }
            func start(_ companion: Companion, _ parameters: [String: String]) async throws -> (status: Int, json: [String: Any]) {
                try await Self.post(
                    companion, "/exchange/start",
                    ["redirect_uri": Self.redirect, "binding": Base64URL.encode(SystemEntropy().randomBytes(count: 32)), "parameters": parameters])
            }
            // The server sets the context: an app repeating it, or sending none, signs in; another value is refused.
            let fixed = try await Companion.start(keys.configuration(issuer: emulator.issuer), logger: quiet)
            #expect(try await start(fixed, [:]).status == 200)
            #expect(try await start(fixed, ["authentication_context_type": "APP_AUTHENTICATION_DEFAULT"]).status == 200)
            for refused in [
                ["authentication_context_type": "BANK_FUNDS_TRANSFER_LOCAL"], ["authentication_context_message": "Approve to get your refund"],
            ] {
                let answer = try await start(fixed, refused)
                #expect(answer.status == 400 && answer.json["error"] as? String == "not_allowed", "\(refused): \(answer.json)")
            }
            await fixed.stop()

            // A deployment that lets apps choose: only Singpass's documented values and allowed messages go on.
            let chosen = try await Companion.start(
                keys.configuration(issuer: emulator.issuer) {
                    $0.authorizationParameters = [:]
                    $0.forwardedParameters += [SingpassAuthenticationContext.typeParameter, SingpassAuthenticationContext.messageParameter]
                }, logger: quiet)
            #expect(
                try await start(chosen, ["authentication_context_type": "BANK_CASA_OPENING", "authentication_context_message": "Open an account"])
                    .status
                    == 200)
            for refused in [
                ["authentication_context_type": "LOGIN"],
                ["authentication_context_type": "APP_AUTHENTICATION_DEFAULT", "authentication_context_message": "<script>"],
                ["authentication_context_message": "a message alone"],
            ] {
                let answer = try await start(chosen, refused)
                #expect(answer.status == 400 && answer.json["error"] as? String == "invalid_request", "\(refused): \(answer.json)")
            }
            // Singpass refuses a Login request without a context; the companion passes that on as a provider failure.
            let bare = try await start(chosen, [:])
            #expect(bare.status != 200, "\(bare.json)")
            await chosen.stop()
        }
    }
}
