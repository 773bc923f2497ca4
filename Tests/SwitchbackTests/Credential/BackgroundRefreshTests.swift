import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport
import SwitchbackTesting

/// A refresh runs as background work, so that one started as the app leaves the foreground stores its
/// rotated token before the app is suspended.
@Suite("Background refresh")
struct BackgroundRefreshTests {
    actor Recorder: BackgroundWork {
        var names: [String] = []
        var running = 0
        var sawStoreWithinWork = false

        func finish<Result: Sendable>(_ name: String, _ body: @Sendable () async throws -> Result) async throws -> Result {
            names.append(name)
            running += 1
            defer { running -= 1 }
            return try await body()
        }
    }

    @Test("an expiring credential is refreshed inside one named piece of background work, whatever the number of callers")
    func insideBackgroundWork() async throws {
        let provider = try await StubProvider()
        provider.tokenResponse = StubTransport.json(
            200, #"{"access_token":"at-new","token_type":"Bearer","refresh_token":"rt-new","expires_in":3600}"#)
        let recorder = Recorder()
        let store = InMemoryCredentialStore()
        var expired = CredentialStoreTests.credential()
        expired.issuer = StubProvider.issuer
        expired.expiresAt = Date().addingTimeInterval(-5)
        await store.save(expired, key: "main")
        let manager = CredentialManager(client: provider.client(), store: store, key: "main", backgroundWork: recorder)
        async let first = manager.validCredential()
        async let second = manager.validCredential()
        #expect(try await [first.accessToken, second.accessToken] == ["at-new", "at-new"])
        #expect(await recorder.names == ["switchback.refresh"])
        #expect(await recorder.running == 0)
        #expect(await store.load(key: "main")?.refreshToken == "rt-new")
    }
}
