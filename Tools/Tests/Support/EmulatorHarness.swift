import Crypto
import Foundation
@_spi(SwitchbackInternals) package import Switchback
package import SwitchbackEmulator

/// What the tools' tests share about the emulator: one started for a test, the core client pointed at it,
/// and client keys for private_key_jwt.
package enum EmulatorHarness {
    package static func client(
        _ emulator: Emulator, clientID: String = "native-rs", authentication: ClientAuthentication = .none,
        par: ClientConfiguration.PARPolicy = .never, clock: any WallClock = SystemClock()
    ) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: clientID, redirectURI: URL(string: "com.example.app:/oauth/callback")!, authentication: authentication,
                scopes: ["openid", "profile", "email"], pushedAuthorization: par
            ),
            provider: .discovery(issuer: emulator.issuer), clock: clock
        )
    }

    /// Runs `body` against a fresh emulator and stops it afterwards, whatever `body` does.
    package static func withEmulator(
        profile: Profile = .generic, configuration: EmulatorConfiguration = .defaults, clock: any WallClock = SystemClock(),
        _ body: (Emulator) async throws -> Void
    ) async throws {
        var configuration = configuration
        if configuration.signingKeys == nil { configuration.signingKeys = .perProcess }
        let emulator = try await Emulator.start(profile: profile, configuration: configuration, clock: clock)
        do {
            try await body(emulator)
        } catch {
            await emulator.stop()
            throw error
        }
        await emulator.stop()
    }

    package struct Keys {
        package let signer: ClientAssertionSigner
        package let jwks: JSONValue
        package let pem: String
    }

    package static func clientKeys(kid: String = "client-key-1") async throws -> Keys {
        let key = P256.Signing.PrivateKey()
        let jwk: JSONValue = .object(
            PublicJWK.p256(key.publicKey).merging(["kid": .string(kid), "use": .string("sig"), "alg": .string("ES256")]) { $1 })
        let signer = try await ClientAssertionSigner(algorithm: .es256, privateKeyPEM: key.pemRepresentation, keyID: kid)
        return Keys(signer: signer, jwks: .object(["keys": .array([jwk])]), pem: key.pemRepresentation)
    }
}

package struct RigFailure: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
