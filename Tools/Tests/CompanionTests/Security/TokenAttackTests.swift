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
@Suite("Companion under attack: another client's or a stolen token")
struct TokenAttackTests {
    // MARK: Another relying party's token (confused deputy)

    @Test("introspection: a token the provider issued to another client for the same user buys no session; an accepted client's does")
    func confusedDeputyIntrospection() async throws {
        try await CompanionRig.with(returns: .tokens) { rig in
            // The attacker runs another service at the same provider and holds alice's token for it.
            let foreign = try await Attack.credential(rig, clientID: "native-es")
            let refused = try await Attack.handOff(rig, headers: ["Authorization": "Bearer \(foreign.accessToken)"])
            #expect(refused.response.status == 401)
            #expect(refused.json["handoffotp"] == nil)
            #expect((refused.json["error_description"] as? String)?.contains("not issued to a client this server accepts") == true)
            // The companion's own client is accepted by default.
            let own = try await Attack.handOff(rig, headers: ["Authorization": "Bearer \(try await rig.accessToken())"])
            #expect(own.response.status == 201)

            // The app's client, listed explicitly, is accepted; the backend's own then is not.
            try await CompanionRig.with(returns: .tokens, change: { $0.handOff?.acceptedClients = ["native-rs"] }) { listed in
                let app = try await Attack.credential(listed, clientID: "native-rs")
                #expect(try await Attack.handOff(listed, headers: ["Authorization": "Bearer \(app.accessToken)"]).response.status == 201)
                #expect(
                    try await Attack.handOff(listed, headers: ["Authorization": "Bearer \(try await listed.accessToken())"]).response.status == 401)
                let other = try await Attack.credential(listed, clientID: "native-es")
                #expect(try await Attack.handOff(listed, headers: ["Authorization": "Bearer \(other.accessToken)"]).response.status == 401)
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
            let app = try await Attack.credential(rig, clientID: "native-rs")
            #expect(try await Attack.handOff(rig, headers: ["Authorization": "Bearer \(app.accessToken)"]).response.status == 201)
            let foreign = try await Attack.credential(rig, clientID: "native-es")
            #expect(foreign.accessToken.split(separator: ".").count == 3, "a JWT for the same audience, signed by the provider")
            let refused = try await Attack.handOff(rig, headers: ["Authorization": "Bearer \(foreign.accessToken)"])
            #expect(refused.response.status == 401)
            #expect(refused.json["handoffotp"] == nil)
        }
    }

    // MARK: Sender-constrained tokens

    @Test(
        "a DPoP-bound token is refused as Bearer, without a proof, with a replayed proof, another key's proof or another request's; the core's proof works"
    )
    func dpopBoundHandOff() async throws {
        try await CompanionRig.with(returns: .tokens, change: { $0.handOff?.acceptedClients = ["native-rs"] }) { rig in
            let bound = try await Attack.credential(rig, clientID: "native-rs", dpop: .perSignIn)
            let key = try #require(bound.dpopKey)
            #expect(bound.tokenType.lowercased() == "dpop")
            let token = bound.accessToken
            let endpoint = rig.url("/handoff")

            // A thief who copied the token from a log or a proxy, without the key.
            #expect(try await Attack.handOff(rig, headers: ["Authorization": "Bearer \(token)"]).response.status == 401)
            #expect(try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)"]).response.status == 401)
            let thief = DPoPKey()
            let thiefProof = try thief.proof(method: "POST", url: endpoint, accessToken: token, now: Date(), jti: "thief-1")
            #expect(try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": thiefProof]).response.status == 401)
            // Proofs by the right key, but for another request, another token, or stale.
            let wrongURL = try key.proof(method: "POST", url: rig.url("/exchange"), accessToken: token, now: Date(), jti: "wrong-url")
            let wrongToken = try key.proof(method: "POST", url: endpoint, accessToken: "another-token", now: Date(), jti: "wrong-ath")
            let stale = try key.proof(method: "POST", url: endpoint, accessToken: token, now: Date().addingTimeInterval(-600), jti: "stale")
            for proof in [wrongURL, wrongToken, stale] {
                #expect(try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof]).response.status == 401)
            }
            // The right proof works once; replayed (captured on the wire), it is refused.
            let proof = try key.proof(method: "POST", url: endpoint, accessToken: token, now: Date(), jti: "once-only")
            #expect(try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof]).response.status == 201)
            let replayed = try await Attack.handOff(rig, headers: ["Authorization": "DPoP \(token)", "DPoP": proof])
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
}
