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
/// It holds the PID twice, as an SD-JWT VC and as an ISO mdoc, or a mobile driving licence (an mdoc), or both
/// (``Holding``). It answers the credential queries of the request it can (§6.4.2): without
/// `credential_sets` every one, with them the first option of each set it holds every credential of (the user's
/// choice, §6.4.3, made here by order); when it cannot answer a required set, or without sets some credential,
/// it returns none and sends `access_denied` (§6.4.2, §8.5). An mdoc goes as a `DeviceResponse` whose device
/// signature covers this request's session transcript (OpenID4VP 1.0 §B.2.6.1).
///
/// What it does not do: check the verifier's certificate against a trust list (a real wallet does).
public struct EmulatedWallet: Sendable {
    /// What the wallet holds.
    public enum Holding: String, Sendable, CaseIterable {
        /// The PID, as an SD-JWT VC (`urn:eudi:pid:1`) and as an mdoc (`eu.europa.ec.eudi.pid.1`).
        case pid
        /// A mobile driving licence (ISO/IEC 18013-5 `org.iso.18013.5.1.mDL`).
        case mdl
    }

    /// An mdoc and its twins for the faults: from an issuer nobody trusts, past its validity, revoked.
    struct MDocTwins: Sendable {
        let valid: EmulatedIssuer.MDocCredential
        let untrusted: EmulatedIssuer.MDocCredential
        let expired: EmulatedIssuer.MDocCredential
        let revoked: EmulatedIssuer.MDocCredential

        func credential(for fault: Fault?) -> EmulatedIssuer.MDocCredential {
            switch fault {
            case .expired?: expired
            case .unknownIssuer?: untrusted
            case .revoked?: revoked
            default: valid
            }
        }
    }

    /// The holder's key, to which the credentials are bound.
    let holder: P256.Signing.PrivateKey
    /// What the wallet holds.
    public let holds: Set<Holding>
    /// The PID credential, from the trusted issuer.
    let credential: EmulatedIssuer.Credential
    /// The same claims from an issuer nobody trusts, and past its expiry: for ``Fault/unknownIssuer`` and ``Fault/expired``.
    let untrusted: EmulatedIssuer.Credential
    let expired: EmulatedIssuer.Credential
    /// The same claims, revoked in the issuer's status list (entry ``revokedIndex``): for ``Fault/revoked``.
    let revoked: EmulatedIssuer.Credential
    /// The PID as an mdoc, and the mobile driving licence, each with its twins.
    let pidMDoc: MDocTwins
    /// Issued only when the wallet holds one (each twin costs a signature).
    let mdl: MDocTwins?
    var mdoc: EmulatedIssuer.MDocCredential { pidMDoc.valid }

    /// The status list entry of the revoked credentials; the issuer's list must mark it INVALID
    /// (``StatusListHosting``).
    public static let revokedIndex = 1
    /// The revoked mdocs' identifier, when they refer to the issuer's identifier list (``MDocStatus/identifierList``).
    public static let revokedIdentifier = Data("revoked-mdoc-1".utf8)

    /// How the wallet's mdocs refer to their status (ISO/IEC 18013-5 second edition).
    public enum MDocStatus: Sendable {
        /// An entry of the issuer's Token Status List.
        case statusList
        /// An identifier in the issuer's identifier list, listed when revoked.
        case identifierList
    }

    /// The PID type the wallet holds, and its claims (a test person).
    public static let pidType = "urn:eudi:pid:1"
    public static let person = ["given_name": "Erika", "family_name": "Mustermann", "birthdate": "1984-01-26", "nationality": "DE"]

    /// The PID's mdoc document type and namespace (EUDI PID Rulebook), and its elements for the test person.
    public static let pidDocType = "eu.europa.ec.eudi.pid.1"
    package static let mdocPerson: [String: CBOR] = [
        "given_name": "Erika", "family_name": "Mustermann", "birth_date": .tagged(1004, "1984-01-26"), "age_over_18": .bool(true),
    ]

    /// The mobile driving licence's document type and namespace (ISO/IEC 18013-5 §7.1, §7.2.1), and some of its
    /// mandatory elements for the same person (`birth_date`, `issue_date` and `expiry_date` are full-dates,
    /// tag 1004; `document_number` and `issuing_country` text).
    public static let mdlDocType = "org.iso.18013.5.1.mDL"
    public static let mdlNameSpace = "org.iso.18013.5.1"
    package static let mdlHolder: [String: CBOR] = [
        "given_name": "Erika", "family_name": "Mustermann", "birth_date": .tagged(1004, "1984-01-26"), "issue_date": .tagged(1004, "2024-03-01"),
        "expiry_date": .tagged(1004, "2039-02-28"), "issuing_country": "DE", "document_number": "B072RRE2I55", "age_over_18": .bool(true),
    ]

    /// A wallet holding `holds` (the PID unless told otherwise) from `issuer`; with `statusIndex`, its valid
    /// credentials carry that entry of the issuer's status list (which must leave it VALID), so that a
    /// verifier reads the list for them too.
    /// With `mdocStatus` `.identifierList`, its mdocs refer to the issuer's identifier list instead, each valid
    /// one by an identifier of its own, the revoked ones by ``revokedIdentifier``.
    public init(
        issuer: EmulatedIssuer, now: Date = Date(), holds: Set<Holding> = [.pid], statusIndex: Int? = nil, mdocStatus: MDocStatus = .statusList
    ) throws {
        holder = P256.Signing.PrivateKey()
        self.holds = holds
        let stranger = try EmulatedIssuer(host: String(issuer.issuer.dropFirst("https://".count)), now: now)
        credential = try issuer.issue(
            vct: Self.pidType, claims: Self.person, holder: holder.publicKey, expiresAt: now + 365 * 86400, statusIndex: statusIndex)
        untrusted = try stranger.issue(vct: Self.pidType, claims: Self.person, holder: holder.publicKey, expiresAt: now + 365 * 86400)
        expired = try issuer.issue(
            vct: Self.pidType, claims: Self.person, holder: holder.publicKey, issuedAt: now - 400 * 86400, expiresAt: now - 86400)
        revoked = try issuer.issue(
            vct: Self.pidType, claims: Self.person, holder: holder.publicKey, expiresAt: now + 365 * 86400, statusIndex: Self.revokedIndex)
        let key = holder.publicKey
        func twins(docType: String, nameSpace: String, elements: [String: CBOR]) throws -> MDocTwins {
            let issued = { (issuer: EmulatedIssuer, from: Date, until: Date, status: Int?, identifier: Data?) in
                try issuer.issueMDoc(
                    docType: docType, nameSpace: nameSpace, elements: elements, holder: key, validFrom: from, validUntil: until, statusIndex: status,
                    identifier: identifier)
            }
            let listed = mdocStatus == .identifierList
            let fresh = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
            return MDocTwins(
                valid: try issued(issuer, now - 86400, now + 365 * 86400, listed ? nil : statusIndex, listed ? fresh : nil),
                untrusted: try issued(stranger, now - 86400, now + 365 * 86400, nil, nil),
                expired: try issued(issuer, now - 400 * 86400, now - 86400, nil, nil),
                revoked: try issued(issuer, now - 86400, now + 365 * 86400, listed ? nil : Self.revokedIndex, listed ? Self.revokedIdentifier : nil))
        }
        pidMDoc = try twins(docType: Self.pidDocType, nameSpace: Self.pidDocType, elements: Self.mdocPerson)
        mdl = holds.contains(.mdl) ? try twins(docType: Self.mdlDocType, nameSpace: Self.mdlNameSpace, elements: Self.mdlHolder) : nil
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
            answer.steps.append("reads the verifier's request (\(request.clientID.prefix(20))…): it asks for \(request.summary)")
            if decision == .ignore {
                answer.steps.append("the user leaves the wallet without answering")
                return answer
            }
            let chosen = select(request)
            if decision == .share, chosen == nil {
                answer.steps.append("the wallet holds no credentials that answer the request; it tells the verifier (access_denied, encrypted)")
            }
            guard decision == .share, let chosen else {
                if decision == .declinePlain {
                    answer.steps.append("the user declines; the wallet tells the verifier (access_denied, as a plain form)")
                    answer.next = try await post(
                        request.responseURI, [("error", "access_denied"), ("state", request.state)], into: &answer, transport: transport)
                    return answer
                }
                if decision == .decline { answer.steps.append("the user declines; the wallet tells the verifier (access_denied, encrypted)") }
                let why = decision == .decline ? "The user declined" : "The wallet holds no credentials that answer the request"
                let refusal = JSONValue.object([
                    "error": .string("access_denied"), "error_description": .string(why), "state": .string(request.state),
                ])
                let jwe = try CompactJWE.encrypt(Data(refusal.description.utf8), to: request.encryptionKey, alg: "ECDH-ES", enc: request.encryption)
                answer.next = try await post(request.responseURI, [("response", jwe)], into: &answer, transport: transport)
                return answer
            }
            if chosen.count < request.asks.count {
                answer.steps.append("the user picks \(chosen.map(\.id).joined(separator: " and ")) among the credentials that would answer")
            }
            let audience = fault == .wrongAudience ? "x509_hash:another-verifier" : request.clientID
            let nonce = fault == .wrongNonce ? "another-request-nonce" : request.nonce
            var vpToken: [String: JSONValue] = [:]
            var disclosed: [String] = []
            for ask in chosen {
                switch (ask.format, ask.type) {
                case ("dc+sd-jwt", Self.pidType):
                    let held = sdJWT(for: fault)
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
                case ("mso_mdoc", _):
                    guard let held = mdoc(ask.type, for: fault) else { continue }
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
            answer.steps.append(
                "the user consents with biometrics; the wallet discloses \(disclosed.joined(separator: "; ")) with key binding\(fault.map { " (fault: \($0.rawValue))" } ?? "")"
            )
            let payload = JSONValue.object(["vp_token": .object(vpToken), "state": .string(request.state)])
            let jwe = try CompactJWE.encrypt(Data(payload.description.utf8), to: request.encryptionKey, alg: "ECDH-ES", enc: request.encryption)
            answer.steps.append("posts the encrypted answer (direct_post.jwt)")
            answer.next = try await post(request.responseURI, [("response", jwe)], into: &answer, transport: transport)
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

    /// The PID as an SD-JWT VC the wallet presents: the one a fault calls for (expired, untrusted, revoked).
    private func sdJWT(for fault: Fault?) -> EmulatedIssuer.Credential {
        switch fault {
        case .expired?: expired
        case .unknownIssuer?: untrusted
        case .revoked?: revoked
        default: credential
        }
    }

    /// The mdoc of `docType` the wallet holds, as a fault calls for it.
    private func mdoc(_ docType: String, for fault: Fault?) -> EmulatedIssuer.MDocCredential? {
        switch docType {
        case Self.pidDocType where holds.contains(.pid): pidMDoc.credential(for: fault)
        case Self.mdlDocType: mdl?.credential(for: fault)
        default: nil
        }
    }

    /// Whether the wallet holds a credential of the ask's format and type.
    private func holds(_ ask: CredentialAsk) -> Bool {
        switch (ask.format, ask.type) {
        case ("dc+sd-jwt", Self.pidType): holds.contains(.pid)
        case ("mso_mdoc", _): mdoc(ask.type, for: nil) != nil
        default: false
        }
    }

    /// The credential queries the wallet answers (§6.4.2): without sets every one, with sets the first option of
    /// each set whose credentials it holds; nil when it cannot answer them all, or a required set.
    func select(_ request: Request) -> [CredentialAsk]? {
        let held = Set(request.asks.filter(holds).map(\.id))
        guard let sets = request.sets else { return held.count == request.asks.count ? request.asks : nil }
        var chosen: Set<String> = []
        for set in sets {
            if let option = set.options.first(where: { $0.allSatisfy(held.contains) }) {
                chosen.formUnion(option)
            } else if set.required {
                return nil
            }
        }
        return request.asks.filter { chosen.contains($0.id) }
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
        /// The query's `credential_sets` (§6.2), nil without.
        let sets: [(options: [[String]], required: Bool)]?

        /// What is asked, for the narration: every credential, or each set's options.
        var summary: String {
            guard let sets else { return asks.map(\.summary).joined(separator: "; ") }
            return sets.map { set in
                let options = set.options.map { option in
                    option.map { id in asks.first { $0.id == id }?.summary ?? id }.joined(separator: " and ")
                }
                return options.joined(separator: ", or ") + (set.required ? "" : " (optional)")
            }.joined(separator: "; ")
        }
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
        var sets: [(options: [[String]], required: Bool)]?
        if case .array(let setQueries)? = query["credential_sets"] {
            sets = setQueries.compactMap { value -> (options: [[String]], required: Bool)? in
                guard case .object(let set) = value, case .array(let options)? = set["options"] else { return nil }
                let ids = options.map { option -> [String] in
                    guard case .array(let ids) = option else { return [] }
                    return ids.compactMap { if case .string(let id) = $0 { id } else { nil } }
                }
                return (ids, set["required"] != .bool(false))
            }
        }
        var encryption = "A128GCM"
        if case .array(let offered)? = metadata["encrypted_response_enc_values_supported"], case .string(let enc)? = offered.first {
            encryption = enc
        }
        return Request(
            clientID: clientID, nonce: nonce, state: state, responseURI: responseURI, encryptionKey: encryptionKey, encryption: encryption,
            asks: asks, sets: sets)
    }

    /// Posts a form to the response URI; returns the `redirect_uri` of its answer (§8.2), which a verifier may
    /// send with a refusal too (HAIP 1.0 §5.1): the refusal's description is what the wallet shows its user.
    private func post(_ url: URL, _ fields: [(String, String)], into answer: inout Answer, transport: any HTTPTransport) async throws -> URL? {
        let answered = try await transport.send(.form(url, fields))
        let object = JSONReader.object(answered.body)
        var next: URL?
        if case .string(let redirect)? = object?["redirect_uri"] { next = URL(string: redirect) }
        switch answered.status {
        case 200:
            guard object != nil else { throw WalletError("the verifier answered 200 without a JSON object") }
            answer.steps.append(next == nil ? "the verifier takes the answer" : "the verifier takes the answer and gives a redirect_uri")
        default:
            let shown = object?["error_description"].flatMap { if case .string(let text) = $0 { text } else { nil } } ?? "HTTP \(answered.status)"
            answer.steps.append("the verifier refuses the answer (HTTP \(answered.status)); the wallet shows \"\(shown.prefix(120))\"")
            guard next != nil else { throw WalletError("the verifier answered HTTP \(answered.status) without a redirect_uri") }
        }
        return next
    }
}

/// Why the emulated wallet could not answer.
struct WalletError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
