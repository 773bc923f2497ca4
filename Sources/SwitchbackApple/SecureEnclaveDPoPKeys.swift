#if canImport(CryptoKit)
    import CryptoKit
    public import Foundation
    public import Switchback

    /// DPoP keys in the Secure Enclave (P-256): the private key never leaves it, and what the Keychain keeps
    /// with the credential is a handle only this device's Secure Enclave can use. The core decides when to
    /// use it (``DPoPKeySource``: where `SecureEnclave.isAvailable`, else a software key); this only makes,
    /// restores and signs.
    public struct SecureEnclaveDPoPKeys: DPoPHardwareKeys {
        public init() {}

        public var kind: String { SecureEnclaveSigner.kind }
        public var isAvailable: Bool { SecureEnclave.isAvailable }

        public func makeSigner() throws -> any DPoPSigner {
            SecureEnclaveSigner(key: try SecureEnclave.P256.Signing.PrivateKey())
        }

        public func restoreSigner(from representation: Data) throws -> any DPoPSigner {
            SecureEnclaveSigner(key: try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: representation))
        }
    }

    struct SecureEnclaveSigner: DPoPSigner {
        static let kind = "secure-enclave"
        let key: SecureEnclave.P256.Signing.PrivateKey

        var kind: String { Self.kind }
        var publicKeyRawRepresentation: Data { key.publicKey.rawRepresentation }
        var storedRepresentation: Data { key.dataRepresentation }
        func signature(for message: Data) throws -> Data { try key.signature(for: message).rawRepresentation }
    }

    extension DPoPKeySource {
        /// Secure Enclave keys where the device has one (not the simulator), software keys elsewhere.
        public static let secureEnclave = DPoPKeySource(hardware: SecureEnclaveDPoPKeys())
    }
#endif
