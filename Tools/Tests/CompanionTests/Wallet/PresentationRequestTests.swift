import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import ToolsTestSupport
import SwitchbackVerification

/// The companion's OpenID4VP request objects and the wallet's encrypted answers, read as a wallet would
/// read them and made as a wallet would make them.
@Suite("OpenID4VP request objects and direct_post.jwt responses")
struct PresentationRequestTests {
    static let query = DCQLQuery(credentials: [
        .init(id: "pid", vctValues: ["urn:eudi:pid:1"], claims: [[.string("given_name")], [.string("birthdate")]])
    ])

    static func identity() throws -> (VerifierIdentity, X509IssuerKeysTests.Authority) {
        let authority = try X509IssuerKeysTests.Authority(dnsName: "verifier.example.com", now: Date())
        let leaf = try Certificate(derEncoded: Array(authority.chain[0]))
        return (try VerifierIdentity(keyPEM: authority.issuerKey.pemRepresentation, chainPEM: try leaf.serializeAsPEM().pemString), authority)
    }

    @Test("client identifier prefixes (§5.9.3): x509_san_dns names the response URI's host only if the certificate does; redirect_uri goes unsigned")
    func prefixes() throws {
        let (identity, authority) = try Self.identity()
        let leaf = try Certificate(derEncoded: Array(authority.chain[0])).serializeAsPEM().pemString
        let names = try #require(identity.dnsNames.first)
        let dns = try VerifierIdentity(keyPEM: authority.issuerKey.pemRepresentation, chainPEM: leaf, prefix: .x509SanDNS)
        #expect(try dns.clientID(responseURI: try #require(URL(string: "https://\(names)/wallet/response"))) == "x509_san_dns:" + names)
        #expect(throws: SwitchbackError.self, "a host the certificate does not name") {
            _ = try dns.clientID(responseURI: try #require(URL(string: "https://elsewhere.example.com/wallet/response")))
        }
        let development = try VerifierIdentity(keyPEM: authority.issuerKey.pemRepresentation, chainPEM: leaf, prefix: .redirectURI)
        let local = try #require(URL(string: "http://127.0.0.1:8080/wallet/response"))
        #expect(try development.clientID(responseURI: local) == "redirect_uri:http://127.0.0.1:8080/wallet/response")
        let unsigned = try development.sign(["client_id": "x"])
        let parts = unsigned.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3 && parts[2].isEmpty)
        #expect(Base64URL.decode(parts[0]).flatMap(JSONReader.object)?["alg"] == "none")
    }

    @Test("the request object: typ, x5c, signed by the certificate's key, x509_hash client_id, the query, nonce, state, the response key")
    func requestObject() throws {
        let (identity, authority) = try Self.identity()
        let request = try PresentationRequest(state: "state-1", nonce: "nonce-1", keyID: "k1")
        let responseURI = try #require(URL(string: "https://auth.example.com/wallet/response"))
        let clientID = try identity.clientID(responseURI: responseURI)
        let jwt = try identity.sign(try request.claims(clientID: clientID, responseURI: responseURI, query: Self.query, walletNonce: "wn"))
        let parts = jwt.split(separator: ".").map(String.init)
        let headerData = try #require(Base64URL.decode(parts[0]))
        let claimsData = try #require(Base64URL.decode(parts[1]))
        let header = try #require(JSONReader.object(headerData))
        let claims = try #require(JSONReader.object(claimsData))
        #expect(header["typ"] == .string("oauth-authz-req+jwt") && header["alg"] == .string("ES256"))
        #expect(header["x5c"] == .array([.string(authority.chain[0].base64EncodedString())]))
        // The wallet checks the signature with the certificate in x5c, and the client_id against its hash.
        let signatureData = try #require(Base64URL.decode(parts[2]))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureData)
        #expect(authority.issuerKey.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(claims["client_id"] == .string("x509_hash:" + Base64URL.encode(SHA256.hash(data: authority.chain[0]))))
        #expect(claims["response_type"] == .string("vp_token") && claims["response_mode"] == .string("direct_post.jwt"))
        #expect(claims["response_uri"] == .string(responseURI.absoluteString) && claims["redirect_uri"] == nil)
        #expect(claims["nonce"] == .string("nonce-1") && claims["state"] == .string("state-1") && claims["wallet_nonce"] == .string("wn"))
        #expect(claims["aud"] == .string("https://self-issued.me/v2"))
        guard case .object(let metadata)? = claims["client_metadata"], case .object(let jwks)? = metadata["jwks"],
            case .array(let keys)? = jwks["keys"], case .object(let key)? = keys.first
        else { throw RigFailure("no client_metadata.jwks") }
        #expect(key["kid"] == .string("k1") && key["alg"] == .string("ECDH-ES") && key["d"] == nil)
        #expect(metadata["encrypted_response_enc_values_supported"] == .array(["A128GCM", "A256GCM"].map(JSONValue.string)))
        let sentQuery = try #require(claims["dcql_query"])
        let query = try JSONDecoder().decode(DCQLQuery.self, from: Data(sentQuery.description.utf8))
        #expect(query == Self.query)

        let link = try #require(PresentationRequest.invocationURL(scheme: "openid4vp", clientID: clientID, requestURI: responseURI))
        let items = URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(link.scheme == "openid4vp" && items.first { $0.name == "client_id" }?.value == clientID)
        #expect(items.first { $0.name == "request_uri_method" }?.value == "post")
    }

    @Test("the wallet's encrypted answer opens with the request's key, A128GCM or A256GCM; another key, alg or kid does not open it")
    func responses() throws {
        let request = try PresentationRequest(state: "state-1", nonce: "nonce-1", keyID: "k1")
        let payload = Data(#"{"vp_token":{"pid":["eyJ...~"]},"state":"state-1"}"#.utf8)
        for enc in PresentationRequest.contentEncryptions {
            let jwe = try CompactJWE.encrypt(payload, to: request.encryptionJWK, alg: "ECDH-ES", enc: enc)
            #expect(try request.openResponse(jwe) == .presentation(vpToken: ["pid": ["eyJ...~"]], state: "state-1"), "\(enc)")
        }
        func doesNotOpen(_ jwe: String) -> Bool {
            do {
                _ = try request.openResponse(jwe)
                return false
            } catch {
                if case .doesNotOpen = error { return true }
                return false
            }
        }
        let other = try PresentationRequest(state: "state-2", nonce: "nonce-2", keyID: "k1")
        #expect(doesNotOpen(try CompactJWE.encrypt(payload, to: other.encryptionJWK, alg: "ECDH-ES", enc: "A128GCM")), "another request's key")
        #expect(
            doesNotOpen(try CompactJWE.encrypt(payload, to: request.encryptionJWK, alg: "ECDH-ES+A256KW", enc: "A128GCM")),
            "key wrapping instead of ECDH-ES")
        #expect(
            doesNotOpen(try CompactJWE.encrypt(payload, to: request.encryptionJWK, alg: "ECDH-ES", enc: "A128CBC-HS256")),
            "a content encryption not offered")
        var renamed = request.encryptionJWK
        renamed["kid"] = .string("k2")
        #expect(doesNotOpen(try CompactJWE.encrypt(payload, to: renamed, alg: "ECDH-ES", enc: "A128GCM")), "another kid")
        for body in [
            #"{"state":"state-1"}"#, #"{"vp_token":{"pid":"not an array"}}"#, #"{"vp_token":{"pid":[1]}}"#,
            #"{"vp_token":{"pid":["a"]},"error":"access_denied"}"#, #"{"error":7}"#, #"{"error":""}"#, "[]",
        ] {
            let jwe = try CompactJWE.encrypt(Data(body.utf8), to: request.encryptionJWK, alg: "ECDH-ES", enc: "A128GCM")
            #expect(throws: PresentationRequest.OpenFailure.self, "\(body)") { try request.openResponse(jwe) }
            #expect(!doesNotOpen(jwe), "\(body) opened: it is malformed, not unopened")
        }
    }

    @Test("an error response encrypted to the request's key (§5.6, §8.3.1) opens as the wallet's error, with its state")
    func encryptedErrors() throws {
        let request = try PresentationRequest(state: "state-1", nonce: "nonce-1", keyID: "k1")
        let body = #"{"error":"access_denied","error_description":"The user declined","state":"state-1"}"#
        let jwe = try CompactJWE.encrypt(Data(body.utf8), to: request.encryptionJWK, alg: "ECDH-ES", enc: "A128GCM")
        #expect(try request.openResponse(jwe) == .error(code: "access_denied", description: "The user declined", state: "state-1"))
        let bare = try CompactJWE.encrypt(Data(#"{"error":"wallet_unavailable"}"#.utf8), to: request.encryptionJWK, alg: "ECDH-ES", enc: "A256GCM")
        #expect(try request.openResponse(bare) == .error(code: "wallet_unavailable", description: nil, state: nil))
    }

    @Test("an identity whose certificate is not its key's, or is self-signed, is refused at configuration")
    func identities() throws {
        let authority = try X509IssuerKeysTests.Authority(now: Date())
        let leafPEM = try Certificate(derEncoded: Array(authority.chain[0])).serializeAsPEM().pemString
        #expect(throws: SwitchbackError.self) { try VerifierIdentity(keyPEM: P256.Signing.PrivateKey().pemRepresentation, chainPEM: leafPEM) }
        #expect(throws: SwitchbackError.self) { try VerifierIdentity(keyPEM: authority.issuerKey.pemRepresentation, chainPEM: authority.rootPEM) }
        #expect(throws: Never.self) { try VerifierIdentity(keyPEM: authority.issuerKey.pemRepresentation, chainPEM: leafPEM) }
    }
}
