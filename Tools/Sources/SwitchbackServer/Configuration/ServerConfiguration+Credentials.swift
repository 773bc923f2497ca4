import Foundation
@_spi(SwitchbackInternals) import Switchback

// The provider section's key material, read and parsed once: at load, so that a key that cannot be used
// names its setting before anything listens, and again when the companion starts.
extension ServerConfiguration.Provider {
    /// How the companion authenticates to the provider, and the keys it decrypts ID tokens with.
    struct Credentials: Sendable {
        let authentication: ClientAuthentication
        let decryptionKeys: [DecryptionKey]
    }

    /// Reads the client secret or the `private_key_jwt` key, and the decryption key, from the section's
    /// values or the files they name. A file that cannot be read or a key that cannot be parsed is an
    /// ``SwitchbackError/Code/invalidConfiguration`` naming its setting, never the key itself.
    func credentials() async throws -> Credentials {
        let authentication: ClientAuthentication
        if let secret = clientSecret {
            authentication = .clientSecretBasic(secret: secret)
        } else if let (setting, pem) = try Self.pem(privateKey, "privateKey", file: privateKeyFile, "privateKeyFile") {
            let algorithm = ClientAssertionSigner.Algorithm(rawValue: keyAlgorithm ?? "ES256") ?? .es256
            do {
                authentication = .privateKeyJWT(try await ClientAssertionSigner(algorithm: algorithm, privateKeyPEM: pem, keyID: keyID))
            } catch let error as SwitchbackError {
                throw SwitchbackError(.invalidConfiguration, "provider.\(setting): \(error.message)")
            }
        } else {
            throw SwitchbackError(.invalidConfiguration, "the provider needs clientSecret, privateKey or privateKeyFile")
        }
        var decryptionKeys: [DecryptionKey] = []
        if let (setting, pem) = try Self.pem(decryptionKey, "decryptionKey", file: decryptionKeyFile, "decryptionKeyFile") {
            do {
                decryptionKeys = [try DecryptionKey(pem: pem, keyID: decryptionKeyID)]
            } catch let error as SwitchbackError {
                throw SwitchbackError(.invalidConfiguration, "provider.\(setting): \(error.message)")
            }
        }
        return Credentials(authentication: authentication, decryptionKeys: decryptionKeys)
    }

    /// The PEM text given inline, or read from the file; with the name of the setting it came from. Inline
    /// text on one line may write its line breaks as `\n` (a line of `docker run --env-file` cannot hold a
    /// real one): PEM's base64 has no backslash, so nothing else reads that way.
    private static func pem(_ text: String?, _ textSetting: String, file: String?, _ fileSetting: String) throws -> (String, String)? {
        if let text {
            let oneLine = !text.contains("\n") && text.contains("\\n")
            return (textSetting, oneLine ? text.replacingOccurrences(of: "\\r\\n", with: "\n").replacingOccurrences(of: "\\n", with: "\n") : text)
        }
        guard let file else { return nil }
        guard let data = FileManager.default.contents(atPath: file), let pem = String(data: data, encoding: .utf8) else {
            throw SwitchbackError(.invalidConfiguration, "provider.\(fileSetting): \(file) could not be read as text")
        }
        return (fileSetting, pem)
    }
}
