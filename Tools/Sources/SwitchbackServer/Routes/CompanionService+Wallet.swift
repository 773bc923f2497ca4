import Crypto
import Foundation
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// The companion as an OpenID4VP 1.0 verifier, same device, `direct_post.jwt` (HAIP 1.0 §5): the app starts
/// a request bound to its secret; the wallet fetches the signed request object and posts its encrypted
/// answer, which is verified here (SD-JWT VC, Key Binding JWT to this request, status, the DCQL query); the
/// wallet then opens the app's link with a one-time `response_code`, which only the app's secret redeems
/// (§13.3, §14.2).
extension CompanionService {
    static let presentationLifetime: TimeInterval = 300
    /// A wallet's answer carries credentials with their certificate chains, encrypted: more than a start's body.
    static let maximumWalletResponse = 256 * 1024

    /// What the verifier needs for each request, made once from the configuration.
    struct WalletVerifier: Sendable {
        let identity: VerifierIdentity
        /// For `dc+sd-jwt` credential queries.
        let presentations: SDJWTVerifier?
        /// For `mso_mdoc` credential queries.
        let mdocs: MDocVerifier?
        /// The SD-JWT VC issuers' anchors, for `trusted_authorities` (an mdoc's come with its verification).
        let issuerKeys: X509IssuerKeys?
        let query: DCQLQuery
        let appLink: String
        let scheme: String

        init(_ section: ServerConfiguration.Wallet, publicURL: URL?, transport: any HTTPTransport, clock: any WallClock) throws {
            func read(_ path: String) throws -> String {
                do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
                    throw SwitchbackError(.invalidConfiguration, "wallet: \(path) cannot be read")
                }
            }
            guard let prefix = VerifierIdentity.Prefix(rawValue: section.clientIdentifierPrefix) else {
                throw SwitchbackError(.invalidConfiguration, "wallet.clientIdentifierPrefix is not one this verifier uses")
            }
            identity = try VerifierIdentity(
                keyPEM: try read(section.signingKeyFile), chainPEM: try read(section.certificateChainFile), prefix: prefix)
            if prefix == .x509SanDNS, let host = publicURL?.host?.lowercased(), !identity.dnsNames.contains(host) {
                throw SwitchbackError(
                    .invalidConfiguration, "wallet: the verifier's certificate does not name publicURL's host \(host) (x509_san_dns)")
            }
            issuerKeys = try section.issuerTrustAnchorsFile.map { try X509IssuerKeys(anchorsPEM: try read($0), clock: clock) }
            let deadline = Duration.milliseconds(Int((section.statusListTimeout * 1000).rounded()))
            presentations = issuerKeys.map {
                SDJWTVerifier(
                    issuers: $0, clock: clock, statusLists: StatusListChecker(transport: transport, issuers: $0, clock: clock, deadline: deadline))
            }
            mdocs = try section.mdocTrustAnchorsFile.map {
                let signers = try X509DocumentSigners(
                    anchorsPEM: try read($0), clock: clock, revocation: DocumentSignerRevocation(transport: transport, clock: clock))
                return MDocVerifier(
                    issuers: signers, clock: clock,
                    statusLists: StatusListChecker(transport: transport, issuers: signers, cwtSigners: signers, clock: clock, deadline: deadline))
            }
            try section.query.validate()
            query = section.query
            appLink = section.appLink
            scheme = section.scheme
        }
    }

    /// A presentation request, kept under its `state` until the wallet answers.
    struct PresentationRequestRecord: Codable, Sendable {
        let bindingDigest: String
        let nonce: String
        /// The ephemeral response key (raw P-256), sealed with the record.
        let encryptionKey: Data
        /// The App Attest key that started the request: only it may redeem the result.
        let attestedKey: String?
    }

    /// A verified presentation (or the wallet's refusal), kept under its `response_code` until the app redeems it.
    struct PresentationResultRecord: Codable, Sendable {
        let bindingDigest: String
        let claims: [String: [[String: JSONValue]]]?
        let error: String?
        let attestedKey: String?
    }

    /// A refusal's reason for the log: it may quote names a credential's holder chose (a namespace, an
    /// element), so control characters become `?` and it stops at 200 characters, one line whatever it holds.
    static func loggable(_ reason: String) -> String {
        String(String.UnicodeScalarView(reason.unicodeScalars.prefix(200).map { $0.properties.generalCategory == .control ? "?" : $0 }))
    }

    func requireWallet() throws -> WalletVerifier {
        guard let wallet else { throw CompanionError(.notConfigured, "the wallet verifier is off") }
        return wallet
    }

    /// `POST /wallet/start` `{"binding": …}`: a new request; answers the link that opens the wallet.
    func startPresentation(_ request: Request) async throws -> Response {
        let wallet = try requireWallet()
        let body = try await decode(CompanionAPI.WalletStart.self, from: request)
        try Self.requireBinding(body.binding)
        let key = P256.KeyAgreement.PrivateKey()
        let record = PresentationRequestRecord(
            bindingDigest: Secrets.digest(body.binding), nonce: Base64URL.encode(entropy.randomBytes(count: 32)),
            encryptionKey: key.rawRepresentation,
            attestedKey: Self.assertingKey
        )
        let state = try await store.issue(
            .presentationRequest, record, expiresAt: clock.now().addingTimeInterval(Self.presentationLifetime), entropy: entropy)
        guard let link = PresentationRequest.invocationURL(scheme: wallet.scheme, clientID: try clientID(wallet), requestURI: requestURI(state))
        else { throw CompanionError(.invalidRequest, "the wallet link cannot be made") }
        return Replies.json(
            CompanionAPI.WalletStarted(walletURL: link.absoluteString, returnURL: wallet.appLink, expiresIn: Int(Self.presentationLifetime)))
    }

    private func requestURI(_ state: String) -> URL { url("/wallet/request/" + state) }

    /// The verifier's Client Identifier: it may name the response URI, which is this server's own.
    private func clientID(_ wallet: WalletVerifier) throws -> String {
        try wallet.identity.clientID(responseURI: url(CompanionAPI.Path.walletResponse))
    }

    /// `GET` or `POST /wallet/request/{id}` (§5.10): the signed request object, with the `wallet_nonce` a
    /// POST sent.
    func presentationRequestObject(_ request: Request) async throws -> Response {
        let wallet = try requireWallet()
        let state = request.uri.path.split(separator: "/").last.map(String.init) ?? ""
        var walletNonce: String?
        if request.method == .post {
            let form = try await self.form(from: request)
            walletNonce = form.fields["wallet_nonce"]
            if let walletNonce,
                walletNonce.isEmpty || walletNonce.utf8.count > 256
                    || !walletNonce.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
            {
                throw CompanionError(.invalidRequest, "wallet_nonce is malformed")
            }
        }
        let record = try await pendingPresentation(state)
        let presentation = try presentationRequest(state, record)
        let claims = try presentation.claims(
            clientID: try clientID(wallet), responseURI: url(CompanionAPI.Path.walletResponse), query: wallet.query, walletNonce: walletNonce)
        var response = Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: try wallet.identity.sign(claims))))
        response.headers[.contentType] = "application/oauth-authz-req+jwt"
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func presentationRequest(_ state: String, _ record: PresentationRequestRecord) throws -> PresentationRequest {
        guard let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: record.encryptionKey) else {
            throw SwitchbackError(.storeFailed, "a stored presentation request's key cannot be read")
        }
        return try PresentationRequest(state: state, nonce: record.nonce, encryptionKey: key, keyID: state)
    }

    /// `POST /wallet/response` (§8.2, §8.3, §8.5): the wallet's encrypted answer, or its error, encrypted or
    /// plain. A verified presentation uses the request up; the answer is
    /// `{"redirect_uri": "<app link>#response_code=…"}`.
    func presentationResponse(_ request: Request) async throws -> Response {
        let wallet = try requireWallet()
        let form = try await self.form(from: request, limit: Self.maximumWalletResponse).fields
        if let jwe = form["response"] {
            // The key's kid is the request's state: the unprotected header only says which record to open.
            guard let header = jwe.split(separator: ".").first.flatMap({ Base64URL.decode($0) }).flatMap(JSONReader.object),
                case .string(let state)? = header["kid"]
            else { throw CompanionError(.invalidRequest, "the response is not a JWE naming its key") }
            // Looked up, and used up only by a presentation that verifies: anyone who saw the wallet's link
            // knows the state and can fetch the request's key, so a junk or refused answer (or an error post)
            // must not spend the request before the genuine wallet answers.
            let record = try await pendingPresentation(state)
            let answer: PresentationRequest.WalletAnswer
            do {
                answer = try presentationRequest(state, record).openResponse(jwe)
            } catch PresentationRequest.OpenFailure.doesNotOpen {
                throw CompanionError(.invalidRequest, "the response does not open with this request's key")
            } catch PresentationRequest.OpenFailure.malformed(let why) {
                // It opened with this request's key: the wallet is told, and sent back to the app, which learns it.
                return try await refuse(.unreadable, reason: "the response opened but cannot be read: \(why)", record: record, wallet: wallet)
            }
            let vpToken: [String: [String]]
            switch answer {
            case .error(let code, let description, let answeredState):
                // §5.6, §8.3.1: a wallet that can encrypt sends its error encrypted too.
                guard answeredState == nil || answeredState == state else {
                    throw CompanionError(.invalidState, "the error's state is another request's")
                }
                return try await walletError(code, description: description, record: record, wallet: wallet)
            case .presentation(let token, let answeredState):
                guard answeredState == nil || answeredState == state else {
                    throw CompanionError(.invalidState, "the response's state is another request's")
                }
                vpToken = token
            }
            var verified: [String: [VerifiedPresentation]] = [:]
            do {
                // Nothing unasked is verified.
                guard Set(vpToken.keys).isSubset(of: Set(wallet.query.credentials.map(\.id))), vpToken.values.allSatisfy({ $0.count <= 4 }) else {
                    throw SwitchbackError(.presentationInvalid, "the response answers credentials that were not asked for")
                }
                for (id, presentations) in vpToken {
                    let format = wallet.query.credentials.first { $0.id == id }?.format
                    verified[id] = try await presentations.asyncMap { presentation in
                        switch (format, wallet.presentations, wallet.mdocs) {
                        case ("dc+sd-jwt", let verifier?, _):
                            return try await verifier.verify(
                                presentation, keyBinding: .init(audience: try clientID(wallet), nonce: record.nonce), status: .later)
                        case ("mso_mdoc", _, let verifier?):
                            // §B.2.6.1: the device signs this request's client_id, nonce, response key and response_uri.
                            // The answer was encrypted, so the transcript names the key: never null here.
                            guard let thumbprint = try presentationRequest(state, record).encryptionKeyThumbprint else {
                                throw SwitchbackError(.storeFailed, "the request's encryption key has no thumbprint")
                            }
                            let binding = MDocVerifier.SessionBinding(
                                clientID: try clientID(wallet), nonce: record.nonce, encryptionKeyThumbprint: thumbprint,
                                responseURI: url(CompanionAPI.Path.walletResponse).absoluteString)
                            return try await verifier.verify(presentation, binding: binding, status: .later)
                        default:
                            throw SwitchbackError(.presentationInvalid, "no verifier is configured for \(format ?? "this credential")")
                        }
                    }
                }
                // trusted_authorities: an SD-JWT VC's issuers on its validated path, only where a query names some
                // (the key source answers keys, not paths; an mdoc's authorities come with its verification).
                for credential in wallet.query.credentials where credential.trustedAuthorities != nil && credential.format == "dc+sd-jwt" {
                    for index in verified[credential.id]?.indices ?? 0..<0 {
                        guard let chain = verified[credential.id]?[index].issuerChain else { continue }
                        verified[credential.id]?[index].issuerAuthorities = await wallet.issuerKeys?.authorities(of: chain) ?? []
                    }
                }
                try wallet.query.check(verified)
            } catch let error as SwitchbackError where error.code != .storeFailed {
                // The companion's own failure (its store) is not the wallet's: it goes out as one, not as a refusal.
                return try await refuse(.notAccepted, reason: error.message, record: record, wallet: wallet)
            }
            // Token Status List §8.3: the statuses last, every credential's at once, so that nothing refused above
            // makes anyone fetch a list; each fetch within the checker's deadline, which bounds the wallet's wait.
            if let (refusal, reason) = await statusRefusal(of: verified, wallet: wallet) {
                return try await refuse(refusal, reason: reason, record: record, wallet: wallet)
            }
            _ = try await takePresentationRequest(state)
            metrics.record(.presentationVerified)
            let outcome = PresentationResultRecord(
                bindingDigest: record.bindingDigest, claims: verified.mapValues { $0.map(\.claims) }, error: nil, attestedKey: record.attestedKey)
            return Replies.json(["redirect_uri": try await appLink(for: outcome, wallet: wallet)])
        } else if let error = form["error"], let answeredState = form["state"] {
            // §8.3.1: a wallet that cannot encrypt sends its error as a plain form (§8.2).
            let record = try await pendingPresentation(answeredState)
            return try await walletError(error, description: form["error_description"], record: record, wallet: wallet)
        } else {
            throw CompanionError(.invalidRequest, "send response, or error with state")
        }
    }

    /// Keeps `outcome` for the app's redeem under a new one-time `response_code`; returns the app link that
    /// carries it, which the wallet opens (§8.2).
    private func appLink(for outcome: PresentationResultRecord, wallet: WalletVerifier) async throws -> String {
        let code = try await store.issue(
            .presentationResult, outcome, expiresAt: clock.now().addingTimeInterval(Self.presentationLifetime), entropy: entropy)
        return wallet.appLink + "#response_code=" + code
    }

    /// What the wallet is told of an answer that opened with its request's key but is refused: a fixed
    /// sentence it can show its user (never a name or value from the credential; the precise reason goes to
    /// the log), under `invalid_request`, which the Italian wallet profile uses for the same answers.
    enum Refusal: String, Sendable {
        case notAccepted = "the credential was not accepted for this request"
        case revoked = "the credential has been revoked or suspended by its issuer"
        case statusUnknown = "the credential's status could not be checked"
        case unreadable = "the response could not be read"
    }

    /// A refused answer: logged with its reason and counted; kept for the app's redeem as
    /// `invalid_presentation`; the wallet answered 400 with the refusal and the app link to open (§8.2 lets a
    /// verifier send `redirect_uri` for an error; HAIP 1.0 §5.1 wants the user back in the app). The request is
    /// not used up: whoever saw the wallet's link can fetch its key, so a refused answer must not spend the
    /// request before the genuine wallet answers.
    private func refuse(_ refusal: Refusal, reason: String, record: PresentationRequestRecord, wallet: WalletVerifier) async throws -> Response {
        logger.notice("presentation refused", metadata: ["reason": "\(Self.loggable(reason))"])
        metrics.record(.presentationRefused)
        let outcome = PresentationResultRecord(
            bindingDigest: record.bindingDigest, claims: nil, error: "invalid_presentation", attestedKey: record.attestedKey)
        return Replies.json(
            ["error": "invalid_request", "error_description": refusal.rawValue, "redirect_uri": try await appLink(for: outcome, wallet: wallet)],
            status: .badRequest)
    }

    /// Reads the status of every verified credential that has one, all at once: nil when each is VALID; a
    /// revoked (or suspended) credential before one whose status could not be known (Token Status List
    /// §8.3: then nothing is known of it, and it is refused).
    private func statusRefusal(of verified: [String: [VerifiedPresentation]], wallet: WalletVerifier) async -> (Refusal, String)? {
        let pending = verified.values.joined().compactMap { presentation in presentation.pendingStatus.map { (presentation.format, $0) } }
        guard !pending.isEmpty else { return nil }
        let found = await withTaskGroup(of: (Refusal, String)?.self) { group in
            for (format, reference) in pending {
                group.addTask {
                    let status: UInt8
                    do {
                        switch (format, wallet.presentations, wallet.mdocs) {
                        case ("mso_mdoc", _, let verifier?): status = try await verifier.status(of: reference)
                        case (_, let verifier?, _): status = try await verifier.status(of: reference)
                        default: return (.statusUnknown, "no status list checker for \(format)")
                        }
                    } catch {
                        return (.statusUnknown, (error as? SwitchbackError)?.message ?? "\(error)")
                    }
                    do {
                        try StatusList.requireValid(status) { SwitchbackError(.presentationInvalid, "the presentation is refused: \($0)") }
                        return nil
                    } catch {
                        return (.revoked, (error as? SwitchbackError)?.message ?? "\(error)")
                    }
                }
            }
            var found: [(Refusal, String)] = []
            for await result in group { if let result { found.append(result) } }
            return found
        }
        return found.first { $0.0 == Refusal.revoked } ?? found.first
    }

    /// The error codes a wallet sends (OpenID4VP 1.0 §8.5); another is kept as `wallet_error`.
    static let walletErrors: Set<String> = [
        "access_denied", "invalid_request", "invalid_client", "invalid_scope", "vp_formats_not_supported", "invalid_request_uri_method",
        "invalid_transaction_data", "wallet_unavailable",
    ]

    /// A wallet's authorization error, encrypted or plain: kept for the app's redeem, which ends with it at
    /// once, and answered 200 with the app link (§8.2: an error response processed is answered as a response
    /// is). The request is not used up: whoever saw the wallet's link can post an error, and the genuine
    /// wallet's answer must still be heard.
    private func walletError(
        _ code: String, description: String?, record: PresentationRequestRecord, wallet: WalletVerifier
    ) async throws -> Response {
        let kept = Self.walletErrors.contains(code) ? code : "wallet_error"
        logger.notice("the wallet answered with an error", metadata: ["error": "\(kept)", "description": "\(Self.loggable(description ?? ""))"])
        let outcome = PresentationResultRecord(bindingDigest: record.bindingDigest, claims: nil, error: kept, attestedKey: record.attestedKey)
        return Replies.json(["redirect_uri": try await appLink(for: outcome, wallet: wallet)])
    }

    /// The request still waiting under `state`, looked up without using it up.
    private func pendingPresentation(_ state: String) async throws -> PresentationRequestRecord {
        guard Secrets.isIssued(state),
            let record = try await store.lookUp(.presentationRequest, secret: state, as: PresentationRequestRecord.self, now: clock.now())
        else { throw CompanionError(.invalidState, "this presentation request is unknown, expired or already answered") }
        return record
    }

    private func takePresentationRequest(_ state: String) async throws -> PresentationRequestRecord {
        guard Secrets.isIssued(state),
            let record = try await store.redeem(.presentationRequest, secret: state, as: PresentationRequestRecord.self, now: clock.now())
        else { throw CompanionError(.invalidState, "this presentation request is unknown, expired or already answered") }
        return record
    }

    /// `POST /wallet/redeem` `{"response_code": …, "binding": …}`: the verified claims, once, to the app
    /// that started the request. With App Attest, a request not asserted by the starting key is refused
    /// before the code is used up (as the exchange's result is); a wrong binding uses it up.
    func redeemPresentation(_ request: Request) async throws -> Response {
        _ = try requireWallet()
        let body = try await decode(CompanionAPI.WalletRedeem.self, from: request)
        let unknown = CompanionError(.invalidGrant, "this response_code has expired or was already used")
        guard Secrets.isIssued(body.responseCode),
            let pending = try await store.lookUp(.presentationResult, secret: body.responseCode, as: PresentationResultRecord.self, now: clock.now())
        else { throw unknown }
        try requireAssertion(by: pending.attestedKey)
        guard let record = try await store.redeem(.presentationResult, secret: body.responseCode, as: PresentationResultRecord.self, now: clock.now())
        else { throw unknown }
        guard ConstantTime.equals(record.bindingDigest, Secrets.digest(body.binding)) else {
            logger.warning("a response_code presented with another binding; it is used up")
            throw CompanionError(.invalidGrant, "this response_code belongs to another session")
        }
        switch record.error {
        case nil: break
        case "access_denied": throw CompanionError(.accessDenied, "the user declined in the wallet")
        case "invalid_presentation":
            throw CompanionError(.invalidPresentation, "the wallet's presentation was refused; the reason is in the companion's log")
        case let error?: throw CompanionError(.signInFailed, "the wallet did not present: \(error)")
        }
        return Replies.json(CompanionAPI.WalletPresented(credentials: record.claims ?? [:]))
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        result.reserveCapacity(count)
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
