import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// The emulated issuer and wallet against the companion's verifier routes, through the app's own
/// `CompanionClient`: what a wallet shares comes through; each of the wallet's faults is refused for its own
/// reason (the companion's log says which; the app only learns `invalid_presentation`); the result goes to
/// the App Attest key that started the request.
@Suite("The emulated wallet and the companion's verifier")
struct EmulatedWalletTests {
    static let appLink = "https://app.example.com/wallet-return"
    static let query = DCQLQuery(credentials: [
        .init(id: "pid", vctValues: [EmulatedWallet.pidType], claims: [[.string("given_name")], [.string("birthdate")]])
    ])

    /// A companion verifying for `query`, trusting `issuer`, signing as a verifier of its own; `change` adds to its configuration.
    static func with(
        _ issuer: EmulatedIssuer, query: DCQLQuery = Self.query, change: @escaping (inout ServerConfiguration, URL) -> Void = { _, _ in },
        _ body: (CompanionRig) async throws -> Void
    ) async throws {
        try await with(
            trusting: issuer.authority.rootPEM, query: query,
            transport: StatusListHosting(issuer, revoked: [EmulatedWallet.revokedIndex], next: URLSessionTransport()),
            change: change, body)
    }

    /// A companion verifying for `query`, trusting the issuer roots in `anchorsPEM` (for SD-JWT VCs and mdocs
    /// alike), signing as a verifier of its own.
    static func with(
        trusting anchorsPEM: String, query: DCQLQuery, transport: (any HTTPTransport)? = nil,
        change: @escaping (inout ServerConfiguration, URL) -> Void = { _, _ in }, _ body: (CompanionRig) async throws -> Void
    ) async throws {
        let verifier = try EmulatedAuthority(name: "Test Verifier", dnsName: "verifier.example.com")
        let folder = try KeyFolder(prefix: "switchback-wallet")
        defer { folder.remove() }
        let directory = folder.url
        let write = folder.write
        let section = ServerConfiguration.Wallet(
            signingKeyFile: try write("key.pem", verifier.key.pemRepresentation), certificateChainFile: try write("chain.pem", try verifier.leafPEM),
            issuerTrustAnchorsFile: try write("anchors.pem", anchorsPEM), mdocTrustAnchorsFile: try write("iaca.pem", anchorsPEM), query: query,
            appLink: Self.appLink)
        try await CompanionRig.with(
            change: {
                $0.wallet = section
                change(&$0, directory)
            }, transport: transport
        ) { rig in try await body(rig) }
    }

    /// Starts a presentation with `client`, has the wallet answer it, and returns the response_code of the link it opens.
    static func present(
        _ rig: CompanionRig, _ client: CompanionClient, _ wallet: EmulatedWallet, decision: EmulatedWallet.Decision = .share,
        fault: EmulatedWallet.Fault? = nil
    ) async throws -> (code: String, steps: [String]) {
        let started = try await client.startPresentation(binding: CompanionRig.binding, wallet: .openID4VP, now: Date())
        #expect(started.returnURL.absoluteString == Self.appLink)
        let answer = await wallet.answer(started.authorizationURL, decision: decision, fault: fault, transport: rig.transport)
        let next = try #require(answer.next, "\(answer.steps)")
        return (try #require(WalletPresentation.responseCode(in: next)), answer.steps)
    }

    @Test("shared: exactly the asked claims, once; nothing the query did not ask for")
    func shares() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        try await Self.with(issuer) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, steps) = try await Self.present(rig, client, wallet)
            #expect(steps.contains { $0.contains("discloses given_name, birthdate (SD-JWT VC) with key binding") })
            let presentation = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            let pid = try #require(presentation.claims("pid"))
            #expect(pid["given_name"] == "Erika" && pid["birthdate"] == "1984-01-26")
            #expect(pid["family_name"] == nil && pid["nationality"] == nil, "not asked, not disclosed")
            #expect(pid["iss"] == .string(issuer.issuer))
            await #expect(throws: SwitchbackError.self) { _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding) }
        }
    }

    /// Each fault and what the companion's log names as the reason.
    static let faults: [(EmulatedWallet.Fault, String)] = [
        (.wrongNonce, "nonce"), (.wrongAudience, "aud"), (.tamperedDisclosure, "disclosure"), (.expired, "expired"),
        (.unknownIssuer, "anchor"), (.withheldClaim, "does not disclose"), (.revoked, "revoked"),
    ]

    @Test(
        "each fault of the wallet is refused for its own reason; the wallet is told at once and opens the app, which learns invalid_presentation, the log the reason",
        arguments: 0..<7)
    func faults(_ index: Int) async throws {
        let (fault, reason) = Self.faults[index]
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        try await Self.with(issuer) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, steps) = try await Self.present(rig, client, wallet, fault: fault)
            // What the wallet shows: a revoked credential is said to be; every other refusal is one sentence.
            let told = fault == .revoked ? CompanionService.Refusal.revoked : .notAccepted
            #expect(steps.contains("the verifier refuses the answer (HTTP 400); the wallet shows \"\(told.rawValue)\""), "\(steps)")
            let refused = await #expect(throws: SwitchbackError.self) {
                _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            }
            #expect(refused?.code == .presentationInvalid)
            let line = rig.log.all.first { $0.contains("presentation refused") } ?? ""
            #expect(line.lowercased().contains(reason), "\(fault): \(line)")
        }
    }

    @Test(
        "declined in the wallet, encrypted (§5.6, §8.3.1) or plain: the wallet gets its redirect, the redeem ends with access_denied at once; a replayed answer is refused and the genuine one still counts"
    )
    func declineAndReplay() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        try await Self.with(issuer) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            for decision in [EmulatedWallet.Decision.decline, .declinePlain] {
                let (declined, steps) = try await Self.present(rig, client, wallet, decision: decision)
                #expect(steps.contains { $0.hasPrefix("the user declines") }, "\(steps)")
                let refused = await #expect(throws: SwitchbackError.self) {
                    _ = try await client.redeemPresentation(responseCode: declined, binding: CompanionRig.binding)
                }
                #expect(refused?.code == .authorizationError && refused?.oauthError?.error == "access_denied", "\(decision)")
            }

            let (code, steps) = try await Self.present(rig, client, wallet, fault: .replayedResponse)
            #expect(steps.contains("posts the same answer again: HTTP 400"), "\(steps)")
            #expect(try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding).claims("pid")?["given_name"] == "Erika")
        }
    }

    @Test(
        "a flood from one address: the wallet's start, then its request and response routes, answer 429 with Retry-After, each kind past its own budget"
    )
    func flood() async throws {
        let issuer = try EmulatedIssuer()
        try await Self.with(issuer, change: { configuration, _ in configuration.limits.startsPerMinutePerAddress = 3 }) { rig in
            var links: [URL] = []
            for _ in 0..<3 {
                let started = try await rig.post("/wallet/start", ["binding": CompanionRig.binding])
                #expect(started.response.status == 200)
                links.append(try #require((started.json["wallet_url"] as? String).flatMap(URL.init(string:))))
            }
            let flooded = try await rig.post("/wallet/start", ["binding": CompanionRig.binding])
            #expect(flooded.response.status == 429 && Int(flooded.response.headers["retry-after"] ?? "") ?? 0 >= 1)
            let requestURI = try #require(
                URLComponents(url: links[0], resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "request_uri" }?.value.flatMap(
                    URL.init(string:)))
            // The wallet's requests within a started presentation have their own budget (four times the
            // starts'): the flood of starts leaves them answerable, and a flood of them is refused in turn.
            #expect(try await rig.get(requestURI).status == 200, "a presentation under way")
            let bogus = HTTPRequest.form(rig.url("/wallet/response"), [("error", "access_denied"), ("state", "x")])
            for _ in 0..<11 { #expect(try await rig.transport.send(bogus).status == 400) }
            #expect(try await rig.transport.send(bogus).status == 429)
            #expect(try await rig.get(requestURI).status == 429, "the wallet's routes share the budget")
            rig.clock.advance(by: 61)
            #expect(try await rig.get(requestURI).status == 200, "a minute later")
        }
    }

    @Test("a flood of made-up states spends the instance's budget of the wallet's routes: a presentation the server started is still answered")
    func knownFlowsOverBudget() async throws {
        let issuer = try EmulatedIssuer()
        try await Self.with(
            issuer,
            change: { configuration, _ in
                // Two starts a minute for the instance, so eight requests a minute within flows; no per-address limit
                // (the flood comes from everywhere).
                configuration.limits.startsPerMinute = 2
                configuration.limits.startsPerMinutePerAddress = 0
            }
        ) { rig in
            let started = try await rig.post("/wallet/start", ["binding": CompanionRig.binding])
            let link = try #require((started.json["wallet_url"] as? String).flatMap(URL.init(string:)))
            let requestURI = try #require(
                URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "request_uri" }?.value.flatMap(
                    URL.init(string:)))
            // The same route as the wallet's, for presentations the server never started.
            let bogus = requestURI.deletingLastPathComponent().appendingPathComponent("made-up-state-0123456789")
            for _ in 0..<8 { #expect(try await rig.get(bogus).status != 429) }
            let refused = try await rig.transport.send(HTTPRequest(method: .get, url: bogus))
            #expect(refused.status == 429 && Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1, "an unknown state over the budget")
            #expect(try await rig.get(requestURI).status == 200, "the presentation the server started")

            // The wallet's answer route over its budget: an answer for the started presentation that does not
            // verify keeps its own refusal (a retry could not help), a made-up state gets the limit.
            let state = requestURI.lastPathComponent
            let garbage = HTTPRequest.form(rig.url("/wallet/response"), [("response", "not-a-jwe"), ("state", "made-up-state")])
            for _ in 0..<8 { _ = try await rig.transport.send(garbage) }
            #expect(try await rig.transport.send(garbage).status == 429)
            // A JWE naming the started request's key (its kid is the state) whose content does not open.
            let header = Base64URL.encode(Data(#"{"alg":"ECDH-ES","enc":"A128GCM","kid":"\#(state)"}"#.utf8))
            let bad = try await rig.transport.send(.form(rig.url("/wallet/response"), [("response", header + ".AA.AA.AA.AA")]))
            #expect(bad.status == 400, "the presentation's own refusal, not the limit: \(bad.status)")
        }
    }

    @Test("with App Attest: the start is attested, and the claims go only to the install whose key started the request")
    func attested() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        let authority = try SoftwareAppAttest.Authority()
        try await Self.with(
            issuer,
            change: { configuration, directory in
                let file = directory.appendingPathComponent("attest-root.pem")
                try? authority.rootPEM.write(to: file, atomically: true, encoding: .utf8)
                configuration.appAttest = .init(
                    appIDs: [AppAttestTests.appID], environment: "production", required: false, rootCertificateFile: file.path)
            }
        ) { rig in
            let (_, _, genuine) = try await AppAttestTests.attestedDevice(rig, authority)
            let (_, _, otherInstall) = try await AppAttestTests.attestedDevice(rig, authority)
            let unattested = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, _) = try await Self.present(rig, genuine, wallet)
            let bare = await #expect(throws: SwitchbackError.self) {
                _ = try await unattested.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            }
            #expect(bare?.oauthError?.error == "attestation_required")
            let foreign = await #expect(throws: SwitchbackError.self) {
                _ = try await otherInstall.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            }
            #expect(foreign?.oauthError?.error == "invalid_grant")
            #expect(try await genuine.redeemPresentation(responseCode: code, binding: CompanionRig.binding).claims("pid") != nil)
        }
    }
}
