import Crypto
import Foundation
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// Verifies Apple App Attest attestations and assertions, as Apple's "Validating apps that connect to your
/// server" describes them (DeviceCheck). An attestation proves that a key was made by the Secure Enclave of a
/// genuine device for one of ``appIDs``; each later assertion proves that a request came from an app holding
/// that key.
///
/// Every decision is here; the route only stores the attested key and spends the challenge.
struct AppAttestVerifier: Sendable {
    /// App Attest's two environments, told apart by the authenticator data's AAGUID.
    enum Environment: String, Sendable, Codable {
        /// `appattest` and seven zero bytes: the App Store, TestFlight and Enterprise builds.
        case production
        /// `appattestdevelop`: development builds with the development entitlement.
        case development

        var aaguid: [UInt8] {
            switch self {
            case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
            case .development: Array("appattestdevelop".utf8)
            }
        }
    }

    /// An attested key, as the companion keeps it: the public key (X9.63), the last counter seen, the app.
    struct AttestedKey: Codable, Sendable, Equatable {
        var publicKey: Data
        var counter: UInt32
        var appID: String
    }

    /// Why an attestation or an assertion was refused; never shown with key material.
    struct Refusal: Error, CustomStringConvertible, Equatable {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// `TEAMID.bundle.id` of each app allowed to attest.
    let appIDs: [String]
    let environment: Environment
    let roots: [Certificate]

    /// The extension of the credential certificate that carries the nonce (Apple's OID).
    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]

    /// Apple App Attestation Root CA (P-384, valid 2020-03-18 to 2045-03-15), from
    /// https://www.apple.com/certificateauthority/Apple_App_Attestation_Root_CA.pem; its SHA-256 fingerprint
    /// is checked by a test.
    static let appleRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIICITCCAaegAwIBAgIQC/O+DvHN0uD7jG5yH2IXmDAKBggqhkjOPQQDAzBSMSYw
        JAYDVQQDDB1BcHBsZSBBcHAgQXR0ZXN0YXRpb24gUm9vdCBDQTETMBEGA1UECgwK
        QXBwbGUgSW5jLjETMBEGA1UECAwKQ2FsaWZvcm5pYTAeFw0yMDAzMTgxODMyNTNa
        Fw00NTAzMTUwMDAwMDBaMFIxJjAkBgNVBAMMHUFwcGxlIEFwcCBBdHRlc3RhdGlv
        biBSb290IENBMRMwEQYDVQQKDApBcHBsZSBJbmMuMRMwEQYDVQQIDApDYWxpZm9y
        bmlhMHYwEAYHKoZIzj0CAQYFK4EEACIDYgAERTHhmLW07ATaFQIEVwTtT4dyctdh
        NbJhFs/Ii2FdCgAHGbpphY3+d8qjuDngIN3WVhQUBHAoMeQ/cLiP1sOUtgjqK9au
        Yen1mMEvRq9Sk3Jm5X8U62H+xTD3FE9TgS41o0IwQDAPBgNVHRMBAf8EBTADAQH/
        MB0GA1UdDgQWBBSskRBTM72+aEH/pwyp5frq5eWKoTAOBgNVHQ8BAf8EBAMCAQYw
        CgYIKoZIzj0EAwMDaAAwZQIwQgFGnByvsiVbpTKwSga0kP0e8EeDS4+sQmTvb7vn
        53O5+FRXgeLhpJ06ysC5PrOyAjEAp5U4xDgEgllF7En3VcE3iexZZtKeYnpqtijV
        oyFraWVIyd/dganmrduC1bmTBGwD
        -----END CERTIFICATE-----
        """

    /// Verifies an attestation object for the key `keyID` (the 32 bytes `generateKey()` named, base64) made
    /// over `clientDataHash`, at `now`. Returns the key to keep.
    func verifyAttestation(_ object: Data, keyID: Data, clientDataHash: Data, now: Date) async throws -> AttestedKey {
        let decoded: CBOR
        do { decoded = try CBOR.decode(object) } catch { throw Refusal("the attestation is not CBOR") }
        guard decoded["fmt"]?.text == "apple-appattest" else { throw Refusal("the attestation is not of the apple-appattest format") }
        guard let chain = decoded["attStmt"]?["x5c"]?.array?.compactMap(\.bytes), chain.count >= 2, chain.count <= 4,
            let authData = decoded["authData"]?.bytes
        else { throw Refusal("the attestation lacks its certificates or its authenticator data") }
        let certificates: [Certificate]
        do { certificates = try chain.map { try Certificate(derEncoded: Array($0)) } } catch { throw Refusal("a certificate does not parse") }
        // 1. The credential certificate chains to the App Attest root at `now`.
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(fixedExpiryValidationTime: now) }
        guard case .validCertificate = await verifier.validate(leaf: certificates[0], intermediates: CertificateStore(certificates.dropFirst()))
        else { throw Refusal("the certificate chain does not lead to the App Attest root") }
        // 2–4. Its nonce extension holds SHA-256(authData ‖ clientDataHash), as DER SEQUENCE { [1] { OCTET STRING } }.
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        guard let carried = certificates[0].extensions[oid: Self.nonceExtension]?.value,
            Array(carried) == [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce
        else { throw Refusal("the attestation was not made over this challenge") }
        // 5. The key ID is SHA-256 of the certificate's public key (the uncompressed point).
        guard let publicKey = P256.Signing.PublicKey(certificates[0].publicKey) else { throw Refusal("the attested key is not P-256") }
        guard Data(SHA256.hash(data: publicKey.x963Representation)) == keyID else { throw Refusal("the key ID is not this key's") }
        let parsed = try Self.authenticatorData(authData, attested: true)
        // 6. Made for one of the apps.
        guard let appID = appIDs.first(where: { Data(SHA256.hash(data: Data($0.utf8))) == parsed.rpIDHash }) else {
            throw Refusal("the key was attested for another app")
        }
        // 7–9. A fresh key, of this environment, whose credential is the key itself.
        guard parsed.counter == 0 else { throw Refusal("the attestation's counter is not zero") }
        guard parsed.aaguid == environment.aaguid else { throw Refusal("the attestation is not of the \(environment.rawValue) environment") }
        guard parsed.credentialID == keyID else { throw Refusal("the attested credential is not this key") }
        return AttestedKey(publicKey: publicKey.x963Representation, counter: 0, appID: appID)
    }

    /// Verifies an assertion of `key` over `clientData`; returns the assertion's counter, which must be kept.
    func verifyAssertion(_ object: Data, clientData: Data, key: AttestedKey) throws -> UInt32 {
        let decoded: CBOR
        do { decoded = try CBOR.decode(object) } catch { throw Refusal("the assertion is not CBOR") }
        guard let signature = decoded["signature"]?.bytes, let authData = decoded["authenticatorData"]?.bytes else {
            throw Refusal("the assertion lacks its signature or its authenticator data")
        }
        // A key of an app taken off the list is refused from then on, however long its record would live.
        guard appIDs.contains(key.appID) else { throw Refusal("the key's app is no longer allowed") }
        let parsed = try Self.authenticatorData(authData, attested: false)
        guard parsed.rpIDHash == Data(SHA256.hash(data: Data(key.appID.utf8))) else { throw Refusal("the assertion is for another app") }
        // The signature is ECDSA P-256 with SHA-256 over nonce = SHA-256(authenticatorData ‖ SHA-256(clientData)).
        let nonce = Data(SHA256.hash(data: authData + Data(SHA256.hash(data: clientData))))
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: key.publicKey),
            let parsedSignature = try? P256.Signing.ECDSASignature(derRepresentation: signature),
            publicKey.isValidSignature(parsedSignature, for: nonce)
        else { throw Refusal("the assertion's signature is not the attested key's") }
        // A counter that does not grow is a replayed or a cloned assertion.
        guard parsed.counter > key.counter else { throw Refusal("the assertion's counter did not increase") }
        return parsed.counter
    }

    struct AuthenticatorData {
        let rpIDHash: Data
        let counter: UInt32
        let aaguid: [UInt8]
        let credentialID: Data
    }

    /// rpIdHash (32) ‖ flags (1) ‖ counter (4, big-endian) ‖ [aaguid (16) ‖ credential ID length (2) ‖ credential ID ‖ key].
    /// Bytes after what is read are allowed: newer systems append extension data.
    static func authenticatorData(_ data: Data, attested: Bool) throws -> AuthenticatorData {
        let bytes = [UInt8](data)
        guard bytes.count >= 37 else { throw Refusal("the authenticator data is too short") }
        let counter = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard attested else { return AuthenticatorData(rpIDHash: Data(bytes[0..<32]), counter: counter, aaguid: [], credentialID: Data()) }
        guard bytes.count >= 55 else { throw Refusal("the authenticator data has no attested credential") }
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { throw Refusal("the attested credential is truncated") }
        return AuthenticatorData(
            rpIDHash: Data(bytes[0..<32]), counter: counter, aaguid: Array(bytes[37..<53]), credentialID: Data(bytes[55..<55 + length]))
    }
}

extension AppAttestVerifier {
    /// The verifier a configuration describes: Apple's root, or the file's for tests.
    init(configuration: ServerConfiguration.AppAttest) throws {
        let pem: String
        if let file = configuration.rootCertificateFile {
            guard let contents = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw SwitchbackError(.invalidConfiguration, "appAttest.rootCertificateFile \(file) could not be read")
            }
            pem = contents
        } else {
            pem = Self.appleRootPEM
        }
        let root: Certificate
        do {
            root = try Certificate(pemEncoded: pem)
        } catch {
            throw SwitchbackError(.invalidConfiguration, "the App Attest root certificate does not parse")
        }
        self.init(appIDs: configuration.appIDs, environment: Environment(rawValue: configuration.environment) ?? .production, roots: [root])
    }
}
