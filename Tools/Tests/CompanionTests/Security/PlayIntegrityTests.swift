import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// Google Play Integrity on the start routes: only a Play-recognized copy of a configured Android app, on a
/// device with the integrity asked for, starts a sign-in. The verdicts are ``SoftwarePlayIntegrity``'s:
/// Google's format, with response keys of the test's own.
@Suite("Play Integrity on the start routes")
struct PlayIntegrityTests {
    static let startBody = try! JSONSerialization.data(withJSONObject: ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])

    static func with(
        _ play: SoftwarePlayIntegrity, change: (inout ServerConfiguration.PlayIntegrity) -> Void = { _ in },
        _ body: (CompanionRig) async throws -> Void
    ) async throws {
        var section = ServerConfiguration.PlayIntegrity(
            packageNames: [play.packageName], certificateDigests: [play.certificateDigest], decryptionKey: play.decryptionKeyText,
            verificationKey: play.verificationKeyText)
        change(&section)
        try await CompanionRig.with(change: {
            $0.playIntegrity = section
            // Every case asks for a challenge and starts: more than one address's default minute.
            $0.limits.startsPerMinutePerAddress = 200
        }) { rig in try await body(rig) }
    }

    /// The header an Android app sends: a fresh challenge and a token whose nonce covers it and the request,
    /// with `change` applied to the verdict.
    static func header(
        _ rig: CompanionRig, _ play: SoftwarePlayIntegrity, body: Data = startBody, path: String = "/exchange/start",
        signer: P256.Signing.PrivateKey? = nil, encryptionKey: SymmetricKey? = nil, alg: String = "A256KW",
        change: (inout SoftwarePlayIntegrity.Verdict) -> Void = { _ in }
    ) async throws -> String {
        let challenge = try #require(try await rig.post("/attest/challenge", [:]).json["challenge"] as? String)
        let nonce = CompanionAPI.playIntegrityNonce(challenge: challenge, method: "POST", path: path, body: body)
        var verdict = play.verdict(nonce: nonce, at: rig.clock.now())
        change(&verdict)
        return "\(challenge) \(try play.token(verdict, signer: signer, encryptionKey: encryptionKey, alg: alg))"
    }

    /// A start with `header`: the answer's status, error and description, and the reason the log gives for
    /// a refused verdict (the answer does not name it).
    static func start(_ rig: CompanionRig, _ header: String?, body: Data = startBody) async throws -> (
        status: Int, error: String?, answered: String, logged: String
    ) {
        let before = rig.log.all.count
        let answer = try await rig.post("/exchange/start", body: body, headers: header.map { ["Switchback-Play-Integrity": $0] } ?? [:])
        let logged = rig.log.all.dropFirst(before).first { $0.contains("verdict refused") } ?? ""
        return (Int(answer.response.status), answer.json["error"] as? String, answer.json["error_description"] as? String ?? "", logged)
    }

    @Test("the genuine app's verdict starts a sign-in once; without a verdict, or replayed, the start is refused")
    func genuineApp() async throws {
        let play = SoftwarePlayIntegrity()
        try await Self.with(play) { rig in
            #expect(rig.companion.routes.contains { $0.path == "/exchange/start" && $0.purpose.contains("[attested]") })
            #expect(!rig.companion.routes.contains { $0.path == "/attest/register" }, "registration is App Attest's")
            var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
            configuration.playIntegrity = .init(packageNames: [play.packageName], verificationKey: play.verificationKeyText)
            let banner = rig.companion.banner(configuration)
            #expect(banner.contains("Play Integrity: com.example.app, device MEETS_DEVICE_INTEGRITY, required"), "\(banner)")
            let none = try await Self.start(rig, nil)
            #expect(none.status == 401 && none.error == "attestation_required")
            // A header of the mechanism not configured is no attestation.
            let apple = try await rig.post("/exchange/start", body: Self.startBody, headers: ["Switchback-App-Attestation": "a b c"])
            #expect(apple.response.status == 401 && apple.json["error"] as? String == "attestation_required")

            let header = try await Self.header(rig, play)
            #expect(try await Self.start(rig, header).status == 200)
            let replayed = try await Self.start(rig, header)
            #expect(replayed.status == 401 && replayed.answered.contains("challenge"), "\(replayed.answered)")

            // The documented string form and a plain number both read as the time; a padded nonce is the same nonce.
            let numeric = try await Self.header(rig, play) { $0.timestampAsNumber = true }
            #expect(try await Self.start(rig, numeric).status == 200)
            let padded = try await Self.header(rig, play) { $0.nonce = $0.nonce.map { $0 + "=" } }
            #expect(try await Self.start(rig, padded).status == 200)
        }
    }

    @Test("each verdict Google's page says to refuse is refused, naming why: app, device, licence, time, nonce, keys")
    func refusals() async throws {
        let play = SoftwarePlayIntegrity()
        try await Self.with(
            play,
            change: {
                $0.requireLicensed = true
                $0.minimumVersionCode = 40
            }
        ) { rig in
            let other = SoftwarePlayIntegrity(packageName: "com.example.clone")
            let cases: [(String, (inout SoftwarePlayIntegrity.Verdict) -> Void)] = [
                ("package name", { $0.requestPackageName = "com.example.clone" }),
                ("not recognized", { $0.appRecognitionVerdict = "UNRECOGNIZED_VERSION" }),
                ("not recognized", { $0.appRecognitionVerdict = "UNEVALUATED" }),
                ("package name", { $0.packageName = "com.example.clone" }),
                ("certificate", { $0.certificateDigests = [other.certificateDigest] }),
                ("device", { $0.deviceVerdicts = nil }),
                ("device", { $0.deviceVerdicts = ["MEETS_BASIC_INTEGRITY"] }),
                ("licensed", { $0.licensing = "UNLICENSED" }),
                ("test response", { $0.testing = true }),
                ("version", { $0.versionCode = "39" }),
                ("version", { $0.versionCode = nil }),
                ("older", { $0.timestamp -= 301 }),
                ("future", { $0.timestamp += 120 }),
                (
                    "nonce",
                    {
                        $0.nonce = CompanionAPI.playIntegrityNonce(
                            challenge: "another", method: "POST", path: "/exchange/start", body: Self.startBody)
                    }
                ),
                ("nonce", { $0.nonce = nil }),
            ]
            for (reason, change) in cases {
                let refused = try await Self.start(rig, try await Self.header(rig, play, change: change))
                #expect(refused.status == 401 && refused.error == "attestation_invalid", "\(reason)")
                #expect(refused.logged.contains(reason), "\(reason): \(refused.logged)")
                #expect(!refused.answered.contains(reason), "the answer does not name the check: \(refused.answered)")
            }

            // The verdict was made for another body, or another route.
            let otherBody = try JSONSerialization.data(withJSONObject: [
                "redirect_uri": CompanionRig.appRedirect, "binding": "another-binding-0123456789abc",
            ])
            let forBody = try await Self.header(rig, play)
            #expect(try await Self.start(rig, forBody, body: otherBody).logged.contains("nonce"))
            let forRoute = try await Self.header(rig, play, path: "/completion/start")
            #expect(try await Self.start(rig, forRoute).logged.contains("nonce"))

            // Signed or encrypted with keys that are not the configured ones, or with another algorithm.
            #expect(try await Self.start(rig, try await Self.header(rig, play, signer: P256.Signing.PrivateKey())).logged.contains("signature"))
            #expect(
                try await Self.start(rig, try await Self.header(rig, play, encryptionKey: SymmetricKey(size: .bits256))).logged.contains("decrypt"))
            #expect(try await Self.start(rig, try await Self.header(rig, play, alg: "A128KW")).logged.contains("A256KW"))
        }
    }

    @Test("hostile headers and tokens are refused as attestation_invalid, never a crash, and nothing is started")
    func hostileInput() async throws {
        let play = SoftwarePlayIntegrity()
        try await Self.with(play) { rig in
            let challenge = { try #require(try await rig.post("/attest/challenge", [:]).json["challenge"] as? String) }
            let tokens = [
                "", "....", "a.b.c.d.e", String(repeating: "A", count: 6000), "e30.e30.e30.e30.e30",
                Base64URL.encode(Data(#"{"alg":"A256KW","enc":"A256GCM"}"#.utf8)) + ".AAAA.AAAA.AAAA.AAAA",
            ]
            for token in tokens {
                let refused = try await Self.start(rig, "\(try await challenge()) \(token)")
                #expect(refused.status == 401 && refused.error == "attestation_invalid", "\(token.prefix(40))")
            }
            #expect(try await Self.start(rig, "only-one-part").error == "attestation_invalid")
            #expect(
                try await Self.start(rig, "unknown-challenge \(try play.token(play.verdict(nonce: "x", at: Date())))").answered.contains("challenge"))
        }
    }

    @Test("a Play-attested start binds nothing to a key: its result goes to whoever holds the binding, as without attestation")
    func resultWithoutKey() async throws {
        let play = SoftwarePlayIntegrity()
        try await Self.with(play) { rig in
            let started = try await rig.post(
                "/exchange/start", body: Self.startBody, headers: ["Switchback-Play-Integrity": try await Self.header(rig, play)])
            guard case .redirect(let location) = try await rig.signIn(started.json["authorization_url"] as? String ?? "") else {
                throw RigFailure("the provider did not redirect")
            }
            let redeemed = try await rig.post("/exchange", ["callback_url": location, "binding": CompanionRig.binding])
            #expect(redeemed.response.status == 200)
            // An app-started code is a start too: without a verdict it is refused before the provider is asked.
            let appStarted = try await rig.post(
                "/exchange",
                ["code": "c", "code_verifier": String(repeating: "v", count: 43), "redirect_uri": CompanionRig.appRedirect, "nonce": "n"])
            #expect(appStarted.response.status == 401 && appStarted.json["error"] as? String == "attestation_required")
            // With a verdict over it, the request reaches the provider, which refuses the made-up code.
            let exchangeBody = try JSONSerialization.data(withJSONObject: [
                "code": "c", "code_verifier": String(repeating: "v", count: 43), "redirect_uri": CompanionRig.appRedirect, "nonce": "n",
            ])
            let attested = try await rig.post(
                "/exchange", body: exchangeBody,
                headers: ["Switchback-Play-Integrity": try await Self.header(rig, play, body: exchangeBody, path: "/exchange")])
            let error = attested.json["error"] as? String ?? ""
            #expect(attested.response.status == 400 && !error.hasPrefix("attestation"), "\(error)")
        }
    }

    @Test("configuration: keys as Play Console gives them, validated before listening; the decryption key is a redacted secret")
    func configuration() async throws {
        let play = SoftwarePlayIntegrity()
        func validated(_ change: (inout ServerConfiguration.PlayIntegrity) -> Void) -> String? {
            var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
            var section = ServerConfiguration.PlayIntegrity(
                packageNames: [play.packageName], decryptionKey: play.decryptionKeyText, verificationKey: play.verificationKeyText)
            change(&section)
            configuration.playIntegrity = section
            do {
                try configuration.validate()
                return nil
            } catch let error as SwitchbackError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(validated { _ in } == nil)
        #expect(validated { $0.decryptionKey = nil }?.contains("decryptionKey") == true)
        #expect(validated { $0.decryptionKey = Data(count: 16).base64EncodedString() }?.contains("decryptionKey") == true)
        #expect(validated { $0.verificationKey = "bm90IGEga2V5" }?.contains("verificationKey") == true)
        #expect(validated { $0.packageNames = ["not a package"] }?.contains("packageNames") == true)
        #expect(validated { $0.deviceVerdicts = ["MEETS_WISHES"] }?.contains("deviceVerdicts") == true)
        #expect(validated { $0.deviceVerdicts = [] }?.contains("deviceVerdicts") == true, "no label would turn the device check off")
        #expect(validated { $0.required = false } == nil)
        var both = CompanionRig.configuration(issuer: "https://id.example.com")
        both.appAttest = .init(appIDs: ["A1B2C3D4E5.com.example.app"], required: false)
        both.playIntegrity = .init(packageNames: [play.packageName], decryptionKey: play.decryptionKeyText, verificationKey: play.verificationKeyText)
        #expect(throws: SwitchbackError.self, "one section required and the other not cannot be told apart") { try both.validate() }
        both.playIntegrity?.required = false
        try both.validate()
        #expect(validated { $0.certificateDigests = ["abc"] }?.contains("certificateDigests") == true)
        #expect(validated { $0.maximumAge = 86400 }?.contains("maximumAge") == true)

        var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
        configuration.playIntegrity = .init(
            packageNames: [play.packageName], decryptionKey: play.decryptionKeyText, verificationKey: play.verificationKeyText)
        let printed = configuration.printed()
        #expect(!printed.contains(play.decryptionKeyText) && printed.contains(#""decryptionKey" : "<redacted>""#))
        #expect(printed.contains(play.verificationKeyText.replacingOccurrences(of: "/", with: "\\/")) || printed.contains(play.verificationKeyText))
    }
}
