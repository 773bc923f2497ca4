import Crypto
import Foundation
import SwiftASN1
import X509
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// The companion as an OpenID4VP verifier: its request objects are signed with a P-256 key whose certificate
/// chain (leaf first, without the trust anchor) travels in `x5c`, and it names itself with a Client
/// Identifier Prefix (OpenID4VP 1.0 §5.9.3):
/// - `x509_hash:` base64url of SHA-256 of the leaf certificate's DER, the prefix HAIP 1.0 §5 requires;
/// - `x509_san_dns:` a DNS name the leaf certificate carries as a `dNSName`, which must be the response URI's
///   host (a wallet that does not otherwise trust the verifier holds it to that);
/// - `redirect_uri:` the response URI itself, for development: such a request cannot be signed, since the
///   wallet has no key to check it with, so it goes unsigned (`alg` `none`), and the configuration allows it
///   only on a loopback companion.
struct VerifierIdentity: Sendable {
    enum Prefix: String, Sendable, CaseIterable {
        case x509Hash = "x509_hash"
        case x509SanDNS = "x509_san_dns"
        case redirectURI = "redirect_uri"
    }

    let key: P256.Signing.PrivateKey
    /// DER, leaf first.
    let chain: [Data]
    let prefix: Prefix
    /// The leaf certificate's DNS names (lower case).
    let dnsNames: Set<String>

    init(keyPEM: String, chainPEM: String, prefix: Prefix = .x509Hash) throws {
        func fail(_ why: String) -> SwitchbackError { SwitchbackError(.invalidConfiguration, "the verifier's identity: \(why)") }
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: keyPEM) else { throw fail("the key is not a P-256 private key in PEM") }
        let certificates = try PEMDocument.parseMultiple(pemString: chainPEM).map { try Certificate(pemDocument: $0) }
        guard let leaf = certificates.first else { throw fail("the chain has no certificate") }
        guard P256.Signing.PublicKey(leaf.publicKey)?.rawRepresentation == key.publicKey.rawRepresentation else {
            throw fail("the first certificate is not the key's")
        }
        guard leaf.issuer != leaf.subject else { throw fail("the signing certificate must not be self-signed (HAIP 1.0 §5)") }
        self.key = key
        self.prefix = prefix
        dnsNames = Set(
            (try? leaf.extensions.subjectAlternativeNames)??.compactMap { name -> String? in
                if case .dnsName(let dns) = name { return dns.lowercased() }
                return nil
            } ?? [])
        chain = try certificates.map { certificate in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return Data(serializer.serializedBytes)
        }
    }

    /// The Client Identifier for requests answered at `responseURI`.
    func clientID(responseURI: URL) throws -> String {
        switch prefix {
        case .x509Hash: return "x509_hash:" + Base64URL.encode(SHA256.hash(data: chain[0]))
        case .x509SanDNS:
            guard let host = responseURI.host?.lowercased(), dnsNames.contains(host) else {
                throw SwitchbackError(
                    .invalidConfiguration, "x509_san_dns: the response URI's host is not a DNS name of the verifier's certificate (§5.9.3)")
            }
            return "x509_san_dns:" + host
        case .redirectURI: return "redirect_uri:" + responseURI.absoluteString
        }
    }

    /// A request object (RFC 9101): `typ` `oauth-authz-req+jwt` (OpenID4VP 1.0 §5), ES256 with the chain in
    /// `x5c`; unsigned (`alg` `none`, no `x5c`) under the `redirect_uri` prefix.
    func sign(_ claims: [String: JSONValue]) throws -> String {
        let signed = prefix != .redirectURI
        var header: [String: JSONValue] = ["alg": .string(signed ? "ES256" : "none"), "typ": .string("oauth-authz-req+jwt")]
        if signed { header["x5c"] = .array(chain.map { .string($0.base64EncodedString()) }) }
        let input =
            Base64URL.encode(Data(JSONValue.object(header).description.utf8)) + "."
            + Base64URL.encode(Data(JSONValue.object(claims).description.utf8))
        guard signed else { return input + "." }
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }
}

/// One presentation request of the companion (OpenID4VP 1.0, same device, `direct_post.jwt`): its `state`,
/// its `nonce` and the ephemeral key the wallet encrypts its response to (HAIP 1.0 §5: per request).
struct PresentationRequest: Sendable {
    let state: String
    let nonce: String
    let encryptionKey: P256.KeyAgreement.PrivateKey
    /// The encryption key's `kid`, which the response's JWE header must name (§8.3).
    let keyID: String
    /// The same key as the JWE decryption takes it.
    private let decryptionKey: DecryptionKey

    /// The content encryptions offered; HAIP 1.0 §5 has verifiers list both.
    static let contentEncryptions = ["A128GCM", "A256GCM"]

    init(state: String, nonce: String, encryptionKey: P256.KeyAgreement.PrivateKey = .init(), keyID: String) throws {
        self.state = state
        self.nonce = nonce
        self.encryptionKey = encryptionKey
        self.keyID = keyID
        decryptionKey = try DecryptionKey(pem: encryptionKey.pemRepresentation, keyID: keyID)
    }

    /// The encryption key as a public JWK with its `kid`, `use` and `alg` (§5.1, §8.3).
    var encryptionJWK: [String: JSONValue] { decryptionKey.publicJWK(algorithm: "ECDH-ES") }

    /// The RFC 7638 SHA-256 thumbprint of the encryption key, which an mdoc's session transcript carries
    /// (§B.2.6.1).
    var encryptionKeyThumbprint: Data? {
        DPoPKey.thumbprint(of: .object(encryptionJWK)).flatMap { Base64URL.decode($0) }
    }

    /// The request object's claims (§5, §5.1, §5.2, §5.8, §8.2, §8.3, HAIP 1.0 §5).
    func claims(clientID: String, responseURI: URL, query: DCQLQuery, walletNonce: String?) throws -> [String: JSONValue] {
        let encodedQuery = try JSONEncoder().encode(query)
        guard let dcql = JSONReader.value(encodedQuery) else { throw SwitchbackError(.invalidConfiguration, "the DCQL query does not encode") }
        var claims: [String: JSONValue] = [
            "client_id": .string(clientID), "response_type": .string("vp_token"), "response_mode": .string("direct_post.jwt"),
            "response_uri": .string(responseURI.absoluteString), "nonce": .string(nonce), "state": .string(state), "dcql_query": dcql,
            "aud": .string("https://self-issued.me/v2"),
            "client_metadata": .object([
                "jwks": .object(["keys": .array([.object(encryptionJWK)])]),
                "encrypted_response_enc_values_supported": .array(Self.contentEncryptions.map(JSONValue.string)),
                "vp_formats_supported": .object(Self.formatsSupported(for: query)),
            ]),
        ]
        // §5.10.1: a wallet_nonce the wallet sent with its POST comes back in the request object.
        if let walletNonce { claims["wallet_nonce"] = .string(walletNonce) }
        return claims
    }

    /// What the verifier takes of each format the query asks for (§11.1, §B.2.2, §B.3.4): ES256 for the
    /// issuer's signature and the holder's (COSE -7 for an mdoc's).
    static func formatsSupported(for query: DCQLQuery) -> [String: JSONValue] {
        var formats: [String: JSONValue] = [:]
        for format in Set(query.credentials.map(\.format)) {
            switch format {
            case "mso_mdoc":
                formats[format] = .object(["issuerauth_alg_values": .array([.number(-7)]), "deviceauth_alg_values": .array([.number(-7)])])
            default: formats[format] = .object(["sd-jwt_alg_values": .array([.string("ES256")]), "kb-jwt_alg_values": .array([.string("ES256")])])
            }
        }
        return formats
    }

    /// The link that opens the wallet (§5.4, §5.10): the client identifier and where to fetch the request.
    static func invocationURL(scheme: String, clientID: String, requestURI: URL) -> URL? {
        var components = URLComponents()
        components.scheme = scheme
        components.host = ""
        components.queryItems = [
            .init(name: "client_id", value: clientID), .init(name: "request_uri", value: requestURI.absoluteString),
            .init(name: "request_uri_method", value: "post"),
        ]
        // URLComponents leaves `+`, `:` and `/` as they are in a query; the values are escaped as form fields.
        components.percentEncodedQuery = components.queryItems?.map { "\($0.name)=\(FormEncoding.escape($0.value ?? ""))" }.joined(separator: "&")
        return components.url
    }

    /// What a wallet answers under `direct_post.jwt`: presentations (§8.1), or an authorization error, which a
    /// wallet that can encrypt sends encrypted too (§5.6, §8.3.1).
    enum WalletAnswer: Equatable {
        /// `vp_token`: an object of arrays of presentations by credential query `id`.
        case presentation(vpToken: [String: [String]], state: String?)
        /// `error` (§8.5), its `error_description` when printable and short, for the log only.
        case error(code: String, description: String?, state: String?)
    }

    /// Why an answer was not taken.
    enum OpenFailure: Error, Equatable {
        /// Not a JWE to this request's key with the algorithms it offered: nothing in it can be read.
        case doesNotOpen(String)
        /// It opened, but its payload is neither a presentation nor an error.
        case malformed(String)
    }

    /// The wallet's answer to `direct_post.jwt` (§8.3): a JWE with `alg` `ECDH-ES` to this request's key
    /// (its `kid`), `enc` one of those offered, whose payload holds either `vp_token` or `error`, and `state`.
    func openResponse(_ jwe: String) throws(OpenFailure) -> WalletAnswer {
        let header: [String: JSONValue]
        let plaintext: Data
        do {
            (header, plaintext) = try CompactJWE.decrypt(jwe, keys: [decryptionKey])
        } catch {
            throw .doesNotOpen("it does not decrypt with this request's key")
        }
        guard header["alg"] == .string("ECDH-ES") else { throw .doesNotOpen("its alg is not ECDH-ES") }
        guard case .string(let enc)? = header["enc"], Self.contentEncryptions.contains(enc) else { throw .doesNotOpen("its enc was not offered") }
        guard header["kid"] == .string(keyID) else { throw .doesNotOpen("it names another key") }
        guard let payload = JSONReader.object(plaintext) else { throw .malformed("its payload is not a JSON object") }
        let state: String? = if case .string(let value)? = payload["state"] { value } else { nil }
        switch (payload["vp_token"], payload["error"]) {
        case (.object(let token)?, nil):
            var vpToken: [String: [String]] = [:]
            for (id, value) in token {
                guard case .array(let entries) = value, !entries.isEmpty else { throw .malformed("the vp_token's \(id.prefix(40)) is not an array") }
                var presentations: [String] = []
                for entry in entries {
                    guard case .string(let presentation) = entry else { throw .malformed("a presentation is not a string") }
                    presentations.append(presentation)
                }
                vpToken[id] = presentations
            }
            return .presentation(vpToken: vpToken, state: state)
        case (nil, .string(let code)?):
            // RFC 6749 §4.1.2.1: error codes are printable ASCII without `"` or a backslash.
            guard (1...64).contains(code.utf8.count), code.utf8.allSatisfy({ (0x20...0x7E).contains($0) && $0 != 0x22 && $0 != 0x5C }) else {
                throw .malformed("its error is not an error code")
            }
            let description: String? =
                if case .string(let text)? = payload["error_description"], text.utf8.count <= 256,
                    text.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
                {
                    text
                } else { nil }
            return .error(code: code, description: description, state: state)
        case (nil, nil):
            throw .malformed("it holds neither a vp_token object nor an error")
        default:
            throw .malformed("it holds a vp_token and an error, or one of another type")
        }
    }
}
