package import Crypto
package import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Google Play Integrity as Google Play answers a classic request, for tests: the verdict JSON of "Integrity
/// verdicts" (developer.android.com/google/play/integrity/verdicts), signed with ES256 and encrypted with
/// A256KW and A256GCM as "Make a classic API request" (developer.android.com/google/play/integrity/classic)
/// describes, with response keys of the test's own instead of those Play Console issues.
package struct SoftwarePlayIntegrity: Sendable {
    /// The verdict's fields a test may change before the token is made.
    package struct Verdict: Sendable {
        package var requestPackageName: String?
        package var nonce: String?
        package var timestamp: Date
        /// Writes `timestampMillis` as a JSON number rather than the documented string.
        package var timestampAsNumber = false
        package var appRecognitionVerdict = "PLAY_RECOGNIZED"
        package var packageName: String?
        package var certificateDigests: [String]
        /// Nil leaves `versionCode` out.
        package var versionCode: String? = "42"
        /// Nil leaves `deviceRecognitionVerdict` out, as Google does when no label applies.
        package var deviceVerdicts: [String]? = ["MEETS_DEVICE_INTEGRITY"]
        package var licensing = "LICENSED"
        package var testing = false
    }

    package let packageName: String
    /// SHA-256 of the app's signing certificate, base64url as the verdict writes it.
    package let certificateDigest: String
    package let decryptionKey = SymmetricKey(size: .bits256)
    package let signingKey = P256.Signing.PrivateKey()

    package init(packageName: String = "com.example.app") {
        self.packageName = packageName
        certificateDigest = Base64URL.encode(Data(SHA256.hash(data: Data("signing certificate of \(packageName)".utf8))))
    }

    /// The decryption key as Play Console shows it: base64 with padding.
    package var decryptionKeyText: String { decryptionKey.withUnsafeBytes { Data($0).base64EncodedString() } }
    /// The verification key as Play Console shows it: base64 of the DER public key.
    package var verificationKeyText: String { signingKey.publicKey.derRepresentation.base64EncodedString() }

    /// A genuine verdict for `nonce`, made at `now`.
    package func verdict(nonce: String, at now: Date) -> Verdict {
        Verdict(requestPackageName: packageName, nonce: nonce, timestamp: now, packageName: packageName, certificateDigests: [certificateDigest])
    }

    /// The integrity token for `verdict`: signed with `signingKey` (or `signer`), encrypted with
    /// `decryptionKey` (or `encryptionKey`) under the key management `alg`.
    package func token(
        _ verdict: Verdict, signer: P256.Signing.PrivateKey? = nil, encryptionKey: SymmetricKey? = nil, alg: String = "A256KW"
    ) throws -> String {
        let millis = Int64(verdict.timestamp.timeIntervalSince1970 * 1000)
        var request: [String: Any] = ["timestampMillis": verdict.timestampAsNumber ? millis as Any : String(millis)]
        request["requestPackageName"] = verdict.requestPackageName
        request["nonce"] = verdict.nonce
        var app: [String: Any] = ["appRecognitionVerdict": verdict.appRecognitionVerdict]
        app["versionCode"] = verdict.versionCode
        app["packageName"] = verdict.packageName
        app["certificateSha256Digest"] = verdict.certificateDigests
        var device: [String: Any] = [:]
        device["deviceRecognitionVerdict"] = verdict.deviceVerdicts
        var payload: [String: Any] = [
            "requestDetails": request, "appIntegrity": app, "deviceIntegrity": device,
            "accountDetails": ["appLicensingVerdict": verdict.licensing],
        ]
        if verdict.testing { payload["testingDetails"] = ["isTestingResponse": true] }

        let signingInput =
            Base64URL.encode(Data(#"{"alg":"ES256"}"#.utf8)) + "." + Base64URL.encode(try JSONSerialization.data(withJSONObject: payload))
        let signature = try (signer ?? signingKey).signature(for: Data(signingInput.utf8)).rawRepresentation
        let jws = signingInput + "." + Base64URL.encode(signature)

        let header = Base64URL.encode(Data(#"{"alg":"\#(alg)","enc":"A256GCM"}"#.utf8))
        let contentKey = SymmetricKey(size: .bits256)
        let wrapped = try AES.KeyWrap.wrap(contentKey, using: encryptionKey ?? decryptionKey)
        let sealed = try AES.GCM.seal(Data(jws.utf8), using: contentKey, authenticating: Data(header.utf8))
        return [
            header, Base64URL.encode(wrapped), Base64URL.encode(Data(sealed.nonce)), Base64URL.encode(sealed.ciphertext),
            Base64URL.encode(sealed.tag),
        ]
        .joined(separator: ".")
    }
}
