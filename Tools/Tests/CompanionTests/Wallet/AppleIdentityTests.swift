import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

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

/// Verify with Wallet end to end: the app's coordinator, an emulated Apple Wallet answering as Apple
/// describes, and the companion's `/wallet/apple/*` routes.
@Suite("Verify with Wallet through the companion")
struct AppleIdentityRoutesTests {
    static let teamID = "EXAMPLETEAM"
    static let merchant = "merchant.com.example.app.identity"
    static let request = IdentityDocumentRequest(fields: [
        .init(.givenName), .init(.ageAtLeast(21)), .init(.portrait, intentToStore: .mayStoreForDays(30)),
    ])

    /// A companion with an `appleIdentity` section trusting `issuer`, its Identity Access key `key`.
    static func with(
        _ issuer: EmulatedIssuer, key: P256.KeyAgreement.PrivateKey, change: @escaping (inout ServerConfiguration, URL) -> Void = { _, _ in },
        _ body: (CompanionRig) async throws -> Void
    ) async throws {
        let folder = try KeyFolder(prefix: "switchback-apple")
        defer { folder.remove() }
        let directory = folder.url
        let write = folder.write
        let section = ServerConfiguration.AppleIdentity(
            merchantIdentifier: merchant, teamIdentifier: teamID, encryptionKeyFile: try write("identity-access.pem", key.pemRepresentation),
            issuerTrustAnchorsFile: try write("iaca.pem", issuer.authority.rootPEM))
        // The issuer's root publishes its revocation list, which the companion reads for each answer.
        try await CompanionRig.with(
            change: {
                $0.appleIdentity = section
                change(&$0, directory)
            }, transport: StatusListHosting(issuer, revoked: [], next: URLSessionTransport())
        ) { rig in try await body(rig) }
    }

    static func coordinator(_ rig: CompanionRig, wallet: any IdentityDocumentProvider) -> SignInCoordinator {
        SignInCoordinator(
            .wallets(verifiedBy: CompanionClient(rig.companion.baseURL, transport: rig.transport)), host: RecordingUserAgentHost(),
            opener: RecordingURLOpener(), identityDocuments: wallet)
    }

    @Test("shared: the coordinator's .verifyWithWallet gets exactly the asked elements, decrypted and verified by the companion")
    func shares() async throws {
        let issuer = try EmulatedIssuer()
        let key = P256.KeyAgreement.PrivateKey()
        let wallet = try EmulatedAppleWallet(issuer: issuer, merchantKey: key.publicKey, teamID: Self.teamID)
        try await Self.with(issuer, key: key) { rig in
            let result = try await Self.coordinator(rig, wallet: wallet).signIn(.verifyWithWallet(Self.request))
            guard case .presentation(let presentation) = result,
                case .object(let elements)? = presentation.claims("identity")?[EmulatedAppleWallet.nameSpace]
            else {
                Issue.record("not a presentation with the mDL namespace: \(result)")
                return
            }
            #expect(Set(elements.keys) == ["given_name", "age_over_21", "portrait"])
            #expect(elements["given_name"] == "Erika" && elements["age_over_21"] == .bool(true))

            // Apple's table: issuingAuthority comes back as every issuing element the license holds; an age
            // threshold the license has no age_over_NN for falls back to age_in_years.
            let other = IdentityDocumentRequest(fields: [.init(.issuingAuthority), .init(.ageAtLeast(65))])
            guard case .presentation(let second) = try await Self.coordinator(rig, wallet: wallet).signIn(.verifyWithWallet(other)),
                case .object(let answered)? = second.claims("identity")?[EmulatedAppleWallet.nameSpace]
            else {
                Issue.record("no second presentation")
                return
            }
            #expect(Set(answered.keys) == ["issuing_authority", "issuing_country", "age_in_years"])
        }
    }

    @Test("declined: userCancelled; another team's transcript, another merchant's key, another issuer root: presentationInvalid, each for its reason")
    func refusals() async throws {
        let issuer = try EmulatedIssuer()
        let key = P256.KeyAgreement.PrivateKey()
        try await Self.with(issuer, key: key) { rig in
            let declined = try EmulatedAppleWallet(issuer: issuer, merchantKey: key.publicKey, teamID: Self.teamID, decision: .decline)
            let cancelled = await #expect(throws: SwitchbackError.self) {
                _ = try await Self.coordinator(rig, wallet: declined).signIn(.verifyWithWallet(Self.request))
            }
            #expect(cancelled?.code == .userCancelled)
            for (wallet, reason) in [
                (try EmulatedAppleWallet(issuer: issuer, merchantKey: key.publicKey, teamID: "ANOTHERTEAM"), "another request"),
                (
                    try EmulatedAppleWallet(issuer: issuer, merchantKey: P256.KeyAgreement.PrivateKey().publicKey, teamID: Self.teamID),
                    "another merchant key"
                ),
                (try EmulatedAppleWallet(issuer: try EmulatedIssuer(), merchantKey: key.publicKey, teamID: Self.teamID), "anchor"),
            ] {
                let refused = await #expect(throws: SwitchbackError.self) {
                    _ = try await Self.coordinator(rig, wallet: wallet).signIn(.verifyWithWallet(Self.request))
                }
                #expect(refused?.code == .presentationInvalid)
                #expect(rig.log.all.last { $0.contains("presentation refused") }?.contains(reason) == true, "\(reason): \(rig.log.all.suffix(3))")
            }
        }
    }

    @Test("the answer counts once, for the secret that started it; a request Wallet would refuse is refused before the companion is asked")
    func onceAndBound() async throws {
        let issuer = try EmulatedIssuer()
        let key = P256.KeyAgreement.PrivateKey()
        let wallet = try EmulatedAppleWallet(issuer: issuer, merchantKey: key.publicKey, teamID: Self.teamID)
        try await Self.with(issuer, key: key) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let started = try await client.startAppleIdentity(binding: CompanionRig.binding)
            #expect(started.nonce.count == 32 && started.merchantIdentifier == Self.merchant)
            let encrypted = try await wallet.requestDocument(Self.request, merchantIdentifier: started.merchantIdentifier, nonce: started.nonce)
            let stolen = await #expect(throws: SwitchbackError.self) {
                _ = try await client.verifyAppleIdentity(
                    requestID: started.requestID, binding: "another-binding-of-another-app-0123", encryptedData: encrypted)
            }
            #expect(stolen?.oauthError?.error == "invalid_grant")
            let again = await #expect(throws: SwitchbackError.self, "a wrong binding used the request up") {
                _ = try await client.verifyAppleIdentity(requestID: started.requestID, binding: CompanionRig.binding, encryptedData: encrypted)
            }
            #expect(again?.oauthError?.error == "invalid_grant")

            let fresh = try await client.startAppleIdentity(binding: CompanionRig.binding)
            let answer = try await wallet.requestDocument(Self.request, merchantIdentifier: fresh.merchantIdentifier, nonce: fresh.nonce)
            #expect(
                try await client.verifyAppleIdentity(requestID: fresh.requestID, binding: CompanionRig.binding, encryptedData: answer).claims(
                    "identity") != nil)
            await #expect(throws: SwitchbackError.self, "replayed") {
                _ = try await client.verifyAppleIdentity(requestID: fresh.requestID, binding: CompanionRig.binding, encryptedData: answer)
            }
            // Wallet's answer to one request does not verify another's.
            let other = try await client.startAppleIdentity(binding: CompanionRig.binding)
            let crossed = await #expect(throws: SwitchbackError.self) {
                _ = try await client.verifyAppleIdentity(requestID: other.requestID, binding: CompanionRig.binding, encryptedData: answer)
            }
            #expect(crossed?.code == .presentationInvalid)

            let invalid = IdentityDocumentRequest(fields: [.init(.age), .init(.ageAtLeast(18))])
            let refused = await #expect(throws: SwitchbackError.self) {
                _ = try await Self.coordinator(rig, wallet: wallet).signIn(.verifyWithWallet(invalid))
            }
            #expect(refused?.code == .invalidConfiguration)
        }
    }

    @Test("with App Attest required: the start is asserted, and a 40 KB answer (a portrait) is asserted by the same key and verifies")
    func attested() async throws {
        let issuer = try EmulatedIssuer()
        let key = P256.KeyAgreement.PrivateKey()
        let wallet = try EmulatedAppleWallet(
            issuer: issuer, merchantKey: key.publicKey, teamID: Self.teamID, portrait: Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0) }))
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(
            issuer, key: key,
            change: { configuration, directory in
                let file = directory.appendingPathComponent("attest-root.pem")
                try? authority.rootPEM.write(to: file, atomically: true, encoding: .utf8)
                configuration.appAttest = .init(
                    appIDs: [AppAttestTests.appID], environment: "production", required: true, rootCertificateFile: file.path)
            }
        ) { rig in
            let (_, _, genuine) = try await AppAttestTests.attestedDevice(rig, authority)
            let (_, _, otherInstall) = try await AppAttestTests.attestedDevice(rig, authority)
            let bare = await #expect(throws: SwitchbackError.self) {
                _ = try await CompanionClient(rig.companion.baseURL, transport: rig.transport).startAppleIdentity(binding: CompanionRig.binding)
            }
            #expect(bare?.oauthError?.error == "attestation_required")
            let started = try await genuine.startAppleIdentity(binding: CompanionRig.binding)
            let encrypted = try await wallet.requestDocument(Self.request, merchantIdentifier: started.merchantIdentifier, nonce: started.nonce)
            #expect(encrypted.count > 30_000)
            let foreign = await #expect(throws: SwitchbackError.self) {
                _ = try await otherInstall.verifyAppleIdentity(requestID: started.requestID, binding: CompanionRig.binding, encryptedData: encrypted)
            }
            #expect(foreign?.oauthError?.error == "invalid_grant")
            let presentation = try await genuine.verifyAppleIdentity(
                requestID: started.requestID, binding: CompanionRig.binding, encryptedData: encrypted)
            guard case .object(let elements)? = presentation.claims("identity")?[EmulatedAppleWallet.nameSpace],
                case .string(let portrait)? = elements["portrait"]
            else {
                Issue.record("no portrait in \(presentation)")
                return
            }
            #expect(Base64URL.decode(portrait)?.count == 30_000)
        }
    }

    @Test("a flood from one address: start and verify answer 429 with Retry-After, each past its own per-address budget")
    func flood() async throws {
        let issuer = try EmulatedIssuer()
        try await Self.with(
            issuer, key: P256.KeyAgreement.PrivateKey(), change: { configuration, _ in configuration.limits.startsPerMinutePerAddress = 2 }
        ) {
            rig in
            for _ in 0..<2 { #expect(try await rig.post("/wallet/apple/start", ["binding": CompanionRig.binding]).response.status == 200) }
            let started = try await rig.post("/wallet/apple/start", ["binding": CompanionRig.binding])
            #expect(started.response.status == 429 && Int(started.response.headers["retry-after"] ?? "") ?? 0 >= 1)
            // The verify route continues a started request: a budget of its own, four times the starts'.
            let bogus: [String: Any] = ["request_id": "x", "binding": CompanionRig.binding, "encrypted_data": "AA"]
            for _ in 0..<8 { #expect(try await rig.post("/wallet/apple/verify", bogus).response.status == 400) }
            #expect(try await rig.post("/wallet/apple/verify", bogus).response.status == 429, "past its own budget")
            rig.clock.advance(by: 61)
            #expect(try await rig.post("/wallet/apple/start", ["binding": CompanionRig.binding]).response.status == 200, "a minute later")
        }
    }
}
