import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The idme profile: a standard code flow whose access tokens expire after five minutes, so an app meets
/// refresh within one session of use (docs.id.me, "Token expiration").
@Suite("Emulator: idme profile")
struct EmulatorIDMeTests {
    @Test(
        "access tokens live 300 s: the credential expires within its 30 s leeway of that, and the refresh token gives a new one, keeping the identity"
    )
    func shortLivedAccessTokens() async throws {
        try await EmulatorHarness.withEmulator(profile: .idMe) { emulator in
            let clock = ManualClock(Date())
            let client = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "native-rs", redirectURI: try #require(URL(string: "com.example.app:/oauth/callback"))),
                provider: .discovery(issuer: emulator.issuer), clock: clock
            )
            let credential = try await EmulatorFaultTests.signIn(client)
            let expiresAt = try #require(credential.expiresAt)
            #expect(abs(expiresAt.timeIntervalSince(clock.now()) - 300) < 1)
            #expect(!credential.isExpired(at: clock.now().addingTimeInterval(260)))
            #expect(credential.isExpired(at: clock.now().addingTimeInterval(280)), "within the 30 s leeway of the 5-minute expiry")
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.accessToken != credential.accessToken)
            #expect(refreshed.subject == credential.subject)
            #expect(try await client.userInfo(for: refreshed)["sub"] == .string("9b1f7c2e-alice"))
        }
    }

    @Test(
        "access tokens are single use (docs.id.me, \"Token expiration\"): userinfo answers once per token, a reuse is refused, a refreshed token works once again"
    )
    func singleUseAccessTokens() async throws {
        try await EmulatorHarness.withEmulator(profile: .idMe) { emulator in
            let client = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "native-rs", redirectURI: try #require(URL(string: "com.example.app:/oauth/callback"))),
                provider: .discovery(issuer: emulator.issuer)
            )
            let credential = try await EmulatorFaultTests.signIn(client)
            #expect(try await client.userInfo(for: credential)["sub"] == .string("9b1f7c2e-alice"))
            let reuse = await expectFailure("a second use of the access token must be refused") { try await client.userInfo(for: credential) }
            #expect(reuse?.code == .userInfoInvalid && reuse?.httpStatus == 401)
            let refreshed = try await client.refresh(credential)
            #expect(try await client.userInfo(for: refreshed)["sub"] == .string("9b1f7c2e-alice"))
            await expectCode(.userInfoInvalid) { try await client.userInfo(for: refreshed) }
        }
    }
}
