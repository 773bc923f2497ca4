package import Crypto
package import Foundation
@_spi(SwitchbackInternals) import Switchback
package import SwitchbackVerification

/// The answer of Apple's Verify with Wallet (`PKIdentityDocument.encryptedData`), opened as Apple's
/// "Verifying Wallet identity requests" describes it: a CBOR envelope
/// `{"algorithm": "APPLE-HPKE-v1", "params": {"mode", "pkEm", "pkRHash", "infoHash"}, "data"}`, encrypted
/// with HPKE (RFC 9180, base mode; DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM) to the merchant's
/// Identity Access key, with the session transcript
/// `[null, null, ["AppleIdentityPresentment_1.0", nonce, merchantID, teamID, pkRHash]]` as HPKE `info`. The
/// plaintext `{"identity": DeviceResponse}` is an ISO/IEC 18013-5 response whose device signature covers
/// the same transcript.
///
/// Checked in Apple's order: the envelope names this merchant's key (`pkRHash`, SHA-256 of its uncompressed
/// point), then the transcript made here from the request's nonce is the one the wallet used (`infoHash`),
/// then the ciphertext opens. Nothing is decrypted for a request that is not this one.
package struct AppleIdentityEnvelope: Sendable {
    /// The Identity Access key (the private key of the merchant's "Identity Access Certificate").
    let key: P256.KeyAgreement.PrivateKey
    let merchantID: String
    let teamID: String

    package init(key: P256.KeyAgreement.PrivateKey, merchantID: String, teamID: String) {
        self.key = key
        self.merchantID = merchantID
        self.teamID = teamID
    }

    static let suite = HPKE.Ciphersuite(kem: .P256_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128)

    /// At most this much is read: an mDL with its portrait and chain.
    static let maximumLength = 256 * 1024

    static func refused(_ why: String) -> SwitchbackError {
        SwitchbackError(.presentationInvalid, "the Wallet identity response is refused: \(why)")
    }

    /// SHA-256 of the key's uncompressed point, as `pkRHash` names it.
    var keyHash: Data { Data(SHA256.hash(data: key.publicKey.x963Representation)) }

    /// The session transcript of a request with `nonce` (the bytes given to `PKIdentityRequest.nonce`).
    package func sessionTranscript(nonce: Data) -> CBOR {
        .array([.null, .null, .array(["AppleIdentityPresentment_1.0", .bytes(nonce), .text(merchantID), .text(teamID), .bytes(keyHash)])])
    }

    /// The `DeviceResponse` inside `encryptedData` for the request with `nonce`, and the transcript its device
    /// signature must cover.
    package func open(_ encryptedData: Data, nonce: Data) throws -> (deviceResponse: CBOR, sessionTranscript: CBOR) {
        guard encryptedData.count <= Self.maximumLength else { throw Self.refused("it is longer than \(Self.maximumLength) bytes") }
        let envelope: CBOR
        do { envelope = try CBOR.decode(encryptedData) } catch { throw Self.refused("it is not CBOR (\(error))") }
        guard envelope["algorithm"] == "APPLE-HPKE-v1" else { throw Self.refused("its algorithm is not APPLE-HPKE-v1") }
        guard let params = envelope["params"], params["mode"] == .unsigned(0), let encapsulated = params["pkEm"]?.bytes,
            let recipient = params["pkRHash"]?.bytes, let infoHash = params["infoHash"]?.bytes, let ciphertext = envelope["data"]?.bytes
        else { throw Self.refused("its params (mode 0, pkEm, pkRHash, infoHash) or data are missing") }
        guard recipient == keyHash else { throw Self.refused("it is encrypted to another merchant key") }
        let transcript = sessionTranscript(nonce: nonce)
        let info = transcript.encoded
        guard infoHash == Data(SHA256.hash(data: info)) else {
            throw Self.refused("it answers another request (its session transcript is not this nonce's, merchant's and team's)")
        }
        let plaintext: Data
        do {
            var opener = try HPKE.Recipient(privateKey: key, ciphersuite: Self.suite, info: info, encapsulatedKey: encapsulated)
            plaintext = try opener.open(ciphertext, authenticating: Data())
        } catch {
            throw Self.refused("it does not open with the Identity Access key")
        }
        let identity: CBOR
        do { identity = try CBOR.decode(plaintext) } catch { throw Self.refused("its plaintext is not CBOR") }
        guard let response = identity["identity"] else { throw Self.refused("its plaintext holds no identity") }
        return (response, transcript)
    }
}
