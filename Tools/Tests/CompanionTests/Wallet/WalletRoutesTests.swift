import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// The companion as an OpenID4VP verifier, end to end over HTTP: the app starts, a wallet made here (as a
/// wallet reads and writes the messages) fetches the request object, presents an SD-JWT VC with a Key
/// Binding JWT encrypted with `direct_post.jwt`, and the app redeems the `response_code`.
@Suite("The companion as an OpenID4VP verifier")
struct WalletRoutesTests {
    static let appLink = "https://app.example.com/wallet-return"
    static let query = DCQLQuery(credentials: [
        .init(id: "pid", vctValues: ["urn:eudi:pid:1"], claims: [[.string("given_name")], [.string("birthdate")]])
    ])

    /// An issuer (its certificate chains to the companion's trust anchor) and a holder's credential.
    struct Wallet {
        let issuer: X509IssuerKeysTests.Authority
        let holder = P256.Signing.PrivateKey()
        let disclosures: [String: String]
        let credential: String

        init() throws {
            issuer = try X509IssuerKeysTests.Authority(dnsName: "issuer.example.com", now: Date())
            var disclosures: [String: String] = [:]
            for (salt, name, value) in [("s1", "given_name", "Erika"), ("s2", "family_name", "Mustermann"), ("s3", "birthdate", "1984-01-26")] {
                disclosures[name] = Base64URL.encode(Data(JSONValue.array([.string(salt), .string(name), .string(value)]).description.utf8))
            }
            self.disclosures = disclosures
            let point = holder.publicKey.x963Representation.dropFirst()
            let payload: [String: JSONValue] = [
                "iss": "https://issuer.example.com", "vct": "urn:eudi:pid:1", "_sd_alg": "sha-256",
                "exp": .number(Date().timeIntervalSince1970 + 86400),
                "_sd": .array(disclosures.values.sorted().map { .string(Base64URL.encode(SHA256.hash(data: Data($0.utf8)))) }),
                "cnf": .object([
                    "jwk": .object([
                        "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point.prefix(32))),
                        "y": .string(Base64URL.encode(point.suffix(32))),
                    ])
                ]),
            ]
            credential = try Self.jws(
                ["alg": "ES256", "typ": "dc+sd-jwt", "x5c": .array(issuer.chain.map { .string($0.base64EncodedString()) })], payload, issuer.issuerKey
            )
        }

        static func jws(_ header: [String: JSONValue], _ payload: [String: JSONValue], _ key: P256.Signing.PrivateKey) throws -> String {
            let input =
                Base64URL.encode(Data(JSONValue.object(header).description.utf8)) + "."
                + Base64URL.encode(Data(JSONValue.object(payload).description.utf8))
            return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
        }

        /// The credential with the named claims disclosed and a Key Binding JWT for `audience` and `nonce`.
        func present(_ names: [String], audience: String, nonce: String) throws -> String {
            let presented = credential + "~" + names.map { disclosures[$0]! + "~" }.joined()
            let binding = try Self.jws(
                ["alg": "ES256", "typ": "kb+jwt"],
                [
                    "aud": .string(audience), "nonce": .string(nonce), "iat": .number(Date().timeIntervalSince1970),
                    "sd_hash": .string(Base64URL.encode(SHA256.hash(data: Data(presented.utf8)))),
                ], holder)
            return presented + binding
        }
    }

    /// A companion verifying for `query`, trusting `wallet`'s issuer.
    static func with(_ wallet: Wallet, _ body: (CompanionRig) async throws -> Void) async throws {
        try await EmulatedWalletTests.with(trusting: wallet.issuer.rootPEM, query: Self.query, body)
    }

    /// What the wallet learns from the link and the request object.
    struct Request {
        let clientID: String
        let nonce: String
        let state: String
        let responseURI: URL
        let encryptionKey: [String: JSONValue]
    }

    /// The app's start, then the wallet's reading of the request (POST with a wallet_nonce, as HAIP wallets do).
    static func start(_ rig: CompanionRig, binding: String = CompanionRig.binding) async throws -> Request {
        let started = try await rig.post("/wallet/start", ["binding": binding])
        let link = try #require(URL(string: started.json["wallet_url"] as? String ?? ""))
        #expect(link.scheme == "openid4vp")
        let items = URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems ?? []
        let clientID = try #require(items.first { $0.name == "client_id" }?.value)
        let requestURI = try #require(items.first { $0.name == "request_uri" }?.value.flatMap(URL.init(string:)))
        let fetched = try await rig.transport.send(
            .form(requestURI, [("wallet_nonce", "wallet-nonce-123")], headers: ["Accept": "application/oauth-authz-req+jwt"]))
        #expect(fetched.status == 200 && fetched.headers.first { $0.key.lowercased() == "content-type" }?.value == "application/oauth-authz-req+jwt")
        let parts = String(decoding: fetched.body, as: UTF8.self).split(separator: ".").map(String.init)
        let headerData = try #require(Base64URL.decode(parts[0]))
        let claimsData = try #require(Base64URL.decode(parts[1]))
        let header = try #require(JSONReader.object(headerData))
        let claims = try #require(JSONReader.object(claimsData))
        // The wallet checks the client identifier against the signing certificate and the signature with it.
        guard case .array(let chain)? = header["x5c"], case .string(let leafText)? = chain.first, let leaf = Data(base64Encoded: leafText) else {
            throw RigFailure("no x5c")
        }
        #expect(clientID == "x509_hash:" + Base64URL.encode(SHA256.hash(data: leaf)) && claims["client_id"] == .string(clientID))
        let certificate = try Certificate(derEncoded: Array(leaf))
        let key = try #require(P256.Signing.PublicKey(certificate.publicKey))
        let signatureData = try #require(Base64URL.decode(parts[2]))
        #expect(key.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signatureData), for: Data((parts[0] + "." + parts[1]).utf8)))
        #expect(claims["wallet_nonce"] == .string("wallet-nonce-123"))
        guard case .string(let nonce)? = claims["nonce"], case .string(let state)? = claims["state"],
            case .string(let responseURI)? = claims["response_uri"], case .object(let metadata)? = claims["client_metadata"],
            case .object(let jwks)? = metadata["jwks"], case .array(let keys)? = jwks["keys"], case .object(let encryptionKey)? = keys.first
        else { throw RigFailure("the request object lacks a claim") }
        return Request(
            clientID: clientID, nonce: nonce, state: state, responseURI: try #require(URL(string: responseURI)), encryptionKey: encryptionKey)
    }

    /// The wallet's `direct_post.jwt` answer; returns the response_code of the redirect_uri.
    static func answer(_ rig: CompanionRig, _ request: Request, presentation: String, refused: String? = nil) async throws -> String {
        let payload = JSONValue.object(["vp_token": .object(["pid": .array([.string(presentation)])]), "state": .string(request.state)])
        let jwe = try CompactJWE.encrypt(Data(payload.description.utf8), to: request.encryptionKey, alg: "ECDH-ES", enc: "A128GCM")
        return try await post(rig, request.responseURI, [("response", jwe)], refused: refused)
    }

    /// Posts to the response URI; returns the response_code of the app link the answer carries. With
    /// `refused`, the answer must be 400 `invalid_request` with that description for the wallet to show.
    static func post(_ rig: CompanionRig, _ url: URL, _ fields: [(String, String)], refused: String? = nil) async throws -> String {
        let answered = try await rig.transport.send(.form(url, fields))
        let object = (try? JSONSerialization.jsonObject(with: answered.body)) as? [String: Any]
        if let refused {
            #expect(answered.status == 400 && object?["error"] as? String == "invalid_request", "HTTP \(answered.status)")
            #expect(object?["error_description"] as? String == refused)
        } else {
            #expect(answered.status == 200)
        }
        let redirect = try #require(object?["redirect_uri"] as? String, "HTTP \(answered.status)")
        #expect(redirect.hasPrefix(Self.appLink + "#response_code="))
        return String(redirect.dropFirst((Self.appLink + "#response_code=").count))
    }

    static func redeem(_ rig: CompanionRig, _ code: String, binding: String = CompanionRig.binding) async throws -> (status: Int, json: [String: Any])
    {
        let redeemed = try await rig.post("/wallet/redeem", ["response_code": code, "binding": binding])
        return (Int(redeemed.response.status), redeemed.json)
    }

    @Test("a wallet presents the asked claims; the app redeems them once, with its secret; nothing undisclosed comes through")
    func presentation() async throws {
        let wallet = try Wallet()
        try await Self.with(wallet) { rig in
            let request = try await Self.start(rig)
            let code = try await Self.answer(
                rig, request, presentation: try wallet.present(["given_name", "birthdate"], audience: request.clientID, nonce: request.nonce))
            #expect(try await Self.redeem(rig, code, binding: "another-binding-0123456789abc").status == 400, "another app's secret")
            let stolen = try await Self.start(rig)
            let second = try await Self.answer(
                rig, stolen, presentation: try wallet.present(["given_name", "birthdate"], audience: stolen.clientID, nonce: stolen.nonce))
            #expect(try await Self.redeem(rig, second, binding: "another-binding-0123456789abc").status == 400)
            #expect(try await Self.redeem(rig, second).status == 400, "a code presented with the wrong secret is used up")

            let other = try await Self.start(rig)
            let code2 = try await Self.answer(
                rig, other, presentation: try wallet.present(["given_name", "birthdate"], audience: other.clientID, nonce: other.nonce))
            let redeemed = try await Self.redeem(rig, code2)
            #expect(redeemed.status == 200)
            let credentials = redeemed.json["credentials"] as? [String: [[String: Any]]]
            let pid = try #require(credentials?["pid"]?.first)
            #expect(pid["given_name"] as? String == "Erika" && pid["birthdate"] as? String == "1984-01-26" && pid["family_name"] == nil)
            #expect(try await Self.redeem(rig, code2).status == 400, "once")
            _ = code
        }
    }

    @Test("a wallet request's state, the last segment of its request object's path, is never logged, at any level, served, refused or unmatched")
    func stateNotLogged() async throws {
        let wallet = try Wallet()
        try await Self.with(wallet) { rig in
            let request = try await Self.start(rig)
            let path = "/wallet/request/" + request.state
            _ = try await rig.get(rig.url(path))
            let unknown = "unknown-state-0123456789abcdefghij"
            _ = try await rig.get(rig.url("/wallet/request/" + unknown))
            _ = try await rig.transport.send(HTTPRequest(method: .put, url: rig.url(path)))
            _ = try await rig.transport.send(HTTPRequest(method: .delete, url: rig.url(path + "/more")))
            let text = rig.log.text
            #expect(text.contains("/wallet/request/{id}"), "the route is logged by its template")
            #expect(!text.contains(request.state) && !text.contains(unknown), "a state reached the log")
        }
    }

    @Test(
        "refused: another request's nonce, a missing claim, an unreadable answer, the wallet's refusal (plain or encrypted), a replayed answer; the wallet is told, and the app learns each as a failure"
    )
    func refusals() async throws {
        let wallet = try Wallet()
        try await Self.with(wallet) { rig in
            let first = try await Self.start(rig)
            // The wallet is told (400, a sentence it can show, the app link to open), and the app learns it at redeem.
            let notAccepted = CompanionService.Refusal.notAccepted.rawValue
            let wrongNonce = try await Self.answer(
                rig, first, presentation: try wallet.present(["given_name", "birthdate"], audience: first.clientID, nonce: "another-nonce"),
                refused: notAccepted)
            let refused = try await Self.redeem(rig, wrongNonce)
            #expect(refused.status == 400 && refused.json["error"] as? String == "invalid_presentation")
            #expect(rig.log.text.contains("presentation refused"))

            let second = try await Self.start(rig)
            let missing = try await Self.answer(
                rig, second, presentation: try wallet.present(["given_name"], audience: second.clientID, nonce: second.nonce), refused: notAccepted)
            #expect(try await Self.redeem(rig, missing).json["error"] as? String == "invalid_presentation")

            let third = try await Self.start(rig)
            let declined = try await Self.post(rig, third.responseURI, [("error", "access_denied"), ("state", third.state)])
            let answer = try await Self.redeem(rig, declined)
            #expect(answer.json["error"] as? String == "access_denied")

            // §5.6, §8.3.1: the same refusal encrypted to the request's key, as a wallet that can encrypt sends it,
            // is answered as the plain one; under another request's state it is refused, and its own stays open.
            let sixth = try await Self.start(rig)
            let seventh = try await Self.start(rig)
            func refusal(_ state: String, to request: Request) throws -> String {
                let body = JSONValue.object(["error": .string("access_denied"), "error_description": .string("No"), "state": .string(state)])
                return try CompactJWE.encrypt(Data(body.description.utf8), to: request.encryptionKey, alg: "ECDH-ES", enc: "A128GCM")
            }
            let misdirected = try await rig.transport.send(.form(seventh.responseURI, [("response", try refusal(sixth.state, to: seventh))]))
            #expect(misdirected.status == 400)
            let encrypted = try await Self.post(rig, sixth.responseURI, [("response", try refusal(sixth.state, to: sixth))])
            #expect(try await Self.redeem(rig, encrypted).json["error"] as? String == "access_denied")
            let stillOpen = try await Self.answer(
                rig, seventh, presentation: try wallet.present(["given_name", "birthdate"], audience: seventh.clientID, nonce: seventh.nonce))
            #expect(try await Self.redeem(rig, stillOpen).status == 200)

            // Whoever saw the wallet's link can fetch the request's key: a junk answer, a refused one or an error
            // post spends nothing, and the genuine answer still goes through.
            let fifth = try await Self.start(rig)
            let junk = try CompactJWE.encrypt(Data(#"{"vp_token":{"pid":["x~"]}}"#.utf8), to: fifth.encryptionKey, alg: "ECDH-ES", enc: "A128GCM")
            _ = try await Self.post(rig, fifth.responseURI, [("response", junk)], refused: notAccepted)
            let unreadable = try CompactJWE.encrypt(Data(#"{"vp_token":"pid"}"#.utf8), to: fifth.encryptionKey, alg: "ECDH-ES", enc: "A128GCM")
            let unread = try await Self.post(
                rig, fifth.responseURI, [("response", unreadable)], refused: CompanionService.Refusal.unreadable.rawValue)
            #expect(try await Self.redeem(rig, unread).json["error"] as? String == "invalid_presentation")
            _ = try await Self.post(rig, fifth.responseURI, [("error", "access_denied"), ("state", fifth.state)])
            let unasked = JSONValue.object(["vp_token": .object(["other": .array(["x~"])]), "state": .string(fifth.state)])
            _ = try await Self.post(
                rig, fifth.responseURI,
                [("response", try CompactJWE.encrypt(Data(unasked.description.utf8), to: fifth.encryptionKey, alg: "ECDH-ES", enc: "A128GCM"))],
                refused: notAccepted)
            let genuine = try await Self.answer(
                rig, fifth, presentation: try wallet.present(["given_name", "birthdate"], audience: fifth.clientID, nonce: fifth.nonce))
            #expect(try await Self.redeem(rig, genuine).status == 200)

            // The request is used up by its answer: the same answer again is refused.
            let fourth = try await Self.start(rig)
            let presentation = try wallet.present(["given_name", "birthdate"], audience: fourth.clientID, nonce: fourth.nonce)
            let payload = JSONValue.object(["vp_token": .object(["pid": .array([.string(presentation)])]), "state": .string(fourth.state)])
            let jwe = try CompactJWE.encrypt(Data(payload.description.utf8), to: fourth.encryptionKey, alg: "ECDH-ES", enc: "A256GCM")
            _ = try await rig.transport.send(.form(fourth.responseURI, [("response", jwe)]))
            let replayed = try await rig.transport.send(.form(fourth.responseURI, [("response", jwe)]))
            #expect(replayed.status == 400)
        }
    }
}
