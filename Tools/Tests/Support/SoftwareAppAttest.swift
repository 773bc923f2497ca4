package import Foundation
import Crypto
import SwiftASN1
import X509
@_spi(SwitchbackInternals) import Switchback

/// App Attest as a device does it, for tests: attestation objects and assertions in Apple's format (CBOR,
/// authenticator data, a credential certificate carrying the nonce), signed by a certificate authority of
/// the test's own instead of Apple's. The companion is given the authority's root (`rootCertificateFile`).
/// The layout follows Apple's "Validating apps that connect to your server" and "Attestation Object
/// Validation Guide" (developer.apple.com/documentation/devicecheck): fmt `apple-appattest`, `x5c` leaf
/// then intermediate, the nonce in extension 1.2.840.113635.100.8.2, authenticator data rpIdHash ‖ flags ‖
/// counter ‖ AAGUID ‖ credential ID; assertions signed with ECDSA P-256 over SHA-256(authData ‖
/// SHA-256(clientData)).
package final class SoftwareAppAttest: AppAttestService, Sendable {
    /// A root and an intermediate, as Apple's App Attestation Root CA and CA 1.
    package struct Authority: Sendable {
        let intermediateKey: P256.Signing.PrivateKey
        let intermediate: Certificate
        package let rootPEM: String

        package init(now: Date = Date()) throws {
            let rootKey = P256.Signing.PrivateKey()
            let rootName = try DistinguishedName { CommonName("Test App Attestation Root CA") }
            let root = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey), notValidBefore: now - 86400,
                notValidAfter: now + 20 * 365 * 86400, issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true))
                }, issuerPrivateKey: .init(rootKey))
            intermediateKey = P256.Signing.PrivateKey()
            let intermediateName = try DistinguishedName { CommonName("Test App Attestation CA 1") }
            intermediate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey), notValidBefore: now - 86400,
                notValidAfter: now + 5 * 365 * 86400, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true))
                }, issuerPrivateKey: .init(rootKey))
            rootPEM = try root.serializeAsPEM().pemString
        }
    }

    private struct Key {
        let privateKey: P256.Signing.PrivateKey
        var counter: UInt32
    }

    let authority: Authority
    let appID: String
    let aaguid: [UInt8]
    package let isSupported: Bool
    private let keys = LockedValue<[String: Key]>([:])

    /// A device running `appID` (`TEAMID.bundle.id`); `development` uses the development AAGUID.
    package init(authority: Authority, appID: String, development: Bool = false, supported: Bool = true) {
        self.authority = authority
        self.appID = appID
        self.aaguid = development ? Array("appattestdevelop".utf8) : Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        self.isSupported = supported
    }

    /// The IDs of the keys made so far.
    package var keyIDs: [String] { keys.withLock { Array($0.keys) } }

    /// Forgets every key, as a device restored from a backup does: their assertions then fail.
    package func forgetKeys() { keys.withLock { $0.removeAll() } }

    package func generateKey() async throws -> String {
        let privateKey = P256.Signing.PrivateKey()
        let keyID = Data(SHA256.hash(data: privateKey.publicKey.x963Representation)).base64EncodedString()
        keys.withLock { $0[keyID] = Key(privateKey: privateKey, counter: 0) }
        return keyID
    }

    package func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await attestKey(keyID, clientDataHash: clientDataHash, counter: 0, credentialID: nil)
    }

    /// An attestation a genuine device would not make, for the checks that refuse it: a `counter` other than
    /// zero, or a `credentialID` other than the key's.
    package func attestKey(_ keyID: String, clientDataHash: Data, counter: UInt32, credentialID: Data?) async throws -> Data {
        guard let key = keys.withLock({ $0[keyID] }), let rawKeyID = Data(base64Encoded: keyID) else {
            throw SwitchbackError(.appAttestKeyInvalid, "no such key")
        }
        let rpIDHash = Data(SHA256.hash(data: Data(appID.utf8)))
        let credential = credentialID ?? rawKeyID
        // A COSE key is not read by the companion (the certificate carries the key); its place is kept.
        var authData = rpIDHash
        authData.append(0x40)
        withUnsafeBytes(of: counter.bigEndian) { authData.append(contentsOf: $0) }
        authData.append(contentsOf: aaguid)
        authData.append(contentsOf: [0x00, UInt8(credential.count)])
        authData.append(credential)
        authData.append(0xA0)
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        let now = Date()
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.privateKey.publicKey), notValidBefore: now - 3600,
            notValidAfter: now + 3 * 86400, issuer: authority.intermediate.subject,
            subject: try DistinguishedName { CommonName(rawKeyID.map { String(format: "%02x", $0) }.joined()) }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Certificate.Extension(
                    oid: [1, 2, 840, 113_635, 100, 8, 2], critical: false, value: [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce[...])
            }, issuerPrivateKey: .init(authority.intermediateKey))
        var leafDER = DER.Serializer()
        try leafDER.serialize(leaf)
        var intermediateDER = DER.Serializer()
        try intermediateDER.serialize(authority.intermediate)
        return Self.cbor(
            .map([
                (.text("fmt"), .text("apple-appattest")),
                (
                    .text("attStmt"),
                    .map([
                        (.text("x5c"), .array([.bytes(Data(leafDER.serializedBytes)), .bytes(Data(intermediateDER.serializedBytes))])),
                        (.text("receipt"), .bytes(Data("receipt".utf8))),
                    ])
                ),
                (.text("authData"), .bytes(authData)),
            ]))
    }

    package func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        guard
            let key = keys.withLock({ keys -> Key? in
                keys[keyID]?.counter += 1
                return keys[keyID]
            })
        else { throw SwitchbackError(.appAttestKeyInvalid, "no such key") }
        let authData = Data(SHA256.hash(data: Data(appID.utf8))) + Data([0x40]) + withUnsafeBytes(of: key.counter.bigEndian) { Data($0) }
        let nonce = Data(SHA256.hash(data: authData + clientDataHash))
        let signature = try key.privateKey.signature(for: nonce).derRepresentation
        return Self.cbor(.map([(.text("signature"), .bytes(signature)), (.text("authenticatorData"), .bytes(authData))]))
    }

    /// The CBOR items the objects use.
    package indirect enum Item {
        case text(String)
        case bytes(Data)
        case array([Item])
        case map([(Item, Item)])
    }

    /// Definite-length CBOR (RFC 8949).
    package static func cbor(_ item: Item) -> Data {
        func head(_ major: UInt8, _ count: Int) -> Data {
            switch count {
            case 0..<24: return Data([major << 5 | UInt8(count)])
            case 24..<256: return Data([major << 5 | 24, UInt8(count)])
            case 256..<65536: return Data([major << 5 | 25, UInt8(count >> 8), UInt8(count & 0xff)])
            default: return Data([major << 5 | 26]) + withUnsafeBytes(of: UInt32(count).bigEndian) { Data($0) }
            }
        }
        switch item {
        case .text(let text): return head(3, text.utf8.count) + Data(text.utf8)
        case .bytes(let bytes): return head(2, bytes.count) + bytes
        case .array(let items): return items.reduce(head(4, items.count)) { $0 + cbor($1) }
        case .map(let entries): return entries.reduce(head(5, entries.count)) { $0 + cbor($1.0) + cbor($1.1) }
        }
    }
}
