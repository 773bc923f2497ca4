import Crypto
import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Verifies Google Play Integrity verdicts of classic requests, decrypted and verified here with the
/// response keys the team manages itself in Play Console. Sources: "Make a classic API request"
/// (developer.android.com/google/play/integrity/classic: a JWE with `A256KW` and `A256GCM` around a JWS
/// with `ES256`; the decryption key is a base64 AES-256 key, the verification key a base64 DER EC public
/// key) and "Integrity verdicts" (developer.android.com/google/play/integrity/verdicts: the payload's
/// fields and the checks a server makes). Standard requests cannot be decrypted outside Google's servers
/// (the classic page's comparison table), so they are not taken here.
///
/// The request's `nonce` is base64url of SHA-256 of ``CompanionAPI/attestedClientData(challenge:method:path:body:)``:
/// a one-time challenge of this server with the request it protects, as Google recommends.
struct PlayIntegrityVerifier: Sendable {
    /// Why a verdict was refused; never shown with the token or key material.
    struct Refusal: Error, CustomStringConvertible, Equatable {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// What a verified verdict says of the request's app.
    struct Verdict: Sendable, Equatable {
        let packageName: String
        let device: [String]
    }

    let packageNames: Set<String>
    let certificateDigests: Set<String>
    let deviceVerdicts: [String]
    let requireLicensed: Bool
    let maximumAge: TimeInterval
    let minimumVersionCode: Int?
    private let decryptionKey: SymmetricKey
    private let verificationKey: P256.Signing.PublicKey

    /// How far a verdict's time may be ahead of this server's clock.
    static let clockSkew: TimeInterval = 60

    init(configuration: ServerConfiguration.PlayIntegrity) throws {
        guard let decryption = configuration.decryptionKey.flatMap(Self.base64), decryption.count == 32 else {
            throw SwitchbackError(.invalidConfiguration, "playIntegrity.decryptionKey must be Play Console's base64 AES-256 key (32 bytes)")
        }
        guard let verification = Self.base64(configuration.verificationKey),
            let key = try? P256.Signing.PublicKey(derRepresentation: verification)
        else {
            throw SwitchbackError(
                .invalidConfiguration, "playIntegrity.verificationKey must be Play Console's base64 DER EC P-256 public key")
        }
        packageNames = Set(configuration.packageNames)
        certificateDigests = Set(configuration.certificateDigests.map(Self.unpadded))
        deviceVerdicts = configuration.deviceVerdicts
        requireLicensed = configuration.requireLicensed
        maximumAge = configuration.maximumAge
        minimumVersionCode = configuration.minimumVersionCode
        decryptionKey = SymmetricKey(data: decryption)
        verificationKey = key
    }

    /// Standard base64 as Play Console gives keys, or base64url.
    static func base64(_ text: String) -> Data? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return Data(base64Encoded: trimmed) ?? Base64URL.decode(trimmed)
    }

    /// A base64url value without its padding: the verdict may pad what the app sent unpadded.
    static func unpadded(_ text: String) -> String {
        var text = Substring(text)
        while text.hasSuffix("=") { text = text.dropLast() }
        return String(text)
    }

    /// Decrypts and verifies `token`, then checks it against `nonce` and the configuration at `now`.
    func verify(_ token: String, nonce: String, now: Date) throws -> Verdict {
        let payload = try decode(try verifiedPayload(try decrypt(token)))
        let request = payload.requestDetails
        guard let package = request.requestPackageName, packageNames.contains(package) else {
            throw Refusal("the request's package name is not one of playIntegrity.packageNames")
        }
        guard let sent = request.nonce, ConstantTime.equals(Self.unpadded(sent), Self.unpadded(nonce)) else {
            throw Refusal("the verdict's nonce is not this request's")
        }
        let issued = Date(timeIntervalSince1970: TimeInterval(request.timestampMillis.value) / 1000)
        guard now.timeIntervalSince(issued) <= maximumAge, issued.timeIntervalSince(now) <= Self.clockSkew else {
            throw Refusal("the verdict is older than playIntegrity.maximumAge, or from the future")
        }
        guard payload.testingDetails?.isTestingResponse != true else { throw Refusal("the verdict is a Play Console test response") }
        let app = payload.appIntegrity
        guard app.appRecognitionVerdict == "PLAY_RECOGNIZED" else {
            throw Refusal("the app is not recognized by Google Play (\(app.appRecognitionVerdict.prefix(40)))")
        }
        guard let appPackage = app.packageName, appPackage == package else { throw Refusal("the app's package name is not the request's") }
        if !certificateDigests.isEmpty {
            guard (app.certificateSha256Digest ?? []).contains(where: { certificateDigests.contains(Self.unpadded($0)) }) else {
                throw Refusal("the app is not signed with a certificate of playIntegrity.certificateDigests")
            }
        }
        if let minimumVersionCode {
            guard let version = app.versionCode?.value, version >= minimumVersionCode else {
                throw Refusal("the app's version is older than playIntegrity.minimumVersionCode")
            }
        }
        let device = payload.deviceIntegrity?.deviceRecognitionVerdict ?? []
        guard deviceVerdicts.allSatisfy(device.contains) else {
            throw Refusal("the device does not meet \(deviceVerdicts.joined(separator: ", "))")
        }
        if requireLicensed {
            guard payload.accountDetails?.appLicensingVerdict == "LICENSED" else { throw Refusal("the user's copy of the app is not licensed") }
        }
        return Verdict(packageName: package, device: device)
    }

    /// The compact JWE's plaintext: `A256KW` unwraps the content key with the decryption key, `A256GCM`
    /// opens the content with the protected header as additional data (RFC 7516 §5.2).
    private func decrypt(_ token: String) throws -> Data {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5, let headerData = Base64URL.decode(parts[0]), let wrapped = Base64URL.decode(parts[1]),
            let iv = Base64URL.decode(parts[2]), let ciphertext = Base64URL.decode(parts[3]), let tag = Base64URL.decode(parts[4])
        else { throw Refusal("the token is not a compact JWE") }
        guard let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData),
            header["alg"] == .string("A256KW"), header["enc"] == .string("A256GCM"), header["zip"] == nil, header["crit"] == nil
        else { throw Refusal("the token is not encrypted with A256KW and A256GCM") }
        do {
            let contentKey = try AES.KeyWrap.unwrap(wrapped, using: decryptionKey)
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: iv), ciphertext: ciphertext, tag: tag)
            return try AES.GCM.open(box, using: contentKey, authenticating: Data(parts[0].utf8))
        } catch {
            throw Refusal("the token does not decrypt with playIntegrity.decryptionKey")
        }
    }

    /// The JWS's payload, once its `ES256` signature verifies with the verification key.
    private func verifiedPayload(_ jws: Data) throws -> Data {
        let parts = jws.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Base64URL.decode(bytes: Array(parts[0])), let payload = Base64URL.decode(bytes: Array(parts[1])),
            let signature = Base64URL.decode(bytes: Array(parts[2]))
        else { throw Refusal("the decrypted token is not a compact JWS") }
        guard let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData), header["alg"] == .string("ES256"),
            header["crit"] == nil
        else { throw Refusal("the verdict is not signed with ES256") }
        guard let raw = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            verificationKey.isValidSignature(raw, for: Data(parts[0]) + Data([UInt8(ascii: ".")]) + Data(parts[1]))
        else { throw Refusal("the verdict's signature does not verify with playIntegrity.verificationKey") }
        return payload
    }

    private func decode(_ payload: Data) throws -> Payload {
        do {
            return try JSONDecoder().decode(Payload.self, from: payload)
        } catch {
            throw Refusal("the verdict's payload lacks requestDetails or appIntegrity")
        }
    }

    /// The verdict's fields this server reads (Google's "Integrity verdicts" page); others are ignored.
    struct Payload: Decodable {
        struct RequestDetails: Decodable {
            let requestPackageName: String?
            let nonce: String?
            let timestampMillis: Int64Text
        }

        struct AppIntegrity: Decodable {
            let appRecognitionVerdict: String
            let packageName: String?
            let certificateSha256Digest: [String]?
            let versionCode: Int64Text?
        }

        struct DeviceIntegrity: Decodable { let deviceRecognitionVerdict: [String]? }
        struct AccountDetails: Decodable { let appLicensingVerdict: String? }
        struct TestingDetails: Decodable { let isTestingResponse: Bool? }

        let requestDetails: RequestDetails
        let appIntegrity: AppIntegrity
        let deviceIntegrity: DeviceIntegrity?
        let accountDetails: AccountDetails?
        let testingDetails: TestingDetails?
    }

    /// An int64 as Google's JSON writes it: a string of digits (the documented form), or a number.
    struct Int64Text: Decodable {
        let value: Int64

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                value = number
            } else if let text = try? container.decode(String.self), let number = Int64(text) {
                value = number
            } else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an int64")
            }
        }
    }
}
