public import Foundation
import Crypto
@_spi(SwitchbackInternals) public import Switchback
import SwiftASN1
import X509
package import SwitchbackVerification

/// An identity wallet app, as OpenID4VP 1.0 same-device and HAIP 1.0 describe the wallet's side: opened with
/// `openid4vp://?client_id=…&request_uri=…`, it fetches the request object (POST with a `wallet_nonce` when
/// `request_uri_method=post`, §5.10), holds it to its client identifier's prefix (§5.9.3: `x509_hash` the
/// certificate's hash, `x509_san_dns` its DNS name and the response URI's host, both with the signature by
/// the certificate in `x5c`; `redirect_uri` unsigned and answered there), asks the user, discloses the claims the DCQL query
/// names with a Key Binding JWT for this request (RFC 9901 §4.3, OpenID4VP §B.3.6), encrypts the answer to the
/// request's key (`direct_post.jwt`, §8.3), posts it to `response_uri` and opens the `redirect_uri` it gets
/// back (§8.2). Faults on demand make it misbehave as a broken or hostile wallet would.
///
/// It holds the PID twice, as an SD-JWT VC and as an ISO mdoc, and answers every credential query of the
/// request it holds a credential for; an mdoc as a `DeviceResponse` whose device signature covers this
/// request's session transcript (OpenID4VP 1.0 §B.2.6.1).
///
/// What it does not do: check the verifier's certificate against a trust list (a real wallet does).
public struct EmulatedWallet: Sendable {
    /// The holder's key, to which the credentials are bound.
    let holder: P256.Signing.PrivateKey
    /// The PID credential, from the trusted issuer.
    let credential: EmulatedIssuer.Credential
    /// The same claims from an issuer nobody trusts, and past its expiry: for ``Fault/unknownIssuer`` and ``Fault/expired``.
    let untrusted: EmulatedIssuer.Credential
    let expired: EmulatedIssuer.Credential
    /// The same claims, revoked in the issuer's status list (entry ``revokedIndex``): for ``Fault/revoked``.
    let revoked: EmulatedIssuer.Credential
    /// The PID as an mdoc, and its untrusted and expired twins.
    let mdoc: EmulatedIssuer.MDocCredential
    let untrustedMDoc: EmulatedIssuer.MDocCredential
    let expiredMDoc: EmulatedIssuer.MDocCredential
    let revokedMDoc: EmulatedIssuer.MDocCredential

    /// The status list entry of the revoked credentials; the issuer's list must mark it INVALID
    /// (``StatusListHosting``).
    public static let revokedIndex = 1

    /// The PID type the wallet holds, and its claims (a test person).
    public static let pidType = "urn:eudi:pid:1"
    public static let person = ["given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26", "nationality": "DE"]

    /// The PID's mdoc document type and namespace (EUDI PID Rulebook), and its elements for the test person.
    public static let pidDocType = "eu.europa.ec.eudi.pid.1"
    package static let mdocPerson: [String: CBOR] = [
        "given_name": "Erika", "family_name": "Mustermann", "birth_date": .tagged(1004, "1984-01-26"), "age_over_18": .bool(true),
    ]

    /// A wallet holding a PID from `issuer`.
    public init(issuer: EmulatedIssuer, now: Date = Date()) throws {
        holder = P256.Signing.PrivateKey()
        let stranger = try EmulatedIssuer(host: String(issuer.issuer.dropFirst("https://".count)), now: now)
        credential = try issuer.issue(vct: Self.pidType, claims: Self.person, holder: holder.publicKey, expiresAt: now + 365 * 86400)
        untrusted = try stranger.issue(vct: Self.pidType, claims: Self.person, holder: holder.publicKey, expiresAt: now + 365 * 86400)
        expired = try issuer.issue(
            vct: Self.pidType, claims: Self.person, holder: holder.publicKey, issuedAt: now - 400 * 86400, expiresAt: now - 86400)
        revoked = try issuer.issue(
            vct: Self.pidType, claims: Self.person, holder: holder.publicKey, expiresAt: now + 365 * 86400, statusIndex: Self.revokedIndex)
        let key = holder.publicKey
        let issued = { (issuer: EmulatedIssuer, from: Date, until: Date, status: Int?) in
            try issuer.issueMDoc(
                docType: Self.pidDocType, nameSpace: Self.pidDocType, elements: Self.mdocPerson, holder: key, validFrom: from, validUntil: until,
                statusIndex: status)
        }
        mdoc = try issued(issuer, now - 86400, now + 365 * 86400, nil)
        untrustedMDoc = try issued(stranger, now - 86400, now + 365 * 86400, nil)
        expiredMDoc = try issued(issuer, now - 400 * 86400, now - 86400, nil)
        revokedMDoc = try issued(issuer, now - 86400, now + 365 * 86400, Self.revokedIndex)
    }

    /// What the user does in the wallet.
    public enum Decision: Sendable, Equatable {
        case share
        /// The user declines; the wallet sends `access_denied` encrypted to the request's key, as a wallet that
        /// can encrypt does (OpenID4VP 1.0 §5.6, §8.3.1).
        case decline
        /// The user declines; the wallet sends `access_denied` as a plain form, as one that cannot encrypt may (§8.3.1).
        case declinePlain
        /// Leaves the wallet without answering.
        case ignore
    }

    /// What goes wrong, on demand.
    public enum Fault: String, Sendable, CaseIterable {
        /// The Key Binding JWT carries another nonce than the request's.
        case wrongNonce = "wrong-nonce"
        /// The Key Binding JWT is for another verifier.
        case wrongAudience = "wrong-audience"
        /// A disclosure's value is changed after issuance.
        case tamperedDisclosure = "tampered-disclosure"
        /// The credential is past its `exp`.
        case expired
        /// The credential is revoked in its issuer's status list.
        case revoked
        /// The credential comes from an issuer under no trust anchor of the verifier (the same name, another authority).
        case unknownIssuer = "unknown-issuer"
        /// The wallet (or whoever copied its post) sends the same answer twice.
        case replayedResponse = "replayed-response"
        /// One asked claim is withheld.
        case withheldClaim = "withheld-claim"
    }

    /// What the wallet did, for the narration, and the link it opens next (nil: the user switches back by hand).
    public struct Answer: Sendable {
        public var steps: [String] = []
        public var next: URL?
    }

    /// Handles `link` as the wallet app: everything goes over `transport`.
    public func answer(_ link: URL, decision: Decision, fault: Fault? = nil, transport: any HTTPTransport) async -> Answer {
        var answer = Answer()
        do {
            let request = try await fetchRequest(link, transport: transport)
            answer.steps.append(
                "reads the verifier's request (\(request.clientID.prefix(20))…): it asks for \(request.asks.map(\.summary).joined(separator: "; "))"
            )
            switch decision {
            case .ignore:
                answer.steps.append("the user leaves the wallet without answering")
                return answer
            case .decline:
                answer.steps.append("the user declines; the wallet tells the verifier (access_denied, encrypted)")
                let refusal = JSONValue.object([
                    "error": .string("access_denied"), "error_description": .string("The user declined"), "state": .string(request.state),
                ])
                let jwe = try CompactJWE.encrypt(Data(refusal.description.utf8), to: request.encryptionKey, alg: "ECDH-ES", enc: request.encryption)
                answer.next = try await post(request.responseURI, [("response", jwe)], transport: transport)
                return answer
            case .declinePlain:
                answer.steps.append("the user declines; the wallet tells the verifier (access_denied, as a plain form)")
                answer.next = try await post(request.responseURI, [("error", "access_denied"), ("state", request.state)], transport: transport)
                return answer
            case .share:
                break
            }
            let audience = fault == .wrongAudience ? "x509_hash:another-verifier" : request.clientID
            let nonce = fault == .wrongNonce ? "another-request-nonce" : request.nonce
            var vpToken: [String: JSONValue] = [:]
            var disclosed: [String] = []
            let held = credentials(for: fault)
            for ask in request.asks {
                switch (ask.format, ask.type) {
                case ("dc+sd-jwt", Self.pidType):
                    let held = held.sdJWT
                    var names = ask.claims.compactMap(\.first).filter { held.disclosures[$0] != nil }
                    if fault == .withheldClaim, !names.isEmpty { names.removeLast() }
                    var disclosures = names.compactMap { held.disclosures[$0] }
                    if fault == .tamperedDisclosure, let first = disclosures.first, let decoded = Base64URL.decode(first),
                        case .array(let parts)? = JSONReader.value(decoded), parts.count == 3
                    {
                        disclosures[0] = Base64URL.encode(Data(JSONValue.array([parts[0], parts[1], .string("Mallory")]).description.utf8))
                    }
                    vpToken[ask.id] = .array([.string(try present(held.jwt, disclosures: disclosures, audience: audience, nonce: nonce))])
                    disclosed.append("\(names.joined(separator: ", ")) (SD-JWT VC)")
                case ("mso_mdoc", Self.pidDocType):
                    let held = held.mdoc
                    var names = ask.claims.filter { $0.count == 2 && $0[0] == held.nameSpace && held.items[$0[1]] != nil }.map { $0[1] }
                    if fault == .withheldClaim, !names.isEmpty { names.removeLast() }
                    let transcript = Self.sessionTranscript(
                        clientID: audience, nonce: nonce, encryptionKey: request.encryptionKey, responseURI: request.responseURI.absoluteString)
                    vpToken[ask.id] = .array([
                        .string(try presentMDoc(held, elements: names, transcript: transcript, tampered: fault == .tamperedDisclosure))
                    ])
                    disclosed.append("\(names.joined(separator: ", ")) (mdoc)")
                default:
                    continue
                }
            }
            guard !vpToken.isEmpty else { throw WalletError("the wallet holds no credential the request asks for") }
            answer.steps.append(
                "the user consents with biometrics; the wallet discloses \(disclosed.joined(separator: "; ")) with key binding\(fault.map { " (fault: \($0.rawValue))" } ?? "")"
            )
            let payload = JSONValue.object(["vp_token": .object(vpToken), "state": .string(request.state)])
            let jwe = try CompactJWE.encrypt(Data(payload.description.utf8), to: request.encryptionKey, alg: "ECDH-ES", enc: request.encryption)
            answer.next = try await post(request.responseURI, [("response", jwe)], transport: transport)
            answer.steps.append("posts the encrypted answer (direct_post.jwt) and gets a redirect_uri")
            if fault == .replayedResponse {
                let replayed = try await transport.send(.form(request.responseURI, [("response", jwe)]))
                answer.steps.append("posts the same answer again: HTTP \(replayed.status)")
            }
        } catch {
            answer.steps.append("cannot answer (\(error)); the user gives up")
            answer.next = nil
        }
        return answer
    }

    /// The PID the wallet presents, in both formats: the one a fault calls for (expired, untrusted, revoked).
    private func credentials(for fault: Fault?) -> (sdJWT: EmulatedIssuer.Credential, mdoc: EmulatedIssuer.MDocCredential) {
        switch fault {
        case .expired?: (expired, expiredMDoc)
        case .unknownIssuer?: (untrusted, untrustedMDoc)
        case .revoked?: (revoked, revokedMDoc)
        default: (credential, mdoc)
        }
    }

    /// The PID with the claims `names` disclosed and a Key Binding JWT for `audience` and `nonce`.
    public func presentation(disclosing names: [String], audience: String, nonce: String) throws -> String {
        try present(credential.jwt, disclosures: names.compactMap { credential.disclosures[$0] }, audience: audience, nonce: nonce)
    }

    /// `jwt~disclosure~…~` and the holder's Key Binding JWT over it (RFC 9901 §4.3).
    private func present(_ jwt: String, disclosures: [String], audience: String, nonce: String) throws -> String {
        let presented = jwt + "~" + disclosures.map { $0 + "~" }.joined()
        return try presented
            + JWS.sign(
                ["alg": "ES256", "typ": "kb+jwt"],
                [
                    "aud": .string(audience), "nonce": .string(nonce), "iat": .number(Date().timeIntervalSince1970.rounded(.down)),
                    "sd_hash": .string(Base64URL.encode(SHA256.hash(data: Data(presented.utf8)))),
                ], with: holder)
    }

    /// What the wallet learned from the link and the request object.
    struct Request {
        let clientID: String
        let nonce: String
        let state: String
        let responseURI: URL
        let encryptionKey: [String: JSONValue]
        let encryption: String
        let asks: [CredentialAsk]
    }

    /// One credential query of the request: its `id`, format, `vct` or `doctype_value`, and claim paths (names only).
    struct CredentialAsk {
        let id: String
        let format: String
        let type: String
        let claims: [[String]]

        var summary: String {
            "\(claims.map { $0.joined(separator: "/") }.joined(separator: ", ")) of \(format == "mso_mdoc" ? "an mdoc" : "an SD-JWT VC")"
        }
    }

    private func fetchRequest(_ link: URL, transport: any HTTPTransport) async throws -> Request {
        let items = URLComponents(url: link, resolvingAgainstBaseURL: false)?.queryItems ?? []
        guard let clientID = items.first(where: { $0.name == "client_id" })?.value,
            let requestURI = items.first(where: { $0.name == "request_uri" })?.value.flatMap(URL.init(string:))
        else { throw WalletError("the link has no client_id or request_uri") }
        let walletNonce = Base64URL.encode(Data((0..<16).map { _ in UInt8.random(in: 0...255) }))
        let post = items.first { $0.name == "request_uri_method" }?.value == "post"
        let fetched = try await transport.send(
            post
                ? .form(requestURI, [("wallet_nonce", walletNonce)], headers: ["Accept": "application/oauth-authz-req+jwt"])
                : HTTPRequest(method: .get, url: requestURI, headers: ["Accept": "application/oauth-authz-req+jwt"]))
        guard fetched.status == 200 else { throw WalletError("the request_uri answered HTTP \(fetched.status)") }
        let parts = String(decoding: fetched.body, as: UTF8.self).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let header = Base64URL.decode(parts[0]).flatMap(JSONReader.object),
            let claims = Base64URL.decode(parts[1]).flatMap(JSONReader.object)
        else { throw WalletError("the request object is not a JWT") }
        // §5.9.3: the client identifier names the verifier by its prefix, and the request is held to it.
        guard header["typ"] == "oauth-authz-req+jwt", claims["client_id"] == .string(clientID) else {
            throw WalletError("the request object's typ or client_id is not the link's")
        }
        if clientID.hasPrefix("redirect_uri:") {
            // Unsigned by nature: the response URI must be the client identifier itself.
            guard header["alg"] == "none", parts[2].isEmpty, claims["response_uri"] == .string(String(clientID.dropFirst("redirect_uri:".count)))
            else { throw WalletError("a redirect_uri request must be unsigned and answered at its client identifier") }
        } else {
            guard header["alg"] == "ES256", case .array(let chain)? = header["x5c"], case .string(let leafText)? = chain.first,
                let leaf = Data(base64Encoded: leafText)
            else { throw WalletError("the request object is not signed with an x5c chain") }
            let certificate = try Certificate(derEncoded: Array(leaf))
            if clientID.hasPrefix("x509_hash:") {
                guard clientID == "x509_hash:" + Base64URL.encode(SHA256.hash(data: leaf)) else {
                    throw WalletError("the request object's x5c does not match the client_id")
                }
            } else if clientID.hasPrefix("x509_san_dns:") {
                let name = String(clientID.dropFirst("x509_san_dns:".count))
                let names =
                    (try? certificate.extensions.subjectAlternativeNames)??.compactMap { name -> String? in
                        if case .dnsName(let dns) = name { return dns.lowercased() }
                        return nil
                    } ?? []
                // The wallet trusts no list of verifiers, so the response URI's host must be that name too.
                guard names.contains(name.lowercased()), case .string(let responseText)? = claims["response_uri"],
                    URL(string: responseText)?.host?.lowercased() == name.lowercased()
                else { throw WalletError("the request object's certificate or response_uri does not match the x509_san_dns client_id") }
            } else {
                throw WalletError("the client_id's prefix is not one this wallet takes")
            }
            guard let key = P256.Signing.PublicKey(certificate.publicKey), let signature = Base64URL.decode(parts[2]),
                key.isValidSignature(try P256.Signing.ECDSASignature(rawRepresentation: signature), for: Data((parts[0] + "." + parts[1]).utf8))
            else { throw WalletError("the request object's signature does not verify") }
        }
        guard !post || claims["wallet_nonce"] == .string(walletNonce) else { throw WalletError("the request object does not echo the wallet_nonce") }
        guard claims["response_type"] == "vp_token", claims["response_mode"] == "direct_post.jwt", case .string(let nonce)? = claims["nonce"],
            case .string(let state)? = claims["state"], case .string(let responseText)? = claims["response_uri"],
            let responseURI = URL(string: responseText), case .object(let metadata)? = claims["client_metadata"],
            case .object(let jwks)? = metadata["jwks"], case .array(let keys)? = jwks["keys"], case .object(let encryptionKey)? = keys.first,
            case .object(let query)? = claims["dcql_query"], case .array(let credentials)? = query["credentials"]
        else { throw WalletError("the request object lacks a claim this wallet needs") }
        var asks: [CredentialAsk] = []
        for case .object(let credential) in credentials {
            guard case .string(let id)? = credential["id"], case .string(let format)? = credential["format"],
                case .object(let meta)? = credential["meta"]
            else { continue }
            let type: String
            switch (meta["vct_values"], meta["doctype_value"]) {
            case (.array(let values)?, _): type = values.first.flatMap { if case .string(let vct) = $0 { vct } else { nil } } ?? ""
            case (_, .string(let doctype)?): type = doctype
            default: continue
            }
            var paths: [[String]] = []
            if case .array(let claimQueries)? = credential["claims"] {
                for case .object(let claim) in claimQueries {
                    if case .array(let path)? = claim["path"] {
                        paths.append(path.compactMap { if case .string(let name) = $0 { name } else { nil } })
                    }
                }
            }
            asks.append(CredentialAsk(id: id, format: format, type: type, claims: paths))
        }
        var encryption = "A128GCM"
        if case .array(let offered)? = metadata["encrypted_response_enc_values_supported"], case .string(let enc)? = offered.first {
            encryption = enc
        }
        return Request(
            clientID: clientID, nonce: nonce, state: state, responseURI: responseURI, encryptionKey: encryptionKey, encryption: encryption,
            asks: asks)
    }

    /// Posts a form to the response URI; returns the `redirect_uri` of its answer.
    private func post(_ url: URL, _ fields: [(String, String)], transport: any HTTPTransport) async throws -> URL? {
        let answered = try await transport.send(.form(url, fields))
        guard answered.status == 200, let object = JSONReader.object(answered.body) else {
            throw WalletError("the verifier answered HTTP \(answered.status)")
        }
        guard case .string(let redirect)? = object["redirect_uri"], let next = URL(string: redirect) else { return nil }
        return next
    }
}

/// Why the emulated wallet could not answer.
struct WalletError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
