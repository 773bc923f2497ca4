public import Foundation
import Crypto

/// The private half of a ``DPoPKey``: where it lives and how it signs. The core keeps software keys
/// (``SoftwareDPoPSigner``); a platform adapter supplies hardware ones (the Secure Enclave's) through
/// ``DPoPHardwareKeys``.
public protocol DPoPSigner: Sendable {
    /// What kind of key this is, as stored with it: `software`, or a hardware kind.
    var kind: String { get }
    /// The P-256 public key as its raw x‖y coordinates (64 bytes).
    var publicKeyRawRepresentation: Data { get }
    /// What a store keeps to find the key again: a software key's PEM, a hardware key's opaque handle.
    var storedRepresentation: Data { get }
    /// ES256 over `message`: the raw r‖s pair (64 bytes), as JWS carries it.
    func signature(for message: Data) throws -> Data
}

/// A P-256 key in memory; stored as its PEM wherever the credential is.
public struct SoftwareDPoPSigner: DPoPSigner {
    public static let kind = "software"
    let key: P256.Signing.PrivateKey

    public var kind: String { Self.kind }
    public var publicKeyRawRepresentation: Data { key.publicKey.rawRepresentation }
    public var storedRepresentation: Data { Data(key.pemRepresentation.utf8) }

    public func signature(for message: Data) throws -> Data {
        try key.signature(for: message).rawRepresentation
    }
}

/// Hardware that makes and holds P-256 keys it never lets out (the Secure Enclave: `SecureEnclaveDPoPKeys`
/// in the Apple adapters). The adapter only makes, restores and signs; ``DPoPKeySource`` decides which
/// kind of key a sign-in gets.
public protocol DPoPHardwareKeys: Sendable {
    /// The kind its keys are stored as (`secure-enclave`).
    var kind: String { get }
    /// Whether this device has the hardware (a simulator, an older Mac or Linux does not).
    var isAvailable: Bool { get }
    /// A new key in the hardware.
    func makeSigner() throws -> any DPoPSigner
    /// The key a ``DPoPSigner/storedRepresentation`` of this kind names; throws when this device's
    /// hardware cannot use it (a backup restored onto another device).
    func restoreSigner(from representation: Data) throws -> any DPoPSigner
}

/// Makes each sign-in's DPoP key, and reads stored keys back: in the hardware when the device has it, in
/// software otherwise (Auth0.swift's choice too: the Secure Enclave where there is one). A key is made
/// once per sign-in (``ClientConfiguration/DPoPPolicy/perSignIn``) and lives as long as its credential.
public struct DPoPKeySource: Sendable {
    /// Software keys only.
    public static let software = DPoPKeySource(hardware: nil)

    /// The key under which a store's `JSONDecoder` carries the source that reads its hardware keys back.
    public static let userInfoKey = CodingUserInfoKey(rawValue: "switchback.dpopKeySource")!

    public let hardware: (any DPoPHardwareKeys)?

    /// Keys in `hardware` where it is available, software keys otherwise.
    public init(hardware: (any DPoPHardwareKeys)?) {
        self.hardware = hardware
    }

    /// A new key: in the hardware when it is available, else in software. A hardware that is there but
    /// fails to make one is an error (`dpopKeyUnavailable`), not a silent fallback to a weaker key.
    public func makeKey() throws -> DPoPKey {
        guard let hardware, hardware.isAvailable else { return DPoPKey() }
        let signer: any DPoPSigner
        do {
            signer = try hardware.makeSigner()
        } catch {
            throw SwitchbackError(.dpopKeyUnavailable, "the \(hardware.kind) could not make a DPoP key", underlying: error)
        }
        return try DPoPKey(signer: signer)
    }

    /// The key a store kept as `kind` and `representation`. Throws `dpopKeyUnavailable` for a kind this
    /// source has no hardware for, or a handle the hardware cannot use.
    public func restore(kind: String, representation: Data) throws -> DPoPKey {
        if kind == SoftwareDPoPSigner.kind {
            return try DPoPKey(privateKeyPEM: String(decoding: representation, as: UTF8.self))
        }
        guard let hardware, hardware.kind == kind else {
            throw SwitchbackError(.dpopKeyUnavailable, "a \(kind.prefix(40)) DPoP key was stored, and this app reads no such keys")
        }
        let signer: any DPoPSigner
        do {
            signer = try hardware.restoreSigner(from: representation)
        } catch {
            throw SwitchbackError(
                .dpopKeyUnavailable, "the \(kind) cannot use the stored DPoP key (another device's, or reset)", underlying: error)
        }
        return try DPoPKey(signer: signer)
    }

    /// A decoder that reads hardware keys back with this source.
    public func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.userInfo[Self.userInfoKey] = self
        return decoder
    }
}
