import Foundation
import Logging
import NIOCore
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// The companion attacked over real HTTP on loopback: each test names the attacker, what they hold and what
/// they try, and fails on the code before the fix. Where a store is involved, the test runs on memory and on
/// PostgreSQL (two instances sharing it).
@Suite("Companion under attack: intercepted and phished sign-ins")
struct SignInAttackTests {
    // MARK: Intercepted callback on the server-started exchange

    @Test(
        "a malicious app that receives the callback (same custom scheme) cannot redeem it without the starting app's binding",
        arguments: StoreKind.available)
    func exchangeInterception(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let rig = try await CompanionRig.start(store: store)
            do {
                let started = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
                let noBinding = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect])
                #expect(noBinding.response.status == 400, "a start without a binding is refused")
                guard case .redirect(let callback) = try await rig.signIn(try #require(started.json["authorization_url"] as? String)) else {
                    throw RigFailure("no redirect")
                }
                // The interceptor holds exactly the callback URL.
                let stolen = try await rig.post("/exchange", ["callback_url": callback])
                #expect(stolen.response.status == 400)
                #expect(stolen.json["sub"] == nil && stolen.json["session"] == nil)
                let guessed = try await rig.post("/exchange", ["callback_url": callback, "binding": "guessed-binding-0123456789abcdef"])
                #expect(guessed.response.status == 400)
                #expect(guessed.json["error"] as? String == "invalid_grant")
                // The app's own request still works: the attempts used nothing up.
                let app = try await rig.post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
                #expect(app.response.status == 200)
                #expect(app.json["sub"] as? String == "9b1f7c2e-alice")
                await rig.stop()
            } catch {
                await rig.stop()
                throw error
            }
        }
    }

    // MARK: Backend completion started by an attacker

    @Test(
        "an attacker's flow_id collects nothing from a victim's sign-in: the result needs the one-time value of the victim's app link",
        arguments: StoreKind.available)
    func completionPhishing(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let rig = try await CompanionRig.start(store: store)
            do {
                // The attacker starts a flow and sends the victim the provider URL.
                let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                let started = try await rig.post("/completion/start", ["flow_id": flowID])
                let phishingURL = try #require(started.json["authorization_url"] as? String)
                // The victim signs in, and the victim's browser shows the companion's final page.
                guard case .redirect(let location) = try await rig.signIn(phishingURL) else { throw RigFailure("no redirect") }
                let page = try await rig.get(try #require(URL(string: location)))
                #expect(page.text.contains("You are signed in"))
                // The attacker polls with the flow ID: the provider answered, but nothing is handed over.
                let polled = try await rig.post("/completion/status", ["flow_id": flowID, "wait": 0])
                #expect(polled.response.status == 202)
                #expect(polled.json["status"] as? String == "awaiting_return")
                #expect(polled.json["sub"] == nil && polled.json["session"] == nil && polled.json["access_token"] == nil)
                let forged = try await rig.post(
                    "/completion/status", ["flow_id": flowID, "result": Base64URL.encode(SystemEntropy().randomBytes(count: 32)), "wait": 0])
                #expect(forged.response.status == 400)
                #expect(forged.json["sub"] == nil)
                // Only the value in the victim's browser works (the residual risk SECURITY.md names: the
                // victim forwarding that link to the attacker).
                let pageURL = try #require(URL(string: location))
                let link = try #require(WebPage(url: pageURL, html: page.text).returnLink)
                let value = try #require(CompanionAuthorization.returnValue(in: link))
                let collected = try await rig.post("/completion/status", ["flow_id": flowID, "result": value, "wait": 0])
                #expect(collected.json["sub"] as? String == "9b1f7c2e-alice")
                await rig.stop()
            } catch {
                await rig.stop()
                throw error
            }
        }
    }

    @Test(
        "a store that fails is not a replay: a DPoP proof or a flow_id it could not record gets 503, and the same ones are still refused once recorded"
    )
    func storeFailureIsNotReplay() async throws {
        let store = FailingInsertsStore(InMemoryCompanionStore())
        try await CompanionRig.with(store: store, returns: .tokens, change: { $0.handOff?.acceptedClients = ["native-rs"] }) { rig in
            let bound = try await Attack.credential(rig, clientID: "native-rs", dpop: .perSignIn)
            let key = try #require(bound.dpopKey)
            let token = bound.accessToken
            let proof = try key.proof(method: "POST", url: rig.url("/handoff"), accessToken: token, now: Date(), jti: "during-an-outage")
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            await store.setFailing([.proofID, .completion])
            let handOff = try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof])
            #expect(handOff.response.status == 503)
            #expect((handOff.json["error_description"] as? String)?.contains("already used") == false)
            let started = try await rig.post("/completion/start", ["flow_id": flowID])
            #expect(started.response.status == 503)
            #expect((started.json["error_description"] as? String)?.contains("in use") == false)
            // The store is back: the proof and the flow ID work once, then are refused as replays.
            await store.setFailing([])
            #expect(try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof]).response.status == 201)
            let replayed = try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof])
            #expect(replayed.response.status == 401)
            #expect((replayed.json["error_description"] as? String)?.contains("already used") == true)
            #expect(try await rig.post("/completion/start", ["flow_id": flowID]).response.status == 200)
            let reused = try await rig.post("/completion/start", ["flow_id": flowID])
            #expect(reused.response.status == 400)
            #expect((reused.json["error_description"] as? String)?.contains("already in use") == true)
        }
    }

    @Test("a start whose pushed request the provider refuses releases its flow_id")
    func failedStartReleasesFlow() async throws {
        let store = InMemoryCompanionStore()
        try await CompanionRig.with(store: store, change: { $0.provider?.clientSecret = "not-the-secret" }) { broken in
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            let refused = try await broken.post("/completion/start", ["flow_id": flowID])
            #expect(refused.response.status == 502)
            // The same store behind a correctly configured instance: the flow ID is free again.
            try await withStopping(
                try await Companion.start(
                    CompanionRig.configuration(issuer: broken.emulator.issuer), store: store,
                    logger: Logger(label: "fixed") { _ in SwiftLogNoOpLogHandler() }
                ), stop: { await $0.stop() }
            ) { fixed in
                let retried = try await broken.transport.send(
                    HTTPRequest(
                        method: .post, url: URL(string: fixed.baseURL.absoluteString + "/completion/start")!,
                        headers: ["Content-Type": "application/json"],
                        body: try JSONSerialization.data(withJSONObject: ["flow_id": flowID]))
                )
                #expect(retried.status == 200)
            }
        }
    }
}
