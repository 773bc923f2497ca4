import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

@Suite("Discovery")
struct DiscoveryClientTests {
    static let issuer = "https://id.example.test"

    static func document(issuer: String = issuer, endpointHost: String = "https://id.example.test") -> String {
        """
        {"issuer":"\(issuer)","authorization_endpoint":"\(endpointHost)/authorize","token_endpoint":"\(endpointHost)/token",
         "jwks_uri":"\(endpointHost)/jwks","userinfo_endpoint":"\(endpointHost)/userinfo",
         "pushed_authorization_request_endpoint":"\(endpointHost)/par","require_pushed_authorization_requests":true,
         "id_token_signing_alg_values_supported":["RS256","ES256"],"code_challenge_methods_supported":["S256"],
         "authorization_response_iss_parameter_supported":true,"acr_values_supported":["urn:eid:high"],
         "some_extension_we_do_not_model":{"nested":[1,2,3]}}
        """
    }

    static func client(_ transport: StubTransport, clock: ManualClock = ManualClock(), ttl: TimeInterval = 3600) -> DiscoveryClient {
        DiscoveryClient(transport: transport, clock: clock, timeToLive: ttl, logger: Logger(label: "test"))
    }

    @Test("parses the metadata from /.well-known/openid-configuration under the issuer")
    func parsesMetadata() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, Self.document()) }
        let metadata = try await Self.client(transport).metadata(for: .discovery(issuer: Self.issuer))
        #expect(transport.requests.map(\.url.absoluteString) == ["https://id.example.test/.well-known/openid-configuration"])
        #expect(metadata.tokenEndpoint.absoluteString == "https://id.example.test/token")
        #expect(metadata.pushedAuthorizationRequestEndpoint?.path == "/par")
        #expect(metadata.requirePushedAuthorizationRequests)
        #expect(metadata.authorizationResponseIssParameterSupported)
        #expect(metadata.acrValuesSupported == ["urn:eid:high"])
    }

    @Test("an issuer with a path keeps it, and a trailing slash is not doubled")
    func issuerWithPath() throws {
        #expect(
            try DiscoveryClient.discoveryURL(for: "https://h.example/realms/x/").absoluteString
                == "https://h.example/realms/x/.well-known/openid-configuration")
        #expect(
            try DiscoveryClient.discoveryURL(for: "http://127.0.0.1:4593/api/oidc").absoluteString
                == "http://127.0.0.1:4593/api/oidc/.well-known/openid-configuration")
    }

    @Test("rejects a discovery document whose issuer differs from the one asked for")
    func rejectsIssuerMismatch() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, Self.document(issuer: "https://id.example.test/")) }
        await expectCode(.issuerMismatch) { try await Self.client(transport).metadata(for: .discovery(issuer: Self.issuer)) }
    }

    @Test("rejects plain-HTTP issuers and endpoints off loopback")
    func rejectsInsecure() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, Self.document(endpointHost: "http://id.example.test")) }
        await expectCode(.insecureEndpoint) { try await Self.client(transport).metadata(for: .discovery(issuer: Self.issuer)) }
        await expectCode(.invalidConfiguration) { try await Self.client(transport).metadata(for: .discovery(issuer: "http://id.example.test")) }
        #expect(transport.requests.count == 1)
    }

    @Test("HTTP errors, garbage and a dropped connection are typed discovery failures")
    func fetchFailures() async throws {
        for response in [
            StubTransport.json(503, "{}"), StubTransport.json(200, "<html>"), StubTransport.json(200, #"{"issuer":"https://id.example.test"}"#),
        ] {
            let transport = StubTransport { _ in response }
            await expectCode(.discoveryFailed) { try await Self.client(transport).metadata(for: .discovery(issuer: Self.issuer)) }
        }
        let failing = StubTransport { _ in throw URLError(.networkConnectionLost) }
        await expectCode(.discoveryFailed) { try await Self.client(failing).metadata(for: .discovery(issuer: Self.issuer)) }
    }

    @Test("metadata is cached for its time to live, then fetched again")
    func cachesWithTTL() async throws {
        let transport = StubTransport { _ in StubTransport.json(200, Self.document()) }
        let clock = ManualClock()
        let client = Self.client(transport, clock: clock, ttl: 600)
        for _ in 0..<3 { _ = try await client.metadata(for: .discovery(issuer: Self.issuer)) }
        #expect(transport.requests.count == 1)
        clock.advance(by: 599)
        _ = try await client.metadata(for: .discovery(issuer: Self.issuer))
        #expect(transport.requests.count == 1)
        clock.advance(by: 2)
        _ = try await client.metadata(for: .discovery(issuer: Self.issuer))
        #expect(transport.requests.count == 2)
        await client.invalidate()
        _ = try await client.metadata(for: .discovery(issuer: Self.issuer))
        #expect(transport.requests.count == 3)
    }

    @Test("static metadata is used as given, without any request, but still checked for HTTPS")
    func staticMetadata() async throws {
        let transport = StubTransport { _ in
            Issue.record("no request expected")
            return StubTransport.json(500, "{}")
        }
        let metadata = try JSONDecoder().decode(ProviderMetadata.self, from: Data(Self.document().utf8))
        #expect(try await Self.client(transport).metadata(for: .static(metadata)) == metadata)
        var insecure = metadata
        insecure.tokenEndpoint = URL(string: "http://id.example.test/token")!
        await expectCode(.insecureEndpoint) { try await Self.client(transport).metadata(for: .static(insecure)) }
        #expect(transport.requests.isEmpty)
    }
}
