public import Foundation
import Crypto

// App Attest and Play Integrity on the start routes.
extension CompanionAPI {
    /// The header that carries an App Attest assertion on a start route: the key ID, a challenge from
    /// `POST /attest/challenge` and the assertion, each base64url, separated by spaces. The assertion is made
    /// over ``attestedClientData(challenge:method:path:body:)``.
    public static let attestationHeader = "Switchback-App-Attestation"

    /// The challenge field of an assertion on a request for a started sign-in's result (`POST /exchange`,
    /// `POST /completion/status`): no challenge, because such a request gives up nothing twice (the result
    /// is handed over once) and its body names the sign-in; the assertion's growing counter still refuses a
    /// replay.
    public static let unchallenged = "-"

    /// The header that carries a Google Play Integrity verdict (an Android app's classic request) on a start
    /// route: a challenge from `POST /attest/challenge` and the integrity token, separated by a space. The
    /// request's nonce is ``playIntegrityNonce(challenge:method:path:body:)``.
    public static let playIntegrityHeader = "Switchback-Play-Integrity"

    /// The nonce of a Play Integrity request for a start route: base64url (unpadded) of SHA-256 of
    /// ``attestedClientData(challenge:method:path:body:)``, 32 bytes as Google's 16…500 allows.
    public static func playIntegrityNonce(challenge: String, method: String, path: String, body: Data) -> String {
        Base64URL.encode(Data(SHA256.hash(data: attestedClientData(challenge: challenge, method: method, path: path, body: body))))
    }

    /// What an assertion on a start route signs: the challenge, the request line and the body, so that
    /// it is good for this one request only.
    public static func attestedClientData(challenge: String, method: String, path: String, body: Data) -> Data {
        Data("\(challenge)\n\(method) \(path)\n".utf8) + body
    }

    /// `POST /attest/challenge`'s answer.
    public struct AttestationChallenge: Codable, Sendable, Equatable {
        public var challenge: String
        public var expiresIn: Int

        public init(challenge: String, expiresIn: Int) {
            self.challenge = challenge
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case challenge
            case expiresIn = "expires_in"
        }
    }

    /// `POST /attest/register`: a new key's attestation over SHA-256 of a challenge's UTF-8 bytes.
    public struct AttestationRegistration: Codable, Sendable, Equatable {
        /// The key ID `generateKey()` returned, base64url.
        public var keyID: String
        /// The attestation object, base64url.
        public var attestation: String
        public var challenge: String

        public init(keyID: String, attestation: String, challenge: String) {
            self.keyID = keyID
            self.attestation = attestation
            self.challenge = challenge
        }

        enum CodingKeys: String, CodingKey {
            case keyID = "key_id"
            case attestation, challenge
        }
    }
}
