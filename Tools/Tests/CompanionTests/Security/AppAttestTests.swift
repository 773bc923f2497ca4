import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// A key ID kept in memory, as the Keychain would keep it.
actor MemoryAttestedKeys: AttestedKeyStore {
    var keyID: String?
    func attestedKeyID() -> String? { keyID }
    func setAttestedKeyID(_ keyID: String?) { self.keyID = keyID }
}

/// App Attest on the start routes: only a genuine copy of a configured app starts a sign-in. The device is
/// ``SoftwareAppAttest`` (Apple's format, a test authority); the companion trusts that authority's root.
@Suite("App Attest on the start routes")
struct AppAttestTests {
    static let appID = "A1B2C3D4E5.com.example.app"

    /// A rig whose companion requires App Attest for `appID`, trusting `authority`.
    static func with(
        _ authority: SoftwareAppAttest.Authority, required: Bool = true, environment: String = "production", store: (any CompanionStore)? = nil,
        _ body: (CompanionRig) async throws -> Void
    ) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-attest-root-\(UUID().uuidString).pem")
        try authority.rootPEM.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await CompanionRig.with(
            store: store,
            change: {
                $0.appAttest = .init(appIDs: [appID], environment: environment, required: required, rootCertificateFile: file.path)
            }
        ) { rig in try await body(rig) }
    }

    static func client(_ rig: CompanionRig, _ device: SoftwareAppAttest, keys: MemoryAttestedKeys = MemoryAttestedKeys()) -> CompanionClient {
        CompanionClient(rig.companion.baseURL, transport: rig.transport, attestation: AppAttestation(service: device, keys: keys))
    }

    /// The genuine app on a device of `authority`, its key store and its client, after a first start (the
    /// key attested).
    static func attestedDevice(_ rig: CompanionRig, _ authority: SoftwareAppAttest.Authority) async throws -> (
        device: SoftwareAppAttest, keys: MemoryAttestedKeys, client: CompanionClient
    ) {
        let device = SoftwareAppAttest(authority: authority, appID: appID)
        let keys = MemoryAttestedKeys()
        let client = client(rig, device, keys: keys)
        try await start(client)
        return (device, keys, client)
    }

    static func start(_ client: CompanionClient) async throws {
        _ = try await client.startExchange(
            redirectURI: URL(string: CompanionRig.appRedirect)!, binding: CompanionRig.binding, options: AuthorizationOptions(), now: Date())
    }

    @Test("Apple's root is the one Apple publishes (SHA-256 fingerprint) and a companion starts with it")
    func appleRoot() async throws {
        let root = try Certificate(pemEncoded: AppAttestVerifier.appleRootPEM)
        let pem = try root.serializeAsPEM()
        let fingerprint = SHA256.hash(data: Data(pem.derBytes)).map { String(format: "%02x", $0) }.joined()
        #expect(fingerprint == "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
        #expect(root.notValidAfter > Date(timeIntervalSince1970: 2_300_000_000), "valid until 2045")
        try await CompanionRig.with(change: { $0.appAttest = .init(appIDs: [Self.appID]) }) { rig in
            #expect(rig.companion.routes.contains { $0.path == "/attest/register" })
            #expect(rig.companion.routes.contains { $0.path == "/exchange/start" && $0.purpose.contains("[attested]") })
        }
    }

    @Test("the genuine app attests once and starts sign-ins; without an assertion, or on a device that cannot attest, the start is refused")
    func genuineApp() async throws {
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(authority) { rig in
            let anonymous = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
            #expect(anonymous.response.status == 401 && anonymous.json["error"] as? String == "attestation_required")

            let device = SoftwareAppAttest(authority: authority, appID: Self.appID)
            let client = Self.client(rig, device)
            try await Self.start(client)
            try await Self.start(client)
            #expect(device.keyIDs.count == 1, "one key, attested once, asserted twice")

            // The simulator or a Mac: nothing to claim, so the companion refuses.
            let simulator = Self.client(rig, SoftwareAppAttest(authority: authority, appID: Self.appID, supported: false))
            let refused = await #expect(throws: SwitchbackError.self) { try await Self.start(simulator) }
            #expect(refused?.oauthError?.error == "attestation_required")
        }
    }

    @Test("another app's key, a development key on a production server, another authority's chain: the attestation is refused")
    func foreignAttestations() async throws {
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(authority) { rig in
            for (device, reason) in [
                (SoftwareAppAttest(authority: authority, appID: "ZZZZZZZZZZ.com.evil.app"), "another app"),
                (SoftwareAppAttest(authority: authority, appID: Self.appID, development: true), "production"),
                (SoftwareAppAttest(authority: try SoftwareAppAttest.Authority(), appID: Self.appID), "root"),
            ] {
                let before = rig.log.all.count
                let error = await #expect(throws: SwitchbackError.self) { try await Self.start(Self.client(rig, device)) }
                #expect(error?.oauthError?.error == "attestation_invalid", "\(reason)")
                // The log names the check; the answer does not.
                let logged = rig.log.all.dropFirst(before).first { $0.contains("attestation refused") } ?? ""
                #expect(logged.contains(reason), "\(reason): \(logged)")
                #expect(error?.oauthError?.errorDescription?.contains(reason) == false, "\(error?.oauthError?.errorDescription ?? "")")
            }
        }
    }

    @Test("an assertion works once, for its own body and route; a forged signature, a stale counter and an unknown key are refused")
    func assertions() async throws {
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(authority) { rig in
            let (device, keys, _) = try await Self.attestedDevice(rig, authority)
            let keyID = try #require(await keys.keyID)
            let rawKeyID = try #require(Data(base64Encoded: keyID))

            func header(_ body: Data, path: String = "/exchange/start", forKey key: String = keyID, challenged: Bool = true) async throws -> String {
                let challenge =
                    challenged ? try #require(try await rig.post("/attest/challenge", [:]).json["challenge"] as? String) : CompanionAPI.unchallenged
                let clientData = CompanionAPI.attestedClientData(challenge: challenge, method: "POST", path: path, body: body)
                let assertion = try await device.generateAssertion(key, clientDataHash: Data(SHA256.hash(data: clientData)))
                return "\(Base64URL.encode(rawKeyID)) \(challenge) \(Base64URL.encode(assertion))"
            }
            let body = try JSONSerialization.data(withJSONObject: ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
            let signed = try await header(body)
            #expect(try await rig.post("/exchange/start", body: body, headers: ["Switchback-App-Attestation": signed]).response.status == 200)
            let replayed = try await rig.post("/exchange/start", body: body, headers: ["Switchback-App-Attestation": signed])
            #expect(replayed.response.status == 401 && (replayed.json["error_description"] as? String)?.contains("challenge") == true)

            let other = try JSONSerialization.data(withJSONObject: [
                "redirect_uri": CompanionRig.appRedirect, "binding": "another-binding-0123456789abc",
            ])
            let forBody = try await header(body)
            let swapped = try await rig.post("/exchange/start", body: other, headers: ["Switchback-App-Attestation": forBody])
            #expect(swapped.response.status == 401, "the assertion covers the body")
            let forRoute = try await header(body, path: "/completion/start")
            #expect(try await rig.post("/exchange/start", body: body, headers: ["Switchback-App-Attestation": forRoute]).response.status == 401)

            var forged = Array(try await header(body).utf8)
            forged[forged.count - 3] = forged[forged.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            let tampered = try await rig.post(
                "/exchange/start", body: body, headers: ["Switchback-App-Attestation": String(decoding: forged, as: UTF8.self)])
            #expect(tampered.response.status == 401)

            // A key the companion never saw attested (made on the device, never registered).
            let unregistered = try await device.generateKey()
            let unknown = try await header(body, forKey: unregistered)
            let unknownParts = unknown.split(separator: " ")
            let wrongID = "\(Base64URL.encode(try #require(Data(base64Encoded: unregistered)))) \(unknownParts[1]) \(unknownParts[2])"
            let notAttested = try await rig.post("/exchange/start", body: body, headers: ["Switchback-App-Attestation": wrongID])
            #expect(notAttested.response.status == 401 && notAttested.json["error"] as? String == "attestation_key_unknown")
            #expect(try await rig.post("/exchange/start", body: body, headers: ["Switchback-App-Attestation": "one two"]).response.status == 401)

            // Without a challenge: refused on a start; on a result request taken once, its counter then spent.
            let unchallengedStart = try await rig.post(
                "/exchange/start", body: body, headers: ["Switchback-App-Attestation": try await header(body, challenged: false)])
            #expect(
                unchallengedStart.response.status == 401 && (unchallengedStart.json["error_description"] as? String)?.contains("challenge") == true)
            let status = try JSONSerialization.data(withJSONObject: ["flow_id": "no-such-flow-0123456789abcdef", "wait": 0])
            let unchallenged = try await header(status, path: "/completion/status", challenged: false)
            let first = try await rig.post("/completion/status", body: status, headers: ["Switchback-App-Attestation": unchallenged])
            #expect(first.response.status == 404, "the assertion passes; no such flow")
            let before = rig.log.all.count
            let again = try await rig.post("/completion/status", body: status, headers: ["Switchback-App-Attestation": unchallenged])
            #expect(again.response.status == 401 && again.json["error"] as? String == "attestation_invalid")
            #expect(rig.log.all.dropFirst(before).contains { $0.contains("assertion refused") && $0.contains("counter") })

            // An app-started POST /exchange begins a sign-in: like a start, its assertion must cover a challenge.
            let code = try JSONSerialization.data(withJSONObject: [
                "code": "some-code", "code_verifier": String(repeating: "v", count: 43), "redirect_uri": CompanionRig.appRedirect,
                "nonce": "nonce-0123456789abcdef",
            ])
            let unchallengedCode = try await rig.post(
                "/exchange", body: code, headers: ["Switchback-App-Attestation": try await header(code, path: "/exchange", challenged: false)])
            #expect(unchallengedCode.response.status == 401 && unchallengedCode.json["error"] as? String == "attestation_invalid")
            #expect((unchallengedCode.json["error_description"] as? String)?.contains("challenge") == true)
            let challengedCode = try await rig.post(
                "/exchange", body: code, headers: ["Switchback-App-Attestation": try await header(code, path: "/exchange")])
            #expect(challengedCode.response.status == 400, "attested as a start; the provider then refuses the made-up code")
        }
    }

    @Test(
        "an attested key whose row no longer opens (sealed under a record key rotated out, or before record keys): removed, answered attestation_key_unknown, and the app attests a new key by itself"
    )
    func attestedKeyRowThatDoesNotOpen() async throws {
        let authority = try SoftwareAppAttest.Authority()
        let store = InMemoryCompanionStore()
        try await Self.with(authority, store: store) { rig in
            let (_, keys, client) = try await Self.attestedDevice(rig, authority)
            let keyID = try #require(await keys.keyID)
            let digest = Secrets.digest(Base64URL.encode(try #require(Data(base64Encoded: keyID))))
            let now = rig.clock.now()
            // The row now names a record key this server does not hold.
            _ = await store.replace(
                .attestedKey, digest: digest, value: Data([2, 9, 9, 9, 9]) + Data(repeating: 7, count: 60), expiresAt: now.addingTimeInterval(3600),
                now: now)
            try await Self.start(client)
            #expect(await keys.keyID != keyID, "a new key was attested")
            #expect(rig.log.text.contains("removed"))
            try await Self.start(client)
        }
    }

    @Test("the library asserts an app-started POST /exchange over a fresh challenge, which the companion requires there")
    func appStartedExchangeThroughTheLibrary() async throws {
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(authority) { rig in
            let (_, _, client) = try await Self.attestedDevice(rig, authority)
            let app = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "backend", redirectURI: try #require(URL(string: CompanionRig.appRedirect)), pushedAuthorization: .never),
                provider: .discovery(issuer: rig.emulator.issuer))
            let session = try await app.prepareAuthorization()
            let error = await expectFailure("a made-up code must not redeem") { try await client.exchange(code: "made-up-code", session: session) }
            // Past the attestation (a challenged assertion): the provider is the one that refuses the code.
            #expect(error?.oauthError?.error == "invalid_grant", "\(String(describing: error))")
        }
    }

    @Test(
        "a sign-in's result goes only to the install whose key started it: not without an assertion, not to another attested install of the app"
    )
    func resultBoundToStartingKey() async throws {
        let authority = try SoftwareAppAttest.Authority()
        // Not required, so that only the binding to the starting key can refuse a request without an assertion.
        try await Self.with(authority, required: false) { rig in
            let (_, _, genuine) = try await Self.attestedDevice(rig, authority)
            let (_, _, otherInstall) = try await Self.attestedDevice(rig, authority)
            let unattested = CompanionClient(rig.companion.baseURL, transport: rig.transport)

            // The exchange: the callback and the binding alone are not enough.
            let redirect = try #require(URL(string: CompanionRig.appRedirect))
            let started = try await genuine.startExchange(
                redirectURI: redirect, binding: CompanionRig.binding, options: AuthorizationOptions(), now: Date())
            guard case .redirect(let location) = try await rig.signIn(started.authorizationURL.absoluteString), let callback = URL(string: location)
            else { throw RigFailure("the provider did not redirect") }
            let bare = await #expect(throws: SwitchbackError.self) {
                try await unattested.exchange(callback: callback, binding: CompanionRig.binding)
            }
            #expect(bare?.oauthError?.error == "attestation_required")
            let foreign = await #expect(throws: SwitchbackError.self) {
                try await otherInstall.exchange(callback: callback, binding: CompanionRig.binding)
            }
            #expect(foreign?.oauthError?.error == "invalid_grant")
            // Neither used the sign-in up: the install that started it redeems it.
            #expect(try await genuine.exchange(callback: callback, binding: CompanionRig.binding).subject == "9b1f7c2e-alice")

            // The backend completion: its status, pending or finished, is told only to the starting key.
            let flow = "flow-secret-0123456789abcdefghij"
            let completion = try await genuine.startCompletion(flowSecret: flow, options: AuthorizationOptions(), now: Date())
            for client in [unattested, otherInstall] {
                let refused = await #expect(throws: SwitchbackError.self) {
                    _ = try await client.completionProgress(flowSecret: flow, result: nil, wait: 0)
                }
                #expect(["attestation_required", "invalid_grant"].contains(refused?.oauthError?.error ?? "-"))
            }
            guard case .redirect(let answer) = try await rig.signIn(completion.authorizationURL.absoluteString), let answerURL = URL(string: answer)
            else { throw RigFailure("the provider did not redirect") }
            #expect(try await rig.get(answerURL).status == 200)
            let afterwards = await #expect(throws: SwitchbackError.self) {
                _ = try await otherInstall.completionProgress(flowSecret: flow, result: nil, wait: 0)
            }
            #expect(afterwards?.oauthError?.error == "invalid_grant")
            guard case .awaitingReturn = try await genuine.completionProgress(flowSecret: flow, result: nil, wait: 0) else {
                throw RigFailure("the completed sign-in is not waiting for the app link")
            }
        }
    }

    @Test("a replayed registration spends nothing twice; the challenge route is rate-limited per address like the starts")
    func registrationReplayAndFlood() async throws {
        let authority = try SoftwareAppAttest.Authority()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-attest-root-\(UUID().uuidString).pem")
        try authority.rootPEM.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try await CompanionRig.with(change: {
            $0.appAttest = .init(appIDs: [Self.appID], rootCertificateFile: file.path)
            $0.limits.startsPerMinutePerAddress = 3
        }) { rig in
            let device = SoftwareAppAttest(authority: authority, appID: Self.appID)
            let keyID = try await device.generateKey()
            let challenge = try #require(try await rig.post("/attest/challenge", [:]).json["challenge"] as? String)
            let object = try await device.attestKey(keyID, clientDataHash: Data(SHA256.hash(data: Data(challenge.utf8))))
            let body: [String: Any] = [
                "key_id": Base64URL.encode(try #require(Data(base64Encoded: keyID))), "attestation": Base64URL.encode(object), "challenge": challenge,
            ]
            #expect(try await rig.post("/attest/register", body).response.status == 201)
            let replayed = try await rig.post("/attest/register", body)
            #expect(replayed.response.status == 401 && (replayed.json["error_description"] as? String)?.contains("challenge") == true)
            // Three requests a minute from this address: the fourth is refused before any record is made.
            let flooded = try await rig.post("/attest/challenge", [:])
            #expect(flooded.response.status == 429 && flooded.json["challenge"] == nil)
        }
    }

    @Test("a device that lost its key (a restored backup) attests a new one and goes on")
    func lostKey() async throws {
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(authority) { rig in
            let (device, keys, client) = try await Self.attestedDevice(rig, authority)
            let first = await keys.keyID
            device.forgetKeys()
            try await Self.start(client)
            let second = await keys.keyID
            #expect(first != nil && second != nil && first != second)
        }
    }

    @Test("a companion that forgot the key (expired, or a new store) makes the app attest a new one, once, and the start goes through")
    func companionForgotKey() async throws {
        let authority = try SoftwareAppAttest.Authority()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-attest-root-\(UUID().uuidString).pem")
        try authority.rootPEM.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let store = InMemoryCompanionStore()
        try await CompanionRig.with(store: store, change: { $0.appAttest = .init(appIDs: [Self.appID], rootCertificateFile: file.path) }) { rig in
            let (device, keys, client) = try await Self.attestedDevice(rig, authority)
            let first = try #require(await keys.keyID)
            let raw = try #require(Data(base64Encoded: first))
            #expect(await store.take(.attestedKey, digest: Secrets.digest(Base64URL.encode(raw)), now: Date()) != nil)
            try await Self.start(client)
            let second = try #require(await keys.keyID)
            #expect(second != first && device.keyIDs.count == 2, "a new key was attested")
        }
    }

    @Test("a key of an app taken off the list is refused at its next assertion")
    func appRemoved() async throws {
        let authority = try SoftwareAppAttest.Authority()
        let device = SoftwareAppAttest(authority: authority, appID: Self.appID)
        let keyID = try await device.generateKey()
        let hash = Data(SHA256.hash(data: Data("c".utf8)))
        let object = try await device.attestKey(keyID, clientDataHash: hash)
        let roots = [try Certificate(pemEncoded: authority.rootPEM)]
        let key = try await AppAttestVerifier(appIDs: [Self.appID], environment: .production, roots: roots).verifyAttestation(
            object, keyID: try #require(Data(base64Encoded: keyID)), clientDataHash: hash, now: Date())
        let assertion = try await device.generateAssertion(keyID, clientDataHash: Data(SHA256.hash(data: Data("r".utf8))))
        let narrowed = AppAttestVerifier(appIDs: ["A1B2C3D4E5.com.example.other"], environment: .production, roots: roots)
        #expect(throws: AppAttestVerifier.Refusal("the key's app is no longer allowed")) {
            _ = try narrowed.verifyAssertion(assertion, clientData: Data("r".utf8), key: key)
        }
    }

    @Test("not required: a start without an assertion passes (older app versions), a bad one is still refused")
    func optional() async throws {
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(authority, required: false) { rig in
            #expect(
                try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding]).response.status
                    == 200)
            let bad = try await rig.post(
                "/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding],
                headers: ["Switchback-App-Attestation": "AAAA BBBB CCCC"])
            #expect(bad.response.status == 401)
        }
    }

    @Test("hostile CBOR and authenticator data are refused, never a crash: truncated, indefinite, nested deep, lengths past the end")
    func hostileInput() async throws {
        for bytes: [UInt8] in [
            [], [0xa1], [0x5f, 0x41, 0x00, 0xff], [0x9f, 0xff], Array(repeating: 0x81, count: 64) + [0x00],
            [0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            [0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], [0xbb, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], [0x63, 0xff, 0xfe, 0xfd],
            [0xa0, 0x00],
        ] {
            #expect(throws: CBORError.self) { _ = try CBOR.decode(Data(bytes)) }
        }
        let verifier = AppAttestVerifier(
            appIDs: [Self.appID], environment: .production, roots: [try Certificate(pemEncoded: AppAttestVerifier.appleRootPEM)])
        let key = AppAttestVerifier.AttestedKey(publicKey: P256.Signing.PrivateKey().publicKey.x963Representation, counter: 0, appID: Self.appID)
        for object in [
            Data(), Data([0xa0]),
            SoftwareAppAttest.cbor(.map([(.text("signature"), .bytes(Data())), (.text("authenticatorData"), .bytes(Data([1])))])),
        ] {
            #expect(throws: AppAttestVerifier.Refusal.self) { _ = try verifier.verifyAssertion(object, clientData: Data(), key: key) }
            await #expect(throws: AppAttestVerifier.Refusal.self) {
                _ = try await verifier.verifyAttestation(object, keyID: Data(count: 32), clientDataHash: Data(count: 32), now: Date())
            }
        }
    }

    /// A device of the app with one key, a challenge's hash, and a verifier that trusts the device's authority.
    static func atTheVerifier() async throws -> (
        device: SoftwareAppAttest, keyID: String, rawKeyID: Data, clientDataHash: Data, verifier: AppAttestVerifier
    ) {
        let authority = try SoftwareAppAttest.Authority()
        let device = SoftwareAppAttest(authority: authority, appID: appID)
        let keyID = try await device.generateKey()
        let verifier = AppAttestVerifier(appIDs: [appID], environment: .production, roots: [try Certificate(pemEncoded: authority.rootPEM)])
        return (device, keyID, try #require(Data(base64Encoded: keyID)), Data(SHA256.hash(data: Data("challenge".utf8))), verifier)
    }

    @Test(
        "at the verifier: an attestation whose counter is not zero, whose key ID is not its certificate's key, or whose credential is another key is refused, each for its own reason"
    )
    func attestationFields() async throws {
        let (device, keyID, rawKeyID, clientDataHash, verifier) = try await Self.atTheVerifier()
        let otherKeyID = try #require(Data(base64Encoded: try await device.generateKey()))
        func verify(_ object: Data, keyID: Data = rawKeyID) async throws {
            _ = try await verifier.verifyAttestation(object, keyID: keyID, clientDataHash: clientDataHash, now: Date())
        }
        // The untouched attestation passes: each refusal below comes from the one field changed.
        try await verify(try await device.attestKey(keyID, clientDataHash: clientDataHash, counter: 0, credentialID: nil))
        await #expect(throws: AppAttestVerifier.Refusal("the attestation's counter is not zero")) {
            try await verify(try await device.attestKey(keyID, clientDataHash: clientDataHash, counter: 1, credentialID: nil))
        }
        await #expect(throws: AppAttestVerifier.Refusal("the key ID is not this key's")) {
            try await verify(try await device.attestKey(keyID, clientDataHash: clientDataHash), keyID: otherKeyID)
        }
        await #expect(throws: AppAttestVerifier.Refusal("the attested credential is not this key")) {
            try await verify(try await device.attestKey(keyID, clientDataHash: clientDataHash, counter: 0, credentialID: otherKeyID))
        }
    }

    @Test(
        "at the verifier: an expired credential certificate or another challenge is refused; an assertion needs a growing counter and its own client data"
    )
    func expiredCertificate() async throws {
        let (device, keyID, rawKeyID, clientDataHash, verifier) = try await Self.atTheVerifier()
        let object = try await device.attestKey(keyID, clientDataHash: clientDataHash)
        let key = try await verifier.verifyAttestation(object, keyID: rawKeyID, clientDataHash: clientDataHash, now: Date())
        #expect(key.appID == Self.appID && key.counter == 0)
        await #expect(throws: AppAttestVerifier.Refusal.self) {
            _ = try await verifier.verifyAttestation(object, keyID: rawKeyID, clientDataHash: clientDataHash, now: Date() + 4 * 86400)
        }
        await #expect(throws: AppAttestVerifier.Refusal.self, "another challenge") {
            _ = try await verifier.verifyAttestation(object, keyID: rawKeyID, clientDataHash: Data(count: 32), now: Date())
        }
        // Assertions: the counter must grow past the last one kept.
        let clientData = Data("a request".utf8)
        let assertion = try await device.generateAssertion(keyID, clientDataHash: Data(SHA256.hash(data: clientData)))
        let counter = try verifier.verifyAssertion(assertion, clientData: clientData, key: key)
        #expect(counter == 1)
        var kept = key
        kept.counter = counter
        #expect(throws: AppAttestVerifier.Refusal("the assertion's counter did not increase")) {
            _ = try verifier.verifyAssertion(assertion, clientData: clientData, key: kept)
        }
        #expect(throws: AppAttestVerifier.Refusal.self) { _ = try verifier.verifyAssertion(assertion, clientData: Data("another".utf8), key: key) }
    }
}
