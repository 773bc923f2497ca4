import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// Hardware-bound DPoP keys as the core handles them: which kind a sign-in gets, how a stored key comes
/// back, and what fails typed. The hardware here is a stand-in that, like the Secure Enclave, hands out
/// only a handle to each key (the Apple adapter's `SecureEnclaveDPoPKeys` is type-checked separately).
@Suite("DPoPKeySource")
struct DPoPKeySourceTests {
    /// Keys that never leave this object: a store gets an opaque handle, usable only with the same object.
    final class TestEnclave: DPoPHardwareKeys, @unchecked Sendable {  // @unchecked: `keys` is under `lock`.
        let kind = "test-enclave"
        let isAvailable: Bool
        let fails: Bool
        private let lock = NSLock()
        private var keys: [Data: P256.Signing.PrivateKey] = [:]

        init(available: Bool = true, fails: Bool = false) {
            isAvailable = available
            self.fails = fails
        }

        var count: Int { lock.withLock { keys.count } }

        struct Signer: DPoPSigner {
            let kind = "test-enclave"
            let handle: Data
            let key: P256.Signing.PrivateKey
            var publicKeyRawRepresentation: Data { key.publicKey.rawRepresentation }
            var storedRepresentation: Data { handle }
            func signature(for message: Data) throws -> Data { try key.signature(for: message).rawRepresentation }
        }

        struct Refused: Error {}

        func makeSigner() throws -> any DPoPSigner {
            if fails { throw Refused() }
            let handle = Data(UUID().uuidString.utf8)
            let key = P256.Signing.PrivateKey()
            lock.withLock { keys[handle] = key }
            return Signer(handle: handle, key: key)
        }

        func restoreSigner(from representation: Data) throws -> any DPoPSigner {
            guard let key = lock.withLock({ keys[representation] }) else { throw Refused() }
            return Signer(handle: representation, key: key)
        }
    }

    @Test("where the hardware is available the key is made in it, its PEM is nil, and its proofs verify")
    func hardwareKey() throws {
        let enclave = TestEnclave()
        let key = try DPoPKeySource(hardware: enclave).makeKey()
        #expect(key.kind == "test-enclave")
        #expect(key.privateKeyPEM == nil)
        #expect(enclave.count == 1)
        let url = URL(string: "https://id.example/token")!
        let proof = try key.proof(method: "POST", url: url, now: Date(), jti: "j-1")
        #expect(try DPoPTests.signerThumbprint(proof) == key.thumbprint, "the hardware key's proof verifies with the key it carries")
    }

    @Test("without the hardware (a simulator, Linux) the key is a software one; a hardware that fails is an error, not a weaker key")
    func fallback() throws {
        #expect(try DPoPKeySource(hardware: TestEnclave(available: false)).makeKey().kind == SoftwareDPoPSigner.kind)
        #expect(try DPoPKeySource.software.makeKey().kind == SoftwareDPoPSigner.kind)
        expectCode(.dpopKeyUnavailable) { _ = try DPoPKeySource(hardware: TestEnclave(fails: true)).makeKey() }
    }

    @Test("a credential with a hardware key is stored as its handle and read back through the source; another device cannot")
    func storedHandle() throws {
        let enclave = TestEnclave()
        let source = DPoPKeySource(hardware: enclave)
        let key = try source.makeKey()
        let encoded = try JSONEncoder().encode(key)
        let text = String(decoding: encoded, as: UTF8.self)
        #expect(text.contains("test-enclave") && !text.contains("PRIVATE KEY"))
        #expect(try source.decoder().decode(DPoPKey.self, from: encoded) == key)
        // A backup restored onto another device: its hardware has no such key.
        expectCode(.dpopKeyUnavailable) { _ = try DPoPKeySource(hardware: TestEnclave()).decoder().decode(DPoPKey.self, from: encoded) }
        // A store that was given no hardware source.
        expectCode(.dpopKeyUnavailable) { _ = try JSONDecoder().decode(DPoPKey.self, from: encoded) }
        // A software key is still stored as its PEM, readable with or without a source.
        let software = DPoPKey()
        let pem = try JSONEncoder().encode(software)
        #expect(try JSONDecoder().decode(DPoPKey.self, from: pem) == software)
        #expect(try source.decoder().decode(DPoPKey.self, from: pem) == software)
    }

    @Test("a signer whose public key is not a P-256 point is refused")
    func badSigner() {
        struct Broken: DPoPSigner {
            let kind = "broken"
            let publicKeyRawRepresentation = Data(repeating: 7, count: 64)
            let storedRepresentation = Data()
            func signature(for message: Data) throws -> Data { Data() }
        }
        expectCode(.dpopKeyUnavailable) { _ = try DPoPKey(signer: Broken()) }
    }
}
