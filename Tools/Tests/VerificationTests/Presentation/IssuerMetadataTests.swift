import Foundation
import Logging
import SwitchbackTesting
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackVerification

/// An SD-JWT VC's issuer keys from its JWT VC Issuer Metadata (SD-JWT VC §4), for issuers the verifier
/// trusts only.
@Suite("Issuer keys from JWT VC Issuer Metadata")
struct IssuerMetadataTests {
    static let issuer = "https://issuer.example.com/tenant"
    static let publicJWK =
        #"{"kty":"EC","crv":"P-256","x":"b28d4MwZMjw8-00CG4xfnn9SLMVMM19SlqZpVb_uNtQ","y":"Xv5zWwuoaTgdS6hV43yI6gBwTnjukmFQQnJ_kCxzqk8"}"#

    /// A presentation of a credential of `issuer`, signed with the RFC 9901 example's issuer key.
    static func presentation(issuer: String = issuer) throws -> String {
        try Forge.credential(["iss": .string(issuer), "vct": "urn:eudi:pid:1"]) + "~"
    }

    static func verifier(_ transport: StubTransport, trusting issuers: Set<String> = [issuer]) -> SDJWTVerifier {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let source = JWTVCIssuerMetadata(trustedIssuers: issuers, transport: transport, clock: clock, logger: Logger(label: "test"))
        return SDJWTVerifier(issuers: source, clock: clock)
    }

    @Test("the metadata's place: /.well-known/jwt-vc-issuer between the host and the issuer's path; https only")
    func metadataURL() {
        #expect(
            JWTVCIssuerMetadata.metadataURL(for: "https://issuer.example.com")?.absoluteString
                == "https://issuer.example.com/.well-known/jwt-vc-issuer")
        #expect(
            JWTVCIssuerMetadata.metadataURL(for: "https://issuer.example.com/tenant/1")?.absoluteString
                == "https://issuer.example.com/.well-known/jwt-vc-issuer/tenant/1")
        #expect(JWTVCIssuerMetadata.metadataURL(for: "http://issuer.example.com") == nil)
        #expect(JWTVCIssuerMetadata.metadataURL(for: "https://issuer.example.com?x=1") == nil)
    }

    @Test("a trusted issuer's keys, inline or at jwks_uri, verify its credential; fetched once")
    func trustedIssuer() async throws {
        let inline = StubTransport { request in
            #expect(request.url.absoluteString == "https://issuer.example.com/.well-known/jwt-vc-issuer/tenant")
            return StubTransport.json(200, #"{"issuer":"\#(Self.issuer)","jwks":{"keys":[\#(Self.publicJWK)]}}"#)
        }
        let verifier = Self.verifier(inline)
        let verified = try await verifier.verify(try Self.presentation(), keyBinding: nil)
        #expect(verified.claims["iss"] == .string(Self.issuer))
        _ = try await verifier.verify(try Self.presentation(), keyBinding: nil)
        #expect(inline.requests.count == 1, "the metadata is kept")

        let remote = StubTransport { request in
            if request.url.path.hasPrefix("/.well-known/") {
                return StubTransport.json(200, #"{"issuer":"\#(Self.issuer)","jwks_uri":"https://issuer.example.com/keys"}"#)
            }
            return StubTransport.json(200, #"{"keys":[\#(Self.publicJWK)]}"#)
        }
        _ = try await Self.verifier(remote).verify(try Self.presentation(), keyBinding: nil)
        #expect(remote.requests.map(\.url.path) == ["/.well-known/jwt-vc-issuer/tenant", "/keys"])
    }

    @Test("an untrusted issuer is refused before anything is fetched; metadata naming another issuer, or with both or neither key source, is refused")
    func refusals() async throws {
        let never = StubTransport { _ in
            Issue.record("fetched for an untrusted issuer")
            return StubTransport.json(500, "{}")
        }
        await #expect(throws: SwitchbackError.self) {
            _ = try await Self.verifier(never).verify(try Self.presentation(issuer: "https://attacker.example"), keyBinding: nil)
        }
        #expect(never.requests.isEmpty)

        for document in [
            #"{"issuer":"https://other.example.com","jwks":{"keys":[\#(Self.publicJWK)]}}"#,
            #"{"issuer":"\#(Self.issuer)","jwks":{"keys":[\#(Self.publicJWK)]},"jwks_uri":"https://issuer.example.com/keys"}"#,
            #"{"issuer":"\#(Self.issuer)"}"#,
            #"{"issuer":"\#(Self.issuer)","jwks_uri":"http://issuer.example.com/keys"}"#,
        ] {
            let transport = StubTransport { _ in StubTransport.json(200, document) }
            let error = await #expect(throws: SwitchbackError.self) {
                _ = try await Self.verifier(transport).verify(try Self.presentation(), keyBinding: nil)
            }
            #expect(error?.code == .presentationInvalid || error?.code == .malformedResponse, "\(document)")
        }
        // Keys that are not the issuer's: the signature check refuses.
        let wrongKey =
            #"{"kty":"EC","crv":"P-256","x":"TCAER19Zvu3OHF4j4W4vfSVoHIP1ILilDls7vCeGemc","y":"ZxjiWWbZMQGHVWKVQ4hbSIirsVfuecCE6t4jT9F2HZQ"}"#
        let impostor = StubTransport { _ in StubTransport.json(200, #"{"issuer":"\#(Self.issuer)","jwks":{"keys":[\#(wrongKey)]}}"#) }
        await #expect(throws: SwitchbackError.self) { _ = try await Self.verifier(impostor).verify(try Self.presentation(), keyBinding: nil) }
    }
}
