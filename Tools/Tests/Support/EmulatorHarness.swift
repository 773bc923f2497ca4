// Shared by the Tools test targets (each links this file): the emulator started for one test, the core
// client pointed at it, and client keys for private_key_jwt.
import Crypto
import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator

enum EmulatorHarness {
    static func client(
        _ emulator: Emulator, clientID: String = "native-rs", authentication: ClientAuthentication = .none,
        par: ClientConfiguration.PARPolicy = .never
    ) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: clientID, redirectURI: URL(string: "com.example.app:/oauth/callback")!, authentication: authentication,
                scopes: ["openid", "profile", "email"], pushedAuthorization: par
            ),
            provider: .discovery(issuer: emulator.issuer)
        )
    }

    /// Runs `body` against a fresh emulator and stops it afterwards, whatever `body` does.
    static func withEmulator(
        profile: Profile = .generic, configuration: EmulatorConfiguration = .defaults, _ body: (Emulator) async throws -> Void
    ) async throws {
        let emulator = try await Emulator.start(profile: profile, configuration: configuration)
        do {
            try await body(emulator)
        } catch {
            await emulator.stop()
            throw error
        }
        await emulator.stop()
    }

    struct Keys {
        let signer: ClientAssertionSigner
        let jwks: JSONValue
        let pem: String
    }

    static func clientKeys(kid: String = "client-key-1") async throws -> Keys {
        let key = P256.Signing.PrivateKey()
        let jwk: JSONValue = .object(
            PublicJWK.p256(key.publicKey).merging(["kid": .string(kid), "use": .string("sig"), "alg": .string("ES256")]) { $1 })
        let signer = try await ClientAssertionSigner(algorithm: .es256, privateKeyPEM: key.pemRepresentation, keyID: kid)
        return Keys(signer: signer, jwks: .object(["keys": .array([jwk])]), pem: key.pemRepresentation)
    }
}

struct RigFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
