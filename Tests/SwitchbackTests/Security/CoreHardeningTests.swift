import Foundation
import Logging
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// The core's URL, comparison and token rules an independent review attacked (issue 19, findings 8, 9,
/// 11, 13, 14 and 15). Each test failed on the code before its fix.
@Suite("Core hardening")
struct CoreHardeningTests {
    // MARK: Finding 8: loopback means an IP literal in 127.0.0.0/8, ::1 or exactly localhost

    @Test("loopback is a parsed address, never a name that starts with 127.")
    func loopbackIsAnAddress() {
        for host in ["127.0.0.1", "127.255.255.254", "127.0.0.0", "localhost", "LOCALHOST", "::1", "[::1]"] {
            #expect(EndpointSecurity.isLoopback(host), "\(host) is loopback")
        }
        for host in [
            "127.attacker.example", "127.0.0.1.attacker.example", "127.0.0.1.", "127.0.0", "127.0.0.256", "127.0.0.01", "127.0.0.-1",
            "127.0.0.1a", "localhost.attacker.example", "attacker-localhost", "128.0.0.1", "0x7f.0.0.1", "::2", "", "127..0.1",
        ] {
            #expect(!EndpointSecurity.isLoopback(host), "\(host) is not loopback")
        }
        #expect(!EndpointSecurity.isAcceptable(URL(string: "http://127.attacker.example/issuer")!))
        #expect(EndpointSecurity.isAcceptable(URL(string: "http://127.0.0.1:4593/issuer")!))
    }

    @Test("an IPv6 host is bracketed once for a URL, its zone index's % written %25; names and IPv4 addresses as they are")
    func hostsBracketed() throws {
        #expect(URLHost.bracketed("::1") == "[::1]" && URLHost.bracketed("[::1]") == "[::1]")
        #expect(URLHost.bracketed("2001:db8::7") == "[2001:db8::7]")
        #expect(URLHost.bracketed("fe80::1%eth0") == "[fe80::1%25eth0]")
        #expect(URLHost.bracketed("127.0.0.1") == "127.0.0.1" && URLHost.bracketed("id.example.com") == "id.example.com")
        for host in ["::1", "2001:db8::7", "fe80::1%eth0", "127.0.0.1"] {
            let url = try #require(URL(string: "http://\(URLHost.bracketed(host)):8080/x"), "\(host)")
            #expect(url.port == 8080 && url.path == "/x", "\(host)")
        }
    }

    // MARK: Finding 9: a length difference is never folded into a byte

    @Test("strings whose lengths differ by a multiple of 256 do not compare equal")
    func constantTimeLengths() {
        let secret = "Secret-123"
        let padded = secret + String(repeating: "\0", count: 256)
        #expect(!ConstantTime.equals(secret, padded))
        #expect(!ConstantTime.equals(padded, secret))
        #expect(!ConstantTime.equals([UInt8](repeating: 0, count: 512), []))
        #expect(!ConstantTime.equals("", String(repeating: "\0", count: 1024)))
        #expect(ConstantTime.equals(secret, "Secret-123"))
        #expect(ConstantTime.equals("", ""))
        #expect(!ConstantTime.equals(secret, "Secret-124"))
    }

    // MARK: Finding 11: every endpoint in the metadata is https

    @Test("an http introspection or end-session endpoint off loopback is refused")
    func everyEndpointIsSecure() async throws {
        for member in ["introspection_endpoint", "end_session_endpoint"] {
            let document = """
                {"issuer":"https://id.example.test","authorization_endpoint":"https://id.example.test/authorize",
                 "token_endpoint":"https://id.example.test/token","jwks_uri":"https://id.example.test/jwks",
                 "\(member)":"http://id.example.test/\(member)"}
                """
            let transport = StubTransport { _ in StubTransport.json(200, document) }
            let discovery = DiscoveryClient(transport: transport, clock: ManualClock(), logger: Logger(label: "test"))
            await expectCode(.insecureEndpoint) { try await discovery.metadata(for: .discovery(issuer: "https://id.example.test")) }
        }
    }

    // MARK: Finding 15: explicit typing (RFC 8725 §3.11)

    @Test("a JWT typed at+jwt, or any other …+jwt profile, is refused as an ID token before its signature is checked")
    func explicitTyping() async throws {
        let provider = try await StubProvider()
        for type in ["at+jwt", "application/at+jwt", "AT+JWT", "logout+jwt", "dpop+jwt", "token-introspection+jwt"] {
            let token = try await provider.signer.sign(provider.validClaims(), type: type)
            await expectCode(.idTokenMalformed) { try await provider.validator().validate(token, expectations: .init(nonce: "n-0S6_WzA2Mj")) }
        }
        for type in ["JWT", "jwt", "application/jwt"] {
            let token = try await provider.signer.sign(provider.validClaims(), type: type)
            let validated = try await provider.validator().validate(token, expectations: .init(nonce: "n-0S6_WzA2Mj"))
            #expect(validated.claims.sub == "user-1")
        }
    }

    // MARK: Finding 14: claimed states expire with the authorization

    @Test("a claimed state is forgotten once its authorization is past its lifetime, and such an old session is refused")
    func claimedStatesExpire() async throws {
        let provider = try await StubProvider()
        let client = provider.client()
        let (first, _) = try await OIDCClientTests.signIn(provider, client: client)
        await expectCode(.callbackReplayed) { try await client.completeAuthorization(.redirect(OIDCClientTests.callback(first)), session: first) }
        #expect(await client.claimedStateCount == 1)

        provider.clock.advance(by: OIDCClient.authorizationLifetime + 1)
        // The old session is refused for its age (its claim is gone, so replay protection must not rely on it).
        await expectCode(.timedOut) { try await client.completeAuthorization(.redirect(OIDCClientTests.callback(first)), session: first) }
        #expect(await client.claimedStateCount == 0)
        let redeemed = provider.tokenRequests.count

        let (second, _) = try await OIDCClientTests.signIn(provider, client: client)
        #expect(await client.claimedStateCount == 1)
        #expect(second.state != first.state)
        #expect(provider.tokenRequests.count == redeemed + 1)
    }
}
