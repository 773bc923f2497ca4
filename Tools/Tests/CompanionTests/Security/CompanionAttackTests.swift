import Foundation
import Logging
import NIOCore
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// The companion attacked over real HTTP on loopback, as the independent review did (issue 19): each test
/// names the attacker, what they hold and what they try, and fails on the code before the fix. Where a
/// store is involved, the test runs on memory and on PostgreSQL (two instances sharing it).
@Suite("Companion under attack")
struct CompanionAttackTests {
    /// Signs alice in as the public client `clientID` (another relying party of the same provider, or the
    /// app's own client) and returns its credential.
    static func credential(_ rig: CompanionRig, clientID: String = "native-rs", dpop: ClientConfiguration.DPoPPolicy = .off) async throws
        -> Credential
    {
        let client = OIDCClient(
            configuration: ClientConfiguration(
                clientID: clientID, redirectURI: URL(string: CompanionRig.appRedirect)!, scopes: ["openid", CompanionRig.handOffScope], dpop: dpop),
            provider: .discovery(issuer: rig.emulator.issuer)
        )
        let session = try await client.prepareAuthorization()
        guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL), let callback = URL(string: location)
        else {
            throw RigFailure("the provider did not redirect")
        }
        return try await client.completeAuthorization(.redirect(callback), session: session)
    }

    static func handOff(_ rig: CompanionRig, headers: [String: String]) async throws -> (response: HTTPResponse, json: [String: Any]) {
        try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: headers)
    }

    // MARK: 1. Another relying party's token (confused deputy)

    @Test("introspection: a token the provider issued to another client for the same user buys no session; an accepted client's does")
    func confusedDeputyIntrospection() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            // The attacker runs another service at the same provider and holds alice's token for it.
            let foreign = try await Self.credential(rig, clientID: "native-es")
            let refused = try await Self.handOff(rig, headers: ["Authorization": "Bearer \(foreign.accessToken)"])
            #expect(refused.response.status == 401)
            #expect(refused.json["handoffotp"] == nil)
            #expect((refused.json["error_description"] as? String)?.contains("not issued to a client this server accepts") == true)
            // The companion's own client is accepted by default.
            let own = try await Self.handOff(rig, headers: ["Authorization": "Bearer \(try await rig.accessToken())"])
            #expect(own.response.status == 201)

            // The app's client, listed explicitly, is accepted; the backend's own then is not.
            try await CompanionRig.with(returns: .tokens, change: { $0.handOff?.acceptedClients = ["native-rs"] }) { listed in
                let app = try await Self.credential(listed, clientID: "native-rs")
                #expect(try await Self.handOff(listed, headers: ["Authorization": "Bearer \(app.accessToken)"]).response.status == 201)
                #expect(try await Self.handOff(listed, headers: ["Authorization": "Bearer \(try await listed.accessToken())"]).response.status == 401)
                let other = try await Self.credential(listed, clientID: "native-es")
                #expect(try await Self.handOff(listed, headers: ["Authorization": "Bearer \(other.accessToken)"]).response.status == 401)
            }
        }
    }

    @Test("JWT access tokens: client_id (and azp) must name an accepted client, even with the right audience and signature")
    func confusedDeputyJWT() async throws {
        let audience = "https://api.example.com"
        try await CompanionRig.with(
            returns: .tokens, emulator: { $0.accessTokenAudience = audience },
            change: {
                $0.handOff = .init(validation: .jwt, audience: audience, allowedRedirects: [CompanionRig.webApp], acceptedClients: ["native-rs"])
            }
        ) { rig in
            let app = try await Self.credential(rig, clientID: "native-rs")
            #expect(try await Self.handOff(rig, headers: ["Authorization": "Bearer \(app.accessToken)"]).response.status == 201)
            let foreign = try await Self.credential(rig, clientID: "native-es")
            #expect(foreign.accessToken.split(separator: ".").count == 3, "a JWT for the same audience, signed by the provider")
            let refused = try await Self.handOff(rig, headers: ["Authorization": "Bearer \(foreign.accessToken)"])
            #expect(refused.response.status == 401)
            #expect(refused.json["handoffotp"] == nil)
        }
    }

    // MARK: 4. Sender-constrained tokens

    @Test(
        "a DPoP-bound token is refused as Bearer, without a proof, with a replayed proof, another key's proof or another request's; the core's proof works"
    )
    func dpopBoundHandOff() async throws {
        try await CompanionRig.with(returns: .tokens, change: { $0.handOff?.acceptedClients = ["native-rs"] }) { rig in
            let bound = try await Self.credential(rig, clientID: "native-rs", dpop: .perSignIn)
            let key = try #require(bound.dpopKey)
            #expect(bound.tokenType.lowercased() == "dpop")
            let token = bound.accessToken
            let endpoint = rig.url("/handoff")

            // A thief who copied the token from a log or a proxy, without the key.
            #expect(try await Self.handOff(rig, headers: ["Authorization": "Bearer \(token)"]).response.status == 401)
            #expect(try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)"]).response.status == 401)
            let thief = DPoPKey()
            let thiefProof = try thief.proof(method: "POST", url: endpoint, accessToken: token, now: Date(), jti: "thief-1")
            #expect(try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": thiefProof]).response.status == 401)
            // Proofs by the right key, but for another request, another token, or stale.
            let wrongURL = try key.proof(method: "POST", url: rig.url("/exchange"), accessToken: token, now: Date(), jti: "wrong-url")
            let wrongToken = try key.proof(method: "POST", url: endpoint, accessToken: "another-token", now: Date(), jti: "wrong-ath")
            let stale = try key.proof(method: "POST", url: endpoint, accessToken: token, now: Date().addingTimeInterval(-600), jti: "stale")
            for proof in [wrongURL, wrongToken, stale] {
                #expect(try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof]).response.status == 401)
            }
            // The right proof works once; replayed (captured on the wire), it is refused.
            let proof = try key.proof(method: "POST", url: endpoint, accessToken: token, now: Date(), jti: "once-only")
            #expect(try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof]).response.status == 201)
            let replayed = try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof])
            #expect(replayed.response.status == 401)
            #expect((replayed.json["error_description"] as? String)?.contains("already used") == true)
            // The core's SessionHandOff with the key sends a fresh proof each time.
            let handOff = SessionHandOff(companion: CompanionClient(rig.companion.baseURL, transport: rig.transport), dpop: key)
            let first = try await handOff.redeemURL(for: try #require(URL(string: CompanionRig.webApp)), accessToken: token)
            let second = try await handOff.redeemURL(for: try #require(URL(string: CompanionRig.webApp)), accessToken: token)
            #expect(first != second)
            // Without the key, the core's client is refused as any Bearer sender would be.
            await expectCode(.handOffRefused) {
                _ = try await SessionHandOff(companion: CompanionClient(rig.companion.baseURL, transport: rig.transport)).redeemURL(
                    for: URL(string: CompanionRig.webApp)!, accessToken: token)
            }
        }
    }

    // MARK: 2. Intercepted callback on the server-started exchange

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

    // MARK: 3. Backend completion started by an attacker

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
            let bound = try await Self.credential(rig, clientID: "native-rs", dpop: .perSignIn)
            let key = try #require(bound.dpopKey)
            let token = bound.accessToken
            let proof = try key.proof(method: "POST", url: rig.url("/handoff"), accessToken: token, now: Date(), jti: "during-an-outage")
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            await store.setFailing([.proofID, .completion])
            let handOff = try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof])
            #expect(handOff.response.status == 503)
            #expect((handOff.json["error_description"] as? String)?.contains("already used") == false)
            let started = try await rig.post("/completion/start", ["flow_id": flowID])
            #expect(started.response.status == 503)
            #expect((started.json["error_description"] as? String)?.contains("in use") == false)
            // The store is back: the proof and the flow ID work once, then are refused as replays.
            await store.setFailing([])
            #expect(try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof]).response.status == 201)
            let replayed = try await Self.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof])
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

    // MARK: 5. Login CSRF on the redeem link

    @Test(
        "the redeem link sets nothing by GET; a cross-site or Origin-less POST is refused; another account's session is replaced only when confirmed"
    )
    func redeemCSRF() async throws {
        let store = InMemoryCompanionStore()
        try await CompanionRig.with(store: store, returns: .tokens) { rig in
            let issued = try await Self.handOff(rig, headers: ["Authorization": "Bearer \(try await rig.accessToken())"])
            let redeemText = try #require(issued.json["redeem_url"] as? String)
            let redeemURL = try #require(URL(string: redeemText))
            let code = try #require(issued.json["handoffotp"] as? String)
            // The attacker mails the victim their own link: the GET shows a page naming the account, nothing more.
            let page = try await rig.get(redeemURL)
            #expect(page.status == 200)
            #expect(page.headers["set-cookie"] == nil && page.headers["location"] == nil)
            #expect(page.text.contains("Continue as alice (9b1f7c2e-alice)"), "the provider's username beside the subject")
            #expect(page.headers["content-security-policy"]?.contains("script-src 'none'") == true)
            // A hidden auto-submitting form on the attacker's site, and a client that sends no Origin.
            let fields = [("handoffotp", code), ("goto", CompanionRig.webApp)]
            let crossSite = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields, headers: ["Origin": "https://evil.example"]))
            #expect(crossSite.status == 403)
            #expect(crossSite.headers["set-cookie"] == nil)
            let noOrigin = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields))
            #expect(noOrigin.status == 403)
            let fetchSite = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields, headers: ["Sec-Fetch-Site": "cross-site"]))
            #expect(fetchSite.status == 403)

            // The browser is already signed in as someone else (a session of bob's).
            let bob = try await rig.session(in: store, subject: "bob-subject")
            let swap = try await rig.transport.send(.form(rig.url("/handoff/redeem"), fields, headers: ["Origin": rig.origin, "Cookie": bob.cookie]))
            #expect(swap.status == 409, "no silent replacement of another subject's session")
            #expect(swap.headers["set-cookie"] == nil)
            let swapPage = String(decoding: swap.body, as: UTF8.self)
            #expect(swapPage.contains("signed in as bob-subject"))
            // The user confirms on that page: bob's session ends, alice's begins.
            let confirm = try #require(WebPage(url: rig.url("/handoff/redeem"), html: swapPage).confirmForm)
            let confirmed = try await rig.transport.send(
                .form(confirm.action, confirm.fields, headers: ["Origin": rig.origin, "Cookie": bob.cookie]))
            #expect(confirmed.status == 303)
            #expect(confirmed.headers["set-cookie"]?.hasPrefix("__Host-switchback_session=") == true)
            #expect(try await rig.get(rig.url("/session"), headers: ["Cookie": bob.cookie]).status == 401, "the replaced session is gone")
        }
    }

    @Test("the same-origin check takes this server's origin in any ASCII case, and nothing that only lowercases to it")
    func originCase() {
        let origin = "https://companion.example:8443"
        for accepted in [origin, "HTTPS://Companion.Example:8443", "https://companion.examplE:8443"] {
            #expect(ASCIICase.equals(accepted.utf8, lowercased: origin.utf8), "\(accepted)")
        }
        // The Kelvin sign lowercases to "k" in Unicode, which `lowercased() ==` accepted; "@" and "`" differ
        // only in the bit that ASCII case sets; then a longer, a shorter and an empty origin.
        let refused = [
            ("https://\u{212A}ey.example", "https://key.example"), ("https://a@b.example", "https://a`b.example"),
            (origin + "/", origin), (String(origin.dropLast()), origin), ("", origin), ("null", origin),
        ]
        for (text, expected) in refused {
            #expect(!ASCIICase.equals(text.utf8, lowercased: expected.utf8), "\(text)")
        }
    }

    @Test("logout ends the session (cookie only from the same origin) and clears the cookie")
    func logout() async throws {
        let store = InMemoryCompanionStore()
        try await CompanionRig.with(store: store) { rig in
            let session = try await rig.session(in: store, subject: "alice-subject")
            let crossSite = try await rig.post("/session/logout", [:], headers: ["Cookie": session.cookie, "Origin": "https://evil.example"])
            #expect(crossSite.response.status == 403)
            #expect(try await rig.get(rig.url("/session"), headers: ["Cookie": session.cookie]).status == 200)
            let ended = try await rig.post("/session/logout", [:], headers: ["Cookie": session.cookie, "Origin": rig.origin])
            #expect(ended.response.status == 204)
            #expect(ended.response.headers["set-cookie"]?.contains("Max-Age=0") == true)
            #expect(try await rig.get(rig.url("/session"), headers: ["Cookie": session.cookie]).status == 401)
            let other = try await rig.session(in: store, subject: "carol-subject")
            #expect(try await rig.post("/session/logout", [:], headers: ["Authorization": "Session \(other.id)"]).response.status == 204)
            #expect(try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(other.id)"]).status == 401)
        }
    }

    // MARK: 6 and 7. Floods

    @Test(
        "the start and hand-off routes answer 429 with Retry-After past the per-address limit, /exchange past its own; starts past the cap on pending authorizations"
    )
    func startFlood() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(startsPerMinutePerAddress: 3, startsPerMinute: 100, pendingAuthorizations: 1000)
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            for _ in 0..<3 { #expect(try await rig.post("/bridge/start", body).response.status == 200) }
            let flooded = try await rig.post("/bridge/start", body)
            #expect(flooded.response.status == 429)
            #expect(Int(flooded.response.headers["retry-after"] ?? "") ?? 0 >= 1)
            // The limit counts across the start routes.
            #expect(
                try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding]).response.status
                    == 429)
            #expect(try await rig.post("/permission", ["app_callback_uri": "https://app.example.com/appswitch"]).response.status == 429)
            // The routes that call the provider for an anonymous client count too.
            #expect(
                try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: ["Authorization": "Bearer some-token-0123456789"]).response
                    .status == 429)
            // A request within a flow (here a callback to redeem) has a budget of its own, four times the
            // starts': a flood of starts does not stop the flows already under way.
            let callback: [String: Any] = ["callback_url": "com.example.app:/oauth/callback?code=c&state=s"]
            for _ in 0..<12 { #expect(try await rig.post("/exchange", callback).response.status == 400) }
            #expect(try await rig.post("/exchange", callback).response.status == 429)
            // A minute later the address may start again.
            rig.clock.advance(by: 61)
            #expect(try await rig.post("/bridge/start", body).response.status == 200)

            try await CompanionRig.with(change: {
                $0.limits = .init(startsPerMinutePerAddress: 0, startsPerMinute: 0, pendingAuthorizations: 2)
            }) { capped in
                for _ in 0..<2 { #expect(try await capped.post("/bridge/start", body).response.status == 200) }
                let full = try await capped.post("/bridge/start", body)
                #expect(full.response.status == 429)
                #expect(full.response.headers["retry-after"] == "60")
            }
        }
    }

    @Test("a proxy's client-address header keys the limit when configured; the connection's address otherwise")
    func clientAddressHeader() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(
                startsPerMinutePerAddress: 1, startsPerMinute: 100, clientAddressHeader: "X-Forwarded-For", trustedProxies: ["127.0.0.1"])
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.7, 10.0.0.1"]).response.status == 200)
            #expect(
                try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.9, 10.0.0.1"]).response.status == 429,
                "same last hop")
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "10.0.0.2"]).response.status == 200)
        }
    }

    @Test(
        "one waiting status request per flow (a new one takes its place), a cap on all of them; a waiter (on another instance with PostgreSQL) wakes by notification",
        arguments: StoreKind.available)
    func statusWaiters(kind: StoreKind) async throws {
        try await kind.with { store, second in
            // No store recheck (the default): only a notification can wake the waiter before its deadline.
            let rig = try await CompanionRig.start(
                store: store,
                change: {
                    $0.limits.waitingStatusRequests = 2
                    $0.completion?.maximumWait = 30
                })
            // PostgreSQL: a second instance on the same store, so the provider's answer arrives at the first
            // and the waiter waits at the second (LISTEN/NOTIFY). Memory: one instance (an in-process signal).
            var configuration = CompanionRig.configuration(issuer: rig.emulator.issuer)
            configuration.completion?.maximumWait = 30
            let other =
                kind == .postgres
                ? try await Companion.start(
                    configuration, store: try await second(), logger: Logger(label: "second") { _ in SwiftLogNoOpLogHandler() })
                : rig.companion
            do {
                let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                let url = try #require(try await rig.post("/completion/start", ["flow_id": flowID]).json["authorization_url"] as? String)
                let transport = rig.transport
                let waiting = Task { try await Self.timedStatus(transport, at: other, flowID: flowID, wait: 20) }
                try await Self.waitUntil("the first status request waits") { await other.waiters.count == 1 }
                // The app's connection dropped (the server is not told) and it asks again: the new request
                // takes the waiting one's place, which answers at once; two never wait for one flow.
                let replacing = Task { try await Self.timedStatus(transport, at: other, flowID: flowID, wait: 20) }
                let (replaced, replacedAfter) = try await waiting.value
                #expect(replaced.status == 202 && String(decoding: replaced.body, as: UTF8.self).contains("pending"))
                // Well before its own 20 s deadline (a busy machine can take seconds to get the second request in).
                #expect(replacedAfter < .seconds(15), "the replaced request answered when the new one arrived, not at its deadline")
                try await Self.waitUntil("the replacing request waits") { await other.waiters.count == 1 }
                guard case .redirect(let location) = try await rig.signIn(url) else { throw RigFailure("no redirect") }
                _ = try await rig.get(try #require(URL(string: location)))
                let (response, elapsed) = try await replacing.value
                #expect(response.status == 202)
                #expect(String(decoding: response.body, as: UTF8.self).contains("awaiting_return"))
                #expect(elapsed < .seconds(15), "woken by a notification, not the 20 s deadline: \(elapsed)")

                // The cap: two flows wait, a third is refused.
                var tasks: [Task<Int, any Error>] = []
                for _ in 0..<2 {
                    let id = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                    _ = try await rig.post("/completion/start", ["flow_id": id])
                    // Long enough to be still waiting when the third arrives on a busy machine.
                    tasks.append(Task { try await rig.post("/completion/status", ["flow_id": id, "wait": 8]).response.status })
                }
                try await Self.waitUntil("two status requests wait") { await rig.companion.waiters.count == 2 }
                let third = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                _ = try await rig.post("/completion/start", ["flow_id": third])
                #expect(try await rig.post("/completion/status", ["flow_id": third, "wait": 2]).response.status == 429)
                for task in tasks { #expect(try await task.value == 202) }
                if kind == .postgres { await other.stop() }
                await rig.stop()
            } catch {
                if kind == .postgres { await other.stop() }
                await rig.stop()
                throw error
            }
        }
    }

    @Test("malformed percent-encoding and raw bytes in any GET path or query get an answer, and the server stays up")
    func malformedURLs() async throws {
        try await CompanionRig.with(change: {
            $0.associations = [AppAssociation(appIDs: ["A1B2C3D4E5.com.example.app"], paths: ["/*"])]
        }) { rig in
            let paths = [
                "/complete?a=%zz", "/complete?state=%", "/bridge/callback?x=%25%zz", "/bridge/callback?%ff%fe", "/signed-in?result=%zz",
                "/signed-in/%zz",
                "/signed-in/a\"b", "/signed-in/<x>", "/handoff/redeem?handoffotp=%zz&goto=%zz", "/x%00y", "/%c3%28", "/a{b}|c",
            ]
            for path in paths {
                // Sent raw over a socket: URL parsers on the client side would refuse most of these.
                let status = try await Self.rawGet(port: rig.companion.port, target: path)
                #expect(status >= 200 && status < 500, "\(path) -> \(status)")
                #expect(try await rig.get(rig.url("/health")).status == 200, "the server died on \(path)")
            }
        }
    }

    @Test(
        "a connection that never completes a request head, or sits idle after its answer, is closed after limits.idleTimeout; a waiting request is not"
    )
    func idleConnections() async throws {
        // 2 s, not less: the idle timer starts when the server accepts a connection, so a client starved of CPU
        // for that long between its connect and its request (the full suite on two cores) is cut before it
        // sends anything, which is what the timeout is for, and not what this test asks.
        try await CompanionRig.with(change: { $0.limits.idleTimeout = 2 }) { rig in
            // A status request that waits 5 s for a flow that does not finish: read, being answered, not idle.
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            // Not kept alive: a loaded machine can take more than the idle timeout to send the next
            // request, which would then go out on a connection the server is closing (and be reset).
            _ = try await rig.post("/completion/start", ["flow_id": flowID], headers: ["Connection": "close"])
            let started = ContinuousClock.now
            let waited = try await rig.post("/completion/status", ["flow_id": flowID, "wait": 5])
            #expect(waited.response.status == 202)
            #expect(ContinuousClock.now - started >= .milliseconds(4500), "answered at its own deadline, not cut at the idle timeout")

            // Raw sockets: a head sent in part and then nothing (slowloris), and a keep-alive connection left
            // idle after one answer. Each prints the seconds until the server closed it, timed from before
            // the client's part (so never less than the idle time); one still open after 30 s fails the script.
            let figures = try await Self.python(
                """
                import socket, sys, time
                port = int(sys.argv[1])
                began = time.monotonic()
                s = socket.create_connection(("127.0.0.1", port), timeout=30)
                s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
                assert s.recv(1) == b""
                partial = time.monotonic() - began
                s = socket.create_connection(("127.0.0.1", port), timeout=30)
                # Timed from before the request: the idle time starts later, at the answer's end.
                began = time.monotonic()
                s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                data = b""
                while b"ok" not in data:
                    chunk = s.recv(65536)
                    assert chunk, "closed before the answer"
                    data += chunk
                while s.recv(65536):
                    pass
                print(data.split(b" ")[1].decode(), "%.2f" % partial, "%.2f" % (time.monotonic() - began))
                """, [String(rig.companion.port)], words: 3)
            #expect(figures[0] == "200")
            for seconds in figures.dropFirst().compactMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                #expect(seconds > 1.9 && seconds < 25, "closed after \(seconds) s with a 2 s idle timeout")
            }
        }
    }

    @Test(
        "a body sent a byte at a time is cut at limits.bodyTimeout (counted, never answered as a server error); a body in parts within it is answered"
    )
    func slowBody() async throws {
        try await CompanionRig.with(change: {
            $0.limits.bodyTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets, one keep-alive connection. The first request's body comes in two parts 0.3 s apart,
            // within the deadline, and is answered; the second's promises 200 bytes and sends one every 0.2 s,
            // which keeps the idle timer (75 s) from ever firing. Prints the first answer's status, then the
            // seconds until the server closed the connection and the bytes of the second body sent by then.
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            let figures = try await Self.python(
                """
                import json, re, socket, sys, time
                port = int(sys.argv[1])
                body = json.dumps({"flow_id": sys.argv[2]}).encode()
                head = b"POST /completion/start HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\n"
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                s.sendall(head + b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body[:5])
                time.sleep(0.3)
                s.sendall(body[5:])
                data = b""
                while b"\\r\\n\\r\\n" not in data:
                    chunk = s.recv(65536)
                    assert chunk, "closed before the answer"
                    data += chunk
                answer, rest = data.split(b"\\r\\n\\r\\n", 1)
                length = int(re.search(rb"(?i)content-length: *([0-9]+)", answer).group(1))
                while len(rest) < length:
                    chunk = s.recv(65536)
                    assert chunk, "closed within the answer"
                    rest += chunk
                status = answer.split(b" ")[1].decode()
                s.sendall(head + b"Content-Length: 200\\r\\n\\r\\n")
                began = time.monotonic()
                sent = 0
                try:
                    while sent < 200:
                        s.sendall(b" ")
                        sent += 1
                        s.settimeout(0.2)
                        try:
                            if s.recv(65536) == b"":
                                break
                        except socket.timeout:
                            pass
                except (BrokenPipeError, ConnectionResetError):
                    pass
                print(status, "%.2f" % (time.monotonic() - began), sent)
                """, [String(rig.companion.port), flowID], words: 3)
            #expect(figures[0].hasPrefix("2"), "a body in two parts within the deadline is answered: \(figures[0])")
            let seconds = try #require(Double(figures[1]))
            let sent = try #require(Int(figures[2]))
            #expect(seconds > 0.8 && seconds < 20, "closed after \(seconds) s with a 1 s body timeout")
            #expect(sent < 200, "the whole body was accepted a byte at a time")
            // A long poll is not a slow body: its body came at once, and it waits 3 s past the 1 s deadline.
            let waited = try await rig.post("/completion/status", ["flow_id": flowID, "wait": 3])
            #expect(waited.response.status == 202 && waited.json["status"] as? String == "pending")
            let text = try await ObservabilityTests.scrape(rig)
            #expect(text.contains(#"switchback_connections_closed_total{listener="public",reason="body_timeout"} 1"#), "the cut is counted")
            #expect(text.contains(#"reason="request_timeout""#), "the route counts the cut body as its own refusal")
            #expect(!text.contains(#"status="500""#), "a cut body is no server error")
            #expect(try await rig.get(rig.url("/health")).status == 200)
        }
    }

    @Test("a connection cap above the process's open-file limit is named at start, with the most it could be; one within it is not")
    func openFileLimit() {
        #expect(OpenFileLimit.warning(maxConnections: 10_000, limit: 20_000) == nil)
        let over = OpenFileLimit.warning(maxConnections: 10_000, limit: 1024)
        #expect(over?.contains("only 1024 files") == true && over?.contains("at most 960") == true, "\(over ?? "")")
        #expect(OpenFileLimit.warning(maxConnections: 0, limit: 1024)?.contains("no cap (0)") == true)
        #expect(OpenFileLimit.warning(maxConnections: 10_000, limit: nil) == nil, "no limit to read: nothing to say")
        #if os(Linux)
            #expect((OpenFileLimit.current() ?? 0) > 0, "this process's ulimit -n")
        #endif
    }

    @Test("a body the HTTP parser refuses (a bad chunk size) is 400 invalid_request: not a timeout, and no deadline is left behind")
    func malformedBody() async throws {
        try await CompanionRig.with(change: {
            $0.limits.bodyTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets: a chunked body whose first chunk size is not hexadecimal. Prints the answer's
            // status, then waits past the body deadline with the connection left open on the client's side.
            let figures = try await Self.python(
                """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
                s.sendall(b"POST /completion/start HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\n"
                          b"Transfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\n")
                data = b""
                while b"\\r\\n" not in data:
                    chunk = s.recv(65536)
                    assert chunk, "closed without an answer"
                    data += chunk
                time.sleep(1.5)
                print(data.split(b" ")[1].decode())
                """, [String(rig.companion.port)], words: 1)
            #expect(figures[0] == "400")
            let text = try await ObservabilityTests.scrape(rig)
            #expect(text.contains(#"reason="invalid_request""#), "the route counts its refusal")
            #expect(!text.contains(#"reason="request_timeout""#), "a refused body is not one that stopped arriving")
            #expect(!text.contains(#"reason="body_timeout""#), "no body deadline outlived the refused request")
        }
    }

    @Test("a client that stops reading its answers is cut at limits.writeTimeout; the idle timer alone never would (counted)")
    func slowReader() async throws {
        try await CompanionRig.with(change: {
            $0.limits.writeTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets: a small receive window, 30 000 pipelined requests (about 6 MB of answers, more
            // than the kernel's buffers hold), and nothing read until the test has seen the server count a
            // cut (or given up after 30 s). Then the script reads what there is, and prints whether the
            // connection ended and how many answers came before it did.
            let flag = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-reader-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: flag) }
            async let printed = Self.python(
                """
                import os, socket, sys, time
                port, flag = int(sys.argv[1]), sys.argv[2]
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(("127.0.0.1", port))
                s.settimeout(5)
                try:
                    s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n" * 30000)
                except (socket.timeout, BrokenPipeError, ConnectionResetError):
                    pass
                began = time.monotonic()
                while not os.path.exists(flag) and time.monotonic() - began < 60:
                    time.sleep(0.1)
                s.settimeout(10)
                data = b""
                state = "ended"
                try:
                    while True:
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except ConnectionResetError:
                    pass
                except socket.timeout:
                    state = "open"
                print(state, data.count(b"HTTP/1.1 200"))
                """, [String(rig.companion.port), flag], words: 2)
            var counted = false
            let deadline = ContinuousClock.now + .seconds(30)
            while !counted, ContinuousClock.now < deadline {
                counted = try await ObservabilityTests.scrape(rig).contains(
                    #"switchback_connections_closed_total{listener="public",reason="write_timeout"} 1"#)
                if !counted { try await Task.sleep(for: .milliseconds(200)) }
            }
            _ = FileManager.default.createFile(atPath: flag, contents: nil)
            let figures = try await printed
            #expect(counted, "the cut is counted")
            #expect(figures[0] == "ended", "the connection was cut, not left open: \(figures)")
            #expect((Int(figures[1]) ?? 30000) < 30000, "not every answer was written before the cut: \(figures)")
            #expect(try await rig.get(rig.url("/health")).status == 200)
        }
    }

    @Test(
        "past limits.maxConnections a new connection is closed at once (counted); a slot is free again when a connection closes"
    )
    func connectionCap() async throws {
        try await CompanionRig.with(change: {
            $0.limits.maxConnections = 3
            $0.limits.waitingStatusRequests = 2
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets: three connections held open (each answered once, so each is surely counted), a
            // fourth closed without an answer, then one of the three closed and a fifth answered; with three
            // held again, a sixth is closed (a slot released twice would let it in).
            let figures = try await Self.python(
                """
                import socket, sys, time
                port = int(sys.argv[1])
                def ask(s):
                    data = b""
                    try:
                        s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                        while b"ok" not in data:
                            chunk = s.recv(65536)
                            if not chunk:
                                return "closed"
                            data += chunk
                    except (ConnectionResetError, BrokenPipeError):
                        return "closed"
                    return data.split(b" ")[1].decode()
                def connect():
                    return socket.create_connection(("127.0.0.1", port), timeout=10)
                held = [connect() for _ in range(3)]
                first = [ask(s) for s in held]
                fourth = ask(connect())
                held.pop().close()
                # The server frees the slot when it sees the close; a loaded machine may take a while.
                retries = 0
                kept = connect()
                fifth = ask(kept)
                began = time.monotonic()
                while fifth == "closed" and time.monotonic() - began < 20:
                    retries += 1
                    time.sleep(0.1)
                    kept = connect()
                    fifth = ask(kept)
                sixth = ask(connect())
                print(",".join(first), fourth, fifth, retries, sixth)
                """, [String(rig.companion.port)], words: 5)
            #expect(figures[0] == "200,200,200")
            #expect(figures[1] == "closed", "a fourth connection past a cap of three")
            #expect(figures[2] == "200", "a slot freed by a closed connection")
            #expect(figures[4] == "closed", "three held again: the count came back to the cap")
            let text = try await ObservabilityTests.scrape(rig)
            // The fourth, each try of the fifth's before the slot was free, and the sixth.
            let refused = 2 + (Int(figures[3]) ?? 0)
            #expect(
                text.contains(#"switchback_connections_closed_total{listener="public",reason="over_cap"} "# + "\(refused)\n"), "\(refused) refusals")
        }
    }

    @Test(
        "the metrics listener has its own cap (a connection past it closed, counted as the metrics listener's) and the idle timeout; the public listener is not held by it"
    )
    func metricsListenerLimits() async throws {
        // The idle timeout as shipped (75 s) while the cap is filled: a shorter one could free a held slot on
        // a loaded machine before the connection past the cap is tried.
        try await CompanionRig.with(change: { $0.metrics = .init(host: "127.0.0.1", port: 0) }) { rig in
            let metricsPort = try #require(rig.companion.metricsPort)
            // Raw sockets: the cap's worth of connections to the metrics listener, each answered once (so
            // each is counted), one more closed without an answer, and the public listener answering
            // meanwhile. Prints the held answers, the one past the cap and the public answer.
            let figures = try await Self.python(
                """
                import socket, sys
                port, public, cap = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
                def ask(p, path):
                    try:
                        s = socket.create_connection(("127.0.0.1", p), timeout=10)
                        s.sendall(b"GET " + path + b" HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                        data = b""
                        while b"\\r\\n" not in data:
                            chunk = s.recv(65536)
                            if not chunk:
                                return s, "closed"
                            data += chunk
                    except (ConnectionResetError, BrokenPipeError):
                        return None, "closed"
                    return s, data.split(b" ")[1].decode()
                held = [ask(port, b"/metrics") for _ in range(cap)]
                _, past = ask(port, b"/metrics")
                _, public_answer = ask(public, b"/health")
                print(",".join(sorted(set(status for _, status in held))), past, public_answer)
                """, [String(metricsPort), String(rig.companion.port), String(Companion.metricsConnections)], words: 3)
            #expect(figures[0] == "200", "every connection within the cap answered: \(figures[0])")
            #expect(figures[1] == "closed", "a connection past the metrics listener's cap of \(Companion.metricsConnections)")
            #expect(figures[2] == "200", "the public listener does not share the metrics listener's cap")
            // The script has ended and its connections with it: a slot is free for the scrape.
            var text = ""
            try await Self.waitUntil("a scrape answered") { (try? await ObservabilityTests.scrape(rig)).map { text = $0 } != nil }
            #expect(text.contains(#"switchback_connections_closed_total{listener="metrics",reason="over_cap"} 1"#), "\(text)")
            #expect(!text.contains(#"listener="public""#), "nothing was closed on the public listener")
        }
        try await CompanionRig.with(change: {
            $0.limits.idleTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // A request head sent in part and then nothing (slowloris), timed from before the connection.
            let figures = try await Self.python(
                """
                import socket, sys, time
                began = time.monotonic()
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
                s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
                assert s.recv(1) == b""
                print("%.2f" % (time.monotonic() - began))
                """, [String(try #require(rig.companion.metricsPort))], words: 1)
            let seconds = try #require(Double(figures[0]))
            #expect(seconds > 0.9 && seconds < 25, "a partial head on the metrics listener closed after \(seconds) s with a 1 s idle timeout")
        }
    }

    /// `POST /completion/status` for `flowID` at `companion`, waiting up to `wait` seconds: the answer and how
    /// long it took.
    static func timedStatus(_ transport: any HTTPTransport, at companion: Companion, flowID: String, wait: Int) async throws -> (
        HTTPResponse, Duration
    ) {
        let started = ContinuousClock.now
        let response = try await transport.send(
            HTTPRequest(
                method: .post, url: URL(string: companion.baseURL.absoluteString + "/completion/status")!,
                headers: ["Content-Type": "application/json"], body: try JSONSerialization.data(withJSONObject: ["flow_id": flowID, "wait": wait])))
        return (response, ContinuousClock.now - started)
    }

    /// Returns once `condition` holds, checking every 10 ms; fails the test after 30 s.
    static func waitUntil(_ what: String, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw RigFailure("not within 30 s: \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Runs a Python script with `arguments` (raw sockets: a client that misbehaves as the Swift clients
    /// here cannot be made to) and returns the words it printed; fails the test when the script fails or
    /// prints other than `words` words.
    static func python(_ script: String, _ arguments: [String], words: Int) async throws -> [String] {
        // `ChildProcess.run` reads the child's output on threads of its own: a blocking read here would hold one
        // of the concurrency pool's threads while the companion, on the same pool, has to answer.
        let outcome = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        let printed = outcome.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        try #require(outcome.status == 0 && printed.count == words, "\(outcome.stdout) \(outcome.stderr.prefix(400))")
        return printed
    }

    /// Sends `GET target` exactly as given and returns the status code of the answer.
    static func rawGet(port: Int, target: String) async throws -> Int {
        let printed = try await python(
            """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
            s.sendall(b"GET " + sys.argv[2].encode("latin-1") + b" HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print(data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "0")
            """, [String(port), target], words: 1)
        return Int(printed[0]) ?? 0
    }

    /// The bucket an address text counts in, or nil when it is no address.
    static func bucket(_ text: String) -> String? { ClientAddress(text)?.bucket }

    @Test(
        "rate-limit buckets: IPv4 with or without a port, IPv4-mapped IPv6 as IPv4, IPv6 by its /64 with or without brackets, zone and port; no address is nil"
    )
    func addressParsing() {
        #expect(Self.bucket("2001:db8:1:2:aaaa::1") == Self.bucket("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(Self.bucket("2001:db8:1:2::1") != Self.bucket("2001:db8:1:3::1"))
        #expect(Self.bucket("[2001:db8::1]") == "2001:db8:0:0::/64")
        #expect(Self.bucket("[2001:db8::1]:443") == "2001:db8:0:0::/64")
        #expect(Self.bucket("fe80::1%eth0") == "fe80:0:0:0::/64")
        #expect(Self.bucket("203.0.113.7") == "203.0.113.7")
        // A proxy that writes the port: every source port is the same client, not a bucket of its own.
        #expect(Self.bucket("203.0.113.7:51234") == "203.0.113.7")
        // NIO listening on :: reports IPv4 clients mapped: each is its own IPv4 address, not one shared /64.
        #expect(Self.bucket("::ffff:203.0.113.7") == "203.0.113.7")
        #expect(Self.bucket("::ffff:198.51.100.1") != Self.bucket("::ffff:203.0.113.7"))
        #expect(Self.bucket("[::ffff:203.0.113.7]:8080") == "203.0.113.7")
        for junk in [
            "", "unknown", "203.0.113", "203.0.113.256", "1.2.3.4:99999", "1.2.3.4:", "::1::2", "12345::", "[::1", "g::1", "1:2:3:4:5:6:7:8:9",
        ] {
            #expect(Self.bucket(junk) == nil, "\(junk)")
        }
        let network = try! #require(ClientAddress.Network("10.0.0.0/8"))
        #expect(ClientAddress("10.20.30.40")!.isIn(network))
        #expect(!ClientAddress("11.0.0.1")!.isIn(network))
        // A prefix that ends inside a byte.
        #expect(ClientAddress("172.31.255.1")!.isIn(ClientAddress.Network("172.16.0.0/12")!))
        #expect(!ClientAddress("172.32.0.1")!.isIn(ClientAddress.Network("172.16.0.0/12")!))
        #expect(ClientAddress("::ffff:10.1.2.3")!.isIn(network), "a mapped address is in its IPv4 network")
        #expect(ClientAddress("2001:db8::5")!.isIn(ClientAddress.Network("2001:db8::/32")!))
        #expect(ClientAddress.Network("10.0.0.0/33") == nil && ClientAddress.Network("10.0.0.0/x") == nil)
    }

    @Test("a connection's socket address gives the same client as its printed form: IPv4, IPv6, and IPv4-mapped IPv6 as IPv4")
    func socketAddresses() throws {
        for text in ["203.0.113.7", "2001:db8:1:2:aaaa::1", "::1", "::ffff:203.0.113.7", "fe80::1"] {
            let socket = try SocketAddress(ipAddress: text, port: 443)
            let parsed = try #require(ClientAddress(text))
            #expect(ClientAddress(socket) == parsed, "\(text)")
            #expect(ClientAddress(socket)?.bucket == parsed.bucket, "\(text)")
        }
        #expect(ClientAddress(try SocketAddress(ipAddress: "::ffff:203.0.113.7", port: 1))?.bucket == "203.0.113.7")
    }

    @Test("the header is read only on a proxy's connection: a client reaching the server directly cannot choose its bucket")
    func untrustedHeader() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(
                startsPerMinutePerAddress: 1, startsPerMinute: 100, clientAddressHeader: "X-Forwarded-For", trustedProxies: ["10.0.0.0/8"])
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            // The test connects from 127.0.0.1, which is not a proxy here: a new header value each time buys nothing.
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.1"]).response.status == 200)
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.2"]).response.status == 429)
        }
    }

    @Test("a server beyond loopback must say where its clients' addresses come from; the header needs its proxies")
    func bindDecision() throws {
        var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
        configuration.host = "0.0.0.0"
        configuration.publicURL = "https://auth.example.com"
        #expect(throws: (any Error).self) { try configuration.validate() }
        configuration.limits.directClients = true
        try configuration.validate()
        configuration.limits.directClients = false
        configuration.limits.clientAddressHeader = "X-Forwarded-For"
        #expect(throws: (any Error).self) { try configuration.validate() }
        configuration.limits.trustedProxies = ["10.0.0.0/8", "2001:db8::/32"]
        try configuration.validate()
        configuration.limits.trustedProxies = ["10.0.0.0/8", "not-a-network"]
        #expect(throws: (any Error).self) { try configuration.validate() }

        // Every address as a proxy lets any client choose the address the limits see: refused.
        for everything in ["0.0.0.0/0", "::/0"] {
            configuration.limits.trustedProxies = ["10.0.1.0/24", everything]
            #expect(throws: SwitchbackError.self, "\(everything)") { try configuration.validate() }
        }
        // A broad network is allowed, and warned of at start; a load balancers' subnet is not.
        configuration.limits.trustedProxies = ["10.0.0.0/8", "10.0.1.0/24", "2001:db8::/32", "2001:db8:1::/64", "192.0.2.7"]
        try configuration.validate()
        let warnings = configuration.limits.proxyWarnings
        #expect(warnings.count == 2)
        #expect(warnings.first?.contains("10.0.0.0/8") == true && warnings.last?.contains("2001:db8::/32") == true)
        #expect(warnings.allSatisfy { $0.contains("X-Forwarded-For") })

        // The log level is one of swift-log's.
        configuration.logLevel = "loud"
        #expect(throws: SwitchbackError.self) { try configuration.validate() }
        configuration.logLevel = "trace"
        try configuration.validate()
    }

    @Test("rate-limit buckets: with a proxy header, the entry the trusted hops name")
    func rateLimitBuckets() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(
                startsPerMinutePerAddress: 1, startsPerMinute: 100, clientAddressHeader: "X-Forwarded-For", trustedHops: 2,
                trustedProxies: ["127.0.0.1"])
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            // CDN then load balancer: the client is second from the end; a spoofed first entry changes nothing.
            #expect(
                try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "198.51.100.1, 203.0.113.7, 10.0.0.1"]).response.status == 200)
            #expect(
                try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "198.51.100.99, 203.0.113.7, 10.0.0.1"]).response.status == 429
            )
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.8, 10.0.0.1"]).response.status == 200)
        }
    }

    // MARK: 10 and 17. Pages

    @Test("the app-link page builds its link from publicURL and a normalised path: //evil.example/x stays on this host")
    func associationPage() async throws {
        try await CompanionRig.with(change: {
            $0.associations = [AppAssociation(appIDs: ["A1B2C3D4E5.com.example.app"], paths: ["/*"])]
        }) { rig in
            for path in ["//evil.example/x", "/signed-in//evil.example", "/a/../..//evil.example"] {
                let page = try await rig.transport.send(HTTPRequest(method: .get, url: URL(string: rig.companion.baseURL.absoluteString + path)!))
                guard page.status == 200 else { continue }
                let link = try #require(WebPage(url: rig.url("/"), html: page.text).returnLink)
                #expect(link.host == "127.0.0.1" && link.port == rig.companion.port, "\(path) -> \(link)")
            }
            let ordinary = try await rig.get(rig.url("/signed-in?result=abc"))
            let link = try #require(WebPage(url: rig.url("/"), html: ordinary.text).returnLink)
            #expect(link.absoluteString == rig.companion.baseURL.absoluteString + "/signed-in?result=abc")
        }
    }

    @Test("pages allow no script but the fragment page's own, by hash; its form keeps a path prefix of publicURL")
    func contentSecurityPolicy() async throws {
        try await CompanionRig.with { rig in
            let fragmentPage = try await rig.get(rig.url("/bridge/callback"))
            let policy = try #require(fragmentPage.headers["content-security-policy"])
            #expect(!policy.contains("unsafe-inline"))
            #expect(policy.contains("script-src 'sha256-"))
            let error = try await rig.get(rig.url("/handoff/redeem?handoffotp=x&goto=https%3A%2F%2Fevil.example"))
            #expect(error.headers["content-security-policy"]?.contains("script-src 'none'") == true)

            try await CompanionRig.with(change: { $0.publicURL = "http://127.0.0.1/auth" }) { prefixed in
                // A reverse proxy serves the companion under /auth and strips the prefix: the page is asked for at the bare path.
                let page = try await prefixed.get(try #require(URL(string: "http://127.0.0.1:\(prefixed.companion.port)/bridge/callback")))
                #expect(page.text.contains("action=\"http://127.0.0.1/auth/bridge/fragment\""))
            }
        }
    }
}

extension CompanionRig {
    /// A session of `subject` issued straight into `store`, as an earlier sign-in on this browser made it.
    func session(in store: any CompanionStore, subject: String) async throws -> (id: String, cookie: String) {
        let now = clock.now()
        let record = SessionRecord(subject: subject, acr: nil, createdAt: now, expiresAt: now.addingTimeInterval(3600))
        let id = try await store.issue(.session, record, expiresAt: record.expiresAt)
        return (id, "__Host-switchback_session=\(id)")
    }
}

/// A store that keeps a copy of every value it is given, in front of a real one: what a database reader
/// would see.
actor RecordingStore: ForwardingStore {
    let inner: any CompanionStore
    private(set) var written: [(kind: RecordKind, value: Data)] = []

    init(_ inner: any CompanionStore) { self.inner = inner }

    func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        written.append((kind, value))
        try await inner.insert(kind, digest: digest, value: value, expiresAt: expiresAt)
    }

    func replace(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date, now: Date) async throws -> Bool {
        written.append((kind, value))
        return try await inner.replace(kind, digest: digest, value: value, expiresAt: expiresAt, now: now)
    }
}

/// A store in front of a real one whose inserts of some kinds fail, as a database that is down does.
actor FailingInsertsStore: ForwardingStore {
    let inner: any CompanionStore
    private var failing: Set<RecordKind> = []

    init(_ inner: any CompanionStore) { self.inner = inner }

    func setFailing(_ kinds: Set<RecordKind>) { failing = kinds }

    func insert(_ kind: RecordKind, digest: String, value: Data, expiresAt: Date) async throws {
        guard !failing.contains(kind) else { throw SwitchbackError(.storeFailed, "PostgreSQL query failed: the database is down") }
        try await inner.insert(kind, digest: digest, value: value, expiresAt: expiresAt)
    }
}

@Suite("Companion records at rest")
struct CompanionRecordsAtRestTests {
    @Test("a dump of the store holds no subject, state, verifier, nonce, token or session in any readable form", arguments: StoreKind.available)
    func nothingReadable(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let recording = RecordingStore(store)
            let rig = try await CompanionRig.start(store: recording, returns: .tokens)
            do {
                var secrets = ["9b1f7c2e-alice", "backend-secret", CompanionRig.binding]
                // Exchange with tokens, a hand-off and its redemption, a bridge and a completion.
                let started = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
                secrets.append(try #require(started.json["state"] as? String))
                guard case .redirect(let callback) = try await rig.signIn(try #require(started.json["authorization_url"] as? String)) else {
                    throw RigFailure("no redirect")
                }
                let exchanged = try await rig.post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
                let token = try #require(exchanged.json["access_token"] as? String)
                secrets += [token, try #require(exchanged.json["id_token"] as? String)]
                let issued = try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: ["Authorization": "Bearer \(token)"])
                let redeemText = try #require(issued.json["redeem_url"] as? String)
                let landing = try await rig.followRedeem(try #require(URL(string: redeemText)))
                let cookie = try #require(landing.headers["set-cookie"]?.split(separator: ";").first?.split(separator: "=").last)
                secrets.append(String(cookie))
                let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                secrets.append(flowID)
                let completion = try await rig.post("/completion/start", ["flow_id": flowID])
                guard case .redirect(let location) = try await rig.signIn(try #require(completion.json["authorization_url"] as? String)) else {
                    throw RigFailure("no redirect")
                }
                let finalPage = try #require(URL(string: location))
                _ = try await rig.get(finalPage)

                let written = await recording.written
                #expect(Set(written.map(\.kind)).isSuperset(of: [.authorization, .handOffCode, .session, .completion]))
                for record in written {
                    let raw = String(decoding: record.value, as: UTF8.self)
                    #expect(
                        (try? JSONSerialization.jsonObject(with: record.value, options: .fragmentsAllowed)) == nil,
                        "a \(record.kind.rawValue) record is readable JSON")
                    for secret in secrets {
                        #expect(
                            !raw.contains(secret)
                                && !record.value.base64EncodedString().contains(Data(secret.utf8).base64EncodedString().dropLast(4)))
                    }
                }
                await rig.stop()
            } catch {
                await rig.stop()
                throw error
            }
        }
    }

    @Test("a sealed value moved to another record's row, or altered, does not open: a typed store failure, never another record's data")
    func sealedValuesStayInTheirRow() async throws {
        let store = InMemoryCompanionStore()
        let now = Date()
        let first = try await store.issue(.session, ["subject": "alice"], expiresAt: now.addingTimeInterval(60))
        let second = try await store.issue(.session, ["subject": "bob"], expiresAt: now.addingTimeInterval(60))
        let firstValue = try #require(await store.read(.session, digest: Secrets.digest(first), now: now))
        // The attacker with write access copies alice's sealed value over bob's row.
        _ = await store.take(.session, digest: Secrets.digest(second), now: now)
        try await store.insert(.session, digest: Secrets.digest(second), value: firstValue, expiresAt: now.addingTimeInterval(60))
        await #expect(throws: TamperedRecord.self) { _ = try await store.lookUp(.session, secret: second, as: [String: String].self, now: now) }
        // Altered in place.
        var altered = firstValue
        altered[altered.count - 1] ^= 0x01
        _ = await store.take(.session, digest: Secrets.digest(first), now: now)
        try await store.insert(.session, digest: Secrets.digest(first), value: altered, expiresAt: now.addingTimeInterval(60))
        await #expect(throws: TamperedRecord.self) { _ = try await store.lookUp(.session, secret: first, as: [String: String].self, now: now) }
    }

    @Test(
        "a database writer cannot mint a session: a record sealed without the server's record key is refused with 401, counted, never a 5xx; the same record sealed by the server opens",
        arguments: StoreKind.available)
    func writerCannotMint(kind: StoreKind) async throws {
        try await kind.with { store, _ in
            let rig = try await CompanionRig.start(store: store, returns: .session)
            do {
                let now = rig.clock.now()
                let victim = SessionRecord(subject: "victim-sub", acr: nil, createdAt: now, expiresAt: now.addingTimeInterval(3600))
                // The attacker knows the format and picks the secret, but holds no record key of this server.
                let attacker = InMemoryCompanionStore()
                let forgedID = try await attacker.issue(.session, victim, expiresAt: now.addingTimeInterval(3600))
                let forged = try #require(await attacker.read(.session, digest: Secrets.digest(forgedID), now: now))
                try await store.insert(.session, digest: Secrets.digest(forgedID), value: forged, expiresAt: now.addingTimeInterval(3600))
                let refused = try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(forgedID)"])
                #expect(refused.status == 401, "a minted session was answered \(refused.status)")
                #expect(!String(decoding: refused.body, as: UTF8.self).contains("victim-sub"))
                #expect(rig.log.text.contains("sealed under no key this server holds"))
                #expect(try await store.read(.session, digest: Secrets.digest(forgedID), now: now) == nil, "the row that did not open is removed")
                // A record the first version sealed (no version byte, no key): refused the same way.
                let legacyID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                try await store.insert(
                    .session, digest: Secrets.digest(legacyID), value: Data(forged.dropFirst(5)), expiresAt: now.addingTimeInterval(3600))
                #expect(try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(legacyID)"]).status == 401)

                // A writer who moves a genuine session's row expiry forward: the sealed expiry still ends it.
                let endedID = try await store.issue(
                    .session, SessionRecord(subject: "victim-sub", acr: nil, createdAt: now - 7200, expiresAt: now - 3600),
                    expiresAt: now.addingTimeInterval(3600))
                #expect(try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(endedID)"]).status == 401)

                // The control: the server's own record for the same subject opens.
                let genuineID = try await store.issue(.session, victim, expiresAt: now.addingTimeInterval(3600))
                let genuine = try await rig.get(rig.url("/session"), headers: ["Authorization": "Session \(genuineID)"])
                #expect(genuine.status == 200 && String(decoding: genuine.body, as: UTF8.self).contains("victim-sub"))
                await rig.stop()
            } catch {
                await rig.stop()
                throw error
            }
        }
    }

    @Test("record keys rotate: a record sealed under the previous key opens while that key is listed; new records are sealed under the current one")
    func rotation() async throws {
        let old = Base64URL.encode(Data((0..<32).map { UInt8($0) }))
        let new = Base64URL.encode(Data((0..<32).map { UInt8(255 - $0) }))
        let now = Date()
        let before = InMemoryCompanionStore(recordKeys: try RecordKeys([old]))
        let secret = try await before.issue(.session, ["subject": "alice"], expiresAt: now.addingTimeInterval(60))
        let sealed = try #require(await before.read(.session, digest: Secrets.digest(secret), now: now))

        let rotating = InMemoryCompanionStore(recordKeys: try RecordKeys([new, old]))
        try await rotating.insert(.session, digest: Secrets.digest(secret), value: sealed, expiresAt: now.addingTimeInterval(60))
        #expect(try await rotating.lookUp(.session, secret: secret, as: [String: String].self, now: now) == ["subject": "alice"])
        let fresh = try await rotating.issue(.session, ["subject": "bob"], expiresAt: now.addingTimeInterval(60))
        let freshSealed = try #require(await rotating.read(.session, digest: Secrets.digest(fresh), now: now))
        #expect(Array(freshSealed.prefix(5)) == [2] + (try RecordKeys([new])).current.id, "sealed under the current key, which it names")

        let after = InMemoryCompanionStore(recordKeys: try RecordKeys([new]))
        try await after.insert(.session, digest: Secrets.digest(secret), value: sealed, expiresAt: now.addingTimeInterval(60))
        await #expect(throws: TamperedRecord.self, "the old key is gone") {
            _ = try await after.lookUp(.session, secret: secret, as: [String: String].self, now: now)
        }
        try await after.insert(.session, digest: Secrets.digest(fresh), value: freshSealed, expiresAt: now.addingTimeInterval(60))
        #expect(try await after.lookUp(.session, secret: fresh, as: [String: String].self, now: now) == ["subject": "bob"])

        // A key that is not 32 bytes, a key twice, or none: refused without repeating a key.
        for keys in [["c2hvcnQ"], [new, new], []] {
            #expect(throws: SwitchbackError.self) { try RecordKeys(keys) }
        }
        do {
            _ = try RecordKeys([new, "c2hvcnQ"])
        } catch let error as SwitchbackError {
            #expect(error.message.contains("key 2") && !error.message.contains(new))
        }
    }
}
