// A model of the Secure Enclave part of CryptoKit the adapters use, declared as the iOS 18 SDK documents it;
// the rest of CryptoKit (P256) is swift-crypto's, which has the same API. Behind it, an in-memory "enclave":
// each key stays in it, and its `dataRepresentation` is only a handle that this enclave alone can use, as
// Apple describes the real one (a wrapped key only the Secure Enclave that made it can unwrap).
// Each declaration names its page (https://developer.apple.com/documentation/cryptokit/...).
@_exported public import Crypto
public import Foundation

// https://developer.apple.com/documentation/cryptokit/secureenclave
public enum SecureEnclave {
    private static let state = Enclave()

    // https://developer.apple.com/documentation/cryptokit/secureenclave/isavailable
    public static var isAvailable: Bool { state.available }

    /// Model only: whether the device has a Secure Enclave (a simulator does not), and forgetting every key
    /// (another device, or the enclave reset).
    public static func _setAvailable(_ available: Bool) { state.setAvailable(available) }
    public static func _forgetAllKeys() { state.forget() }

    final class Enclave: @unchecked Sendable {  // @unchecked: every member is under `lock`.
        private let lock = NSLock()
        private var isAvailable = true
        private var keys: [Data: Crypto.P256.Signing.PrivateKey] = [:]

        var available: Bool { lock.withLock { isAvailable } }
        func setAvailable(_ available: Bool) { lock.withLock { isAvailable = available } }
        func forget() { lock.withLock { keys = [:] } }
        func add(_ key: Crypto.P256.Signing.PrivateKey) -> Data {
            let handle = Data((0..<32).map { _ in UInt8.random(in: 0...255) })
            lock.withLock { keys[handle] = key }
            return handle
        }
        func key(_ handle: Data) -> Crypto.P256.Signing.PrivateKey? { lock.withLock { keys[handle] } }
    }

    struct ModelError: Error {}

    public enum P256 {
        public enum Signing {
            // https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey
            public struct PrivateKey: Sendable {
                private let key: Crypto.P256.Signing.PrivateKey

                // https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/init(compactrepresentable:accesscontrol:authenticationcontext:)
                // (modelled without the access control and context, whose defaults the adapters take)
                public init(compactRepresentable: Bool = true) throws {
                    guard SecureEnclave.isAvailable else { throw ModelError() }
                    key = Crypto.P256.Signing.PrivateKey(compactRepresentable: compactRepresentable)
                    dataRepresentation = SecureEnclave.state.add(key)
                }

                // https://developer.apple.com/documentation/cryptokit/secureenclave/p256/keyagreement/privatekey/init(datarepresentation:authenticationcontext:)
                // (the signing key's twin; modelled without the context, whose default the adapters take)
                public init(dataRepresentation: Data) throws {
                    guard SecureEnclave.isAvailable, let key = SecureEnclave.state.key(dataRepresentation) else { throw ModelError() }
                    self.key = key
                    self.dataRepresentation = dataRepresentation
                }

                /// "A data representation of the private key": a handle only this enclave can use.
                public let dataRepresentation: Data

                /// "The corresponding public key."
                public var publicKey: Crypto.P256.Signing.PublicKey { key.publicKey }

                // https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/signature(for:)-76j0u
                public func signature<D: DataProtocol>(for data: D) throws -> Crypto.P256.Signing.ECDSASignature {
                    try key.signature(for: data)
                }
            }
        }
    }
}
