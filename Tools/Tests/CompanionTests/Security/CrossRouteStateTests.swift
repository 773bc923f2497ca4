import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport

/// A provider response carried to another route than the one its sign-in was started on spends nothing:
/// the pending authorization is looked up, its route checked, and only then used up (issue 33).
@Suite("Companion: a state belongs to its route")
struct CrossRouteStateTests {
    @Test("an exchange's response brought to /complete or /bridge/callback is refused there, and the exchange still redeems it")
    func exchangeStateElsewhere() async throws {
        try await CompanionRig.with { rig in
            let started = try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding])
            guard case .redirect(let callback) = try await rig.signIn(try #require(started.json["authorization_url"] as? String)) else {
                throw RigFailure("the provider did not redirect to the app")
            }
            let query = try #require(URLComponents(string: callback)?.percentEncodedQuery)
            for path in ["/complete", "/bridge/callback"] {
                let elsewhere = try await rig.get(try #require(URL(string: rig.url(path).absoluteString + "?" + query)))
                #expect(elsewhere.status == 400, "\(path)")
                #expect(elsewhere.text.contains("another route"), "\(path)")
            }
            let exchanged = try await rig.post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
            #expect(exchanged.response.status == 200, "the state was not spent by the other routes")
            #expect(exchanged.json["sub"] as? String == "9b1f7c2e-alice")
        }
    }

    @Test("a completion's response brought to /exchange is refused there, and /complete still finishes it")
    func completionStateElsewhere() async throws {
        try await CompanionRig.with { rig in
            let flow = "flow-\(UUID().uuidString)-0123456789"
            let started = try await rig.post("/completion/start", ["flow_id": flow])
            let authorizationURL = try #require(started.json["authorization_url"] as? String)
            guard case .redirect(let callback) = try await rig.signIn(authorizationURL) else {
                throw RigFailure("the provider did not redirect to the companion")
            }
            let query = try #require(URLComponents(string: callback)?.percentEncodedQuery)
            let asExchange = try await rig.post(
                "/exchange", ["callback_url": CompanionRig.appRedirect + "?" + query, "binding": CompanionRig.binding])
            #expect(asExchange.response.status == 400)
            #expect(asExchange.json["error"] as? String == "invalid_state")
            let completed = try await rig.get(try #require(URL(string: rig.url("/complete").absoluteString + "?" + query)))
            #expect(completed.status == 200 || completed.status == 303, "the completion finished (status \(completed.status))")
        }
    }
}
