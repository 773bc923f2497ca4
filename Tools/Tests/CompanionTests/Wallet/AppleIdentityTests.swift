import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackEmulator
import SwitchbackTesting

/// Apple's Verify with Wallet answer, opened and verified on Apple's own sample data (AppleSample/README.md):
/// the HPKE envelope, the session transcript Apple's wallet signed, and the ISO 18013-5 response inside.
@Suite("Apple's Verify with Wallet response")
struct AppleIdentityTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("AppleSample")
    /// The nonce of the request Apple's sample answers.
    static let nonce = Self.hex(
        "964c3e56a06061fa213fce2ba73217a6d359c2e65d44ec6b5b94f9c57eeeb3c045906344c7032e2609eb60533c35a98a75d0d2444ef9057c55cbb2d05d672a25")

    static func hex(_ text: String) -> Data {
        let digits = Array(text.filter(\.isHexDigit))
        return Data(stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16) ?? 0 })
    }

    static func sample() throws -> (envelope: AppleIdentityEnvelope, encrypted: Data) {
        let keyPEM = try String(contentsOf: directory.appendingPathComponent("merchant-encryption-key.pem"), encoding: .utf8)
        let envelope = AppleIdentityEnvelope(
            key: try P256.KeyAgreement.PrivateKey(pemRepresentation: keyPEM), merchantID: "PassKit_Identity_Test_Merchant_ID",
            teamID: "PassKit_Identity_Test_Team_ID")
        let hex = try String(contentsOf: directory.appendingPathComponent("hpke-envelope.hex"), encoding: .utf8)
        return (envelope, Self.hex(hex))
    }

    @Test("Apple's sample opens with the test merchant's key; its transcript is the one Apple's wallet hashed")
    func opens() throws {
        let (envelope, encrypted) = try Self.sample()
        let (response, transcript) = try envelope.open(encrypted, nonce: Self.nonce)
        #expect(Data(SHA256.hash(data: transcript.encoded)) == Self.hex("59a47fc9fa2402cfefa5e889183d4222cb15bb10807e53d90b4eef5eb9ff1d96"))
        #expect(response["documents"]?.array?.count == 1)
    }

    /// A day the sample's Mobile Security Object was valid (2022-03-31 to 2023-03-22).
    static let sampleDay = Date(timeIntervalSince1970: 1_654_041_600)  // 2022-06-01

    static func verifier(_ anchorsPEM: String? = nil) throws -> MDocVerifier {
        let clock = ManualClock(sampleDay)
        let anchors = try anchorsPEM ?? String(contentsOf: directory.appendingPathComponent("issuer-root.pem"), encoding: .utf8)
        return MDocVerifier(issuers: try X509DocumentSigners(anchorsPEM: anchors, clock: clock), clock: clock)
    }

    @Test("Apple's sample mDL verifies: issuerAuth to Apple's test issuer root, every digest, the device signature over Apple's transcript")
    func verifies() async throws {
        let (envelope, encrypted) = try Self.sample()
        let (response, transcript) = try envelope.open(encrypted, nonce: Self.nonce)
        let verified = try await Self.verifier().verify(deviceResponse: response, sessionTranscript: transcript)
        #expect(verified.type == "org.iso.18013.5.1.mDL" && verified.format == "mso_mdoc" && verified.keyBound)
        guard case .object(let elements)? = verified.claims["org.iso.18013.5.1"] else {
            Issue.record("no org.iso.18013.5.1 namespace: \(verified.claims.keys)")
            return
        }
        #expect(elements["family_name"] != nil && elements["given_name"] != nil, "\(elements.keys.sorted())")
    }

    @Test("the sample refused: another nonce, merchant or team; another merchant key; another issuer root; a changed byte; out of its validity")
    func refusals() async throws {
        let (envelope, encrypted) = try Self.sample()
        for other in [
            AppleIdentityEnvelope(key: envelope.key, merchantID: "another.merchant", teamID: envelope.teamID),
            AppleIdentityEnvelope(key: envelope.key, merchantID: envelope.merchantID, teamID: "ANOTHERTEAM"),
        ] {
            #expect(throws: SwitchbackError.self) { _ = try other.open(encrypted, nonce: Self.nonce) }
        }
        #expect(throws: SwitchbackError.self, "another nonce") { _ = try envelope.open(encrypted, nonce: Data(Self.nonce.reversed())) }
        let stranger = AppleIdentityEnvelope(key: P256.KeyAgreement.PrivateKey(), merchantID: envelope.merchantID, teamID: envelope.teamID)
        let notOurs = #expect(throws: SwitchbackError.self) { _ = try stranger.open(encrypted, nonce: Self.nonce) }
        #expect(notOurs?.message.contains("another merchant key") == true)
        var flipped = encrypted
        flipped[flipped.count - 20] ^= 0x01
        let tampered = #expect(throws: SwitchbackError.self) { _ = try envelope.open(flipped, nonce: Self.nonce) }
        #expect(tampered?.message.contains("does not open") == true, "\(tampered?.message ?? "")")
        for garbage in [Data(), Data([0xa0]), Data(repeating: 0x9f, count: 8), encrypted.prefix(100)] {
            #expect(throws: SwitchbackError.self) { _ = try envelope.open(garbage, nonce: Self.nonce) }
        }

        let (response, transcript) = try envelope.open(encrypted, nonce: Self.nonce)
        let otherRoot = try EmulatedAuthority(name: "Another IACA", dnsName: "iaca.example.com").rootPEM
        await #expect(throws: SwitchbackError.self, "another root") {
            _ = try await Self.verifier(otherRoot).verify(deviceResponse: response, sessionTranscript: transcript)
        }
        let otherTranscript = envelope.sessionTranscript(nonce: Data(repeating: 7, count: 32))
        let wrongTranscript = await #expect(throws: SwitchbackError.self) {
            _ = try await Self.verifier().verify(deviceResponse: response, sessionTranscript: otherTranscript)
        }
        #expect(wrongTranscript?.message.contains("deviceSignature") == true)
        let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))  // 2023-11: the MSO has expired
        let late = MDocVerifier(
            issuers: try X509DocumentSigners(
                anchorsPEM: try String(contentsOf: Self.directory.appendingPathComponent("issuer-root.pem"), encoding: .utf8),
                clock: ManualClock(Self.sampleDay)),
            clock: clock)
        let expired = await #expect(throws: SwitchbackError.self) {
            _ = try await late.verify(deviceResponse: response, sessionTranscript: transcript)
        }
        #expect(expired?.message.contains("expired") == true)
    }
}
