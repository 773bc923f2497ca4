public import Foundation
import Crypto
@_spi(SwitchbackInternals) public import Switchback

/// A Token Status List (draft-ietf-oauth-status-list-20 §4): `bits` per entry (1, 2, 4 or 8), entries packed
/// from the least significant bit of each byte (§4.1 step 3), the byte array compressed with DEFLATE in the
/// ZLIB format and base64url-encoded in `lst` (§4.2).
public struct StatusList: Sendable, Equatable {
    /// The registered values (§7.1).
    public static let valid: UInt8 = 0
    public static let invalid: UInt8 = 1
    public static let suspended: UInt8 = 2

    public let bits: Int
    let bytes: [UInt8]

    /// Reads `lst`; `limit` bounds the inflated size.
    public init(bits: Int, lst: String, limit: Int = 16 << 20) throws {
        guard let compressed = Base64URL.decode(lst) else { throw SwitchbackError(.presentationInvalid, "a status list's lst is not base64url") }
        try self.init(bits: bits, compressed: compressed, limit: limit)
    }

    /// Reads a CWT status list's `lst`: the ZLIB bytes themselves (§4.3).
    public init(bits: Int, compressed: Data, limit: Int = 16 << 20) throws {
        guard [1, 2, 4, 8].contains(bits) else { throw SwitchbackError(.presentationInvalid, "a status list's bits must be 1, 2, 4 or 8 (§4.2)") }
        do {
            bytes = try Inflate.zlib(compressed, limit: limit)
        } catch {
            throw SwitchbackError(.presentationInvalid, "a status list's lst does not inflate: \(error.description)")
        }
        self.bits = bits
    }

    /// Throws `refuse`'s error unless `status` is VALID, naming what it is (§7.1).
    public static func requireValid(_ status: UInt8, _ refuse: (String) -> SwitchbackError) throws {
        switch status {
        case valid: return
        case invalid: throw refuse("the credential has been revoked")
        case suspended: throw refuse("the credential is suspended")
        default: throw refuse("the credential's status is \(status), not valid")
        }
    }

    /// The status at `index`, or nil past the end (§8.3 step 6: the token is then refused).
    public func status(at index: Int) -> UInt8? {
        let perByte = 8 / bits
        guard index >= 0, index / perByte < bytes.count else { return nil }
        return (bytes[index / perByte] >> ((index % perByte) * bits)) & UInt8((1 << bits) - 1)
    }
}

/// Checks a credential's status (draft-ietf-oauth-status-list-20 §8.3): the Status List Token at the
/// credential's `uri` is fetched (§8.1, `Accept: application/statuslist+jwt`, and `+cwt` first for an mdoc's;
/// https, up to three redirects on the same host, within ``deadline`` in all, a body of at most 1 MiB that
/// inflates to at most 1 MiB), its `typ` must be `statuslist+jwt` (or the CWT's) and its signature by
/// keys of the credential's own issuer
/// (as `CredentialIssuerKeys` gives them; §11.3's first way), its `sub` the `uri`, its `exp` in the future;
/// then the index must be inside the list. A token is kept until its `exp`, its `ttl` or `maximumAge`,
/// whichever is first (§8.2). Any failure means nothing is known of the status, and the credential is
/// refused (§8.3).
public actor StatusListChecker {
    private let transport: any HTTPTransport
    private let issuers: any CredentialIssuerKeys
    /// The keys of CWT status lists (an mdoc's, ISO/IEC 18013-5 second edition): their `x5chain` must lead
    /// to these anchors. Without them only JWT status lists are asked for.
    private let cwtSigners: (any MDocIssuerKeys)?
    private let clock: any WallClock
    private let maximumAge: TimeInterval
    /// By issuer and `uri`: a list is taken for the issuer whose keys verified it, never for another.
    private var cache: [String: (list: FetchedList, until: TimeInterval)] = [:]

    /// A list as fetched and verified: a Token Status List's entries, or an identifier list's identifiers.
    enum FetchedList: Sendable {
        case statuses(StatusList)
        case identifiers(Set<Data>)
    }
    /// How long a fetch may take in all, redirects and body included: a list trickled a byte at a time must
    /// not hold the presentation that waits for it.
    private let deadline: Duration
    /// Lists kept at most; the oldest is dropped for a new one. With ``maximumListBytes`` each (and at most
    /// ``maximumIdentifiers`` read from an identifier list), some tens of MiB at most.
    static let cacheLimit = 32
    /// The most identifiers an identifier list may hold: a set of them costs several times their bytes.
    static let maximumIdentifiers = 100_000
    /// The most a list's body may hold, and the most its entries may inflate to: 1 MiB, 8 million entries
    /// of one bit. A list fetched from an issuer's URL is attacker-reachable input.
    static let maximumListBytes = 1 << 20

    public init(
        transport: any HTTPTransport, issuers: any CredentialIssuerKeys, cwtSigners: (any MDocIssuerKeys)? = nil,
        clock: any WallClock = SystemClock(),
        maximumAge: TimeInterval = 3600, deadline: Duration = .seconds(10)
    ) {
        self.deadline = deadline
        self.cwtSigners = cwtSigners
        self.transport = transport
        self.issuers = issuers
        self.clock = clock
        self.maximumAge = maximumAge
    }

    private static func refused(_ why: String) -> SwitchbackError {
        SwitchbackError(.presentationInvalid, "the credential's status cannot be confirmed: \(why)")
    }

    /// The status of the entry `reference` names: a Token Status List's entry, or for an identifier list
    /// INVALID when the credential's identifier is listed and VALID when it is not (ISO/IEC 18013-5 second
    /// edition).
    public func status(of reference: StatusReference) async throws -> UInt8 {
        switch (reference.entry, try await list(for: reference)) {
        case (.index(let index), .statuses(let list)):
            guard let status = list.status(at: index) else { throw Self.refused("its index is outside the status list") }
            return status
        case (.identifier(let identifier), .identifiers(let listed)):
            return listed.contains(identifier) ? StatusList.invalid : StatusList.valid
        default:
            throw Self.refused("the list at its uri is not the kind of list the credential names")
        }
    }

    /// The status of entry `index` of the list at `uri`, for a credential of `issuer`.
    ///
    /// For an mdoc, `issuer` is nil and `authorities` names the authorities (IACA key identifiers) that issued
    /// the credential: the list must be signed under one of them (ISO/IEC 18013-5 second edition §12.3.6.2),
    /// not merely under some anchor.
    ///
    /// `issuerChain` is an SD-JWT VC's own `x5c`: a list signed by a Status Issuer other than the credential's
    /// issuer is held to it (``CredentialIssuerKeys/statusListKeys(uri:issuer:credentialChain:certificates:keyID:)``).
    public func status(uri: String, index: Int, issuer: String?, authorities: Set<Data>? = nil, issuerChain: [Data] = []) async throws -> UInt8 {
        var reference = StatusReference(uri: uri, entry: .index(index), issuer: issuer, authorities: authorities)
        reference.issuerChain = issuerChain
        return try await status(of: reference)
    }

    /// The list `reference` names, from the cache while it is fresh.
    private func list(for reference: StatusReference) async throws -> FetchedList {
        let now = clock.now().timeIntervalSince1970
        let authorityKey = reference.authorities.map { $0.map(Base64URL.encode).sorted().joined(separator: ",") } ?? ""
        // By the credential's signing certificate and its MSO's trust point too: a list a Status Issuer signed
        // is taken for the issuer's certificates under that Status Issuer's CA (§11.3), and a list under one
        // trust point never for a credential naming another.
        let certificateKey = [reference.issuerChain.first, reference.trustPoint].map { $0.map { Base64URL.encode(SHA256.hash(data: $0)) } ?? "" }
        let kind = if case .identifier = reference.entry { "identifiers" } else { "statuses" }
        let cacheKey = ([kind, reference.issuer ?? "", authorityKey] + certificateKey + [reference.uri]).joined(separator: " ")
        if let kept = cache[cacheKey], kept.until > now { return kept.list }
        let (fetched, until) = try await Self.within(deadline) { try await self.fetch(reference, now: now) }
        cache = cache.filter { $0.value.until > now }
        if cache.count >= Self.cacheLimit, let oldest = cache.min(by: { $0.value.until < $1.value.until })?.key { cache[oldest] = nil }
        cache[cacheKey] = (fetched, until)
        return fetched
    }

    /// `body`'s result, or a refusal once `deadline` has passed, whether or not `body` (a transport that
    /// does not stop when cancelled) has returned by then; `body` is cancelled then.
    private static func within<Value: Sendable>(_ deadline: Duration, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let pending = LockedValue<CheckedContinuation<Value, any Error>?>(nil)
        let timer = LockedValue<Task<Void, Never>?>(nil)
        return try await withCheckedThrowingContinuation { continuation in
            pending.withLock { $0 = continuation }
            let work = Task {
                let result: Result<Value, any Error>
                do { result = .success(try await body()) } catch { result = .failure(error) }
                pending.withLock { $0.take() }?.resume(with: result)
                timer.withLock { $0 }?.cancel()
            }
            timer.withLock {
                $0 = Task {
                    try? await Task.sleep(for: deadline)
                    guard let waiting = pending.withLock({ $0.take() }) else { return }
                    work.cancel()
                    waiting.resume(throwing: refused("the status list did not arrive within \(deadline)"))
                }
            }
        }
    }

    private func fetch(_ reference: StatusReference, now: TimeInterval) async throws -> (FetchedList, TimeInterval) {
        let (uri, issuer, authorities) = (reference.uri, reference.issuer, reference.authorities)
        guard var url = URL(string: uri), url.scheme == "https", let host = url.host?.lowercased() else {
            throw Self.refused("the status list's uri is not https")
        }
        let identifiers = if case .identifier = reference.entry { true } else { false }
        let accept =
            identifiers
            ? "application/identifierlist+cwt"
            : cwtSigners == nil ? "application/statuslist+jwt" : "application/statuslist+cwt, application/statuslist+jwt;q=0.5"
        var response = HTTPResponse(status: 0)
        for _ in 0...3 {
            response = try await transport.send(HTTPRequest(method: .get, url: url, headers: ["Accept": accept]))
            guard (300..<400).contains(response.status) else { break }
            // Only on the list's own host: a redirect elsewhere would let whoever controls the list's URL make
            // the verifier call any address it can reach (an internal service), blind but with its requests.
            guard let location = response.headers.first(where: { $0.key.lowercased() == "location" })?.value,
                let next = URL(string: location, relativeTo: url)?.absoluteURL, next.scheme == "https", next.host?.lowercased() == host,
                next.port == url.port
            else { throw Self.refused("the status list redirects elsewhere than an https URL on its own host") }
            url = next
        }
        guard (200..<300).contains(response.status) else { throw Self.refused("the status list answered HTTP \(response.status)") }
        guard response.body.count <= Self.maximumListBytes else { throw Self.refused("the status list is larger than 1 MiB") }
        let contentType = response.headers.first { $0.key.lowercased() == "content-type" }?.value.lowercased() ?? ""
        if identifiers || contentType.hasPrefix("application/statuslist+cwt") {
            // A CWT list is an mdoc's: it never speaks for a credential that names an issuer URL.
            guard issuer == nil, authorities != nil else { throw Self.refused("a CWT status list answers only for an mdoc") }
            return try await fetchedCWT(response.body, reference: reference, now: now)
        }
        guard reference.trustPoint == nil else { throw Self.refused("a list under the certificate an mdoc names must be a CWT") }
        let token = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let jws = try CompactJWS(token, malformed: .presentationInvalid)
        guard jws.header.typ == "statuslist+jwt" else { throw Self.refused("the status list token's typ is not statuslist+jwt") }
        guard SigningAlgorithms.asymmetric.contains(jws.header.alg) else { throw Self.refused("the status list token's alg is not allowed") }
        try await issuers.statusListKeys(
            uri: uri, issuer: issuer, credentialChain: reference.issuerChain, certificates: jws.header.x5c, keyID: jws.header.kid
        )
        .verify(jws)
        if let authorities { try await requireAuthority(authorities, chain: jws.header.x5c).confirm?() }
        guard let claims = JSONReader.object(jws.payload) else { throw Self.refused("the status list token's payload is not a JSON object") }
        guard claims["sub"] == .string(uri) else { throw Self.refused("the status list token's sub is not the credential's uri (§5.1)") }
        guard case .number = claims["iat"] else { throw Self.refused("the status list token has no iat") }
        var until = now + maximumAge
        if case .number(let exp)? = claims["exp"] {
            guard exp > now else { throw Self.refused("the status list token has expired") }
            until = min(until, exp)
        }
        if case .number(let ttl)? = claims["ttl"], ttl > 0 { until = min(until, now + ttl) }
        guard case .object(let object)? = claims["status_list"], case .number(let bits)? = object["bits"], case .string(let lst)? = object["lst"]
        else { throw Self.refused("the status list token has no status_list with bits and lst") }
        return (.statuses(try StatusList(bits: Int(exactly: bits) ?? 0, lst: lst, limit: Self.maximumListBytes)), until)
    }

    /// A CWT Status List Token (§5.2): COSE_Sign1 (ES256) with `typ` (16) `application/statuslist+cwt` (ISO/IEC
    /// 18013-5's examples write `statuslist+cwt`), its `x5chain` (33) leading to the mdoc anchors; claims
    /// `sub` (2) the credential's URI, `iat` (6), `exp` (4), `ttl` (65534) and `status_list` (65533) with
    /// `bits` and `lst` as ZLIB bytes (§4.3). Labels as draft-ietf-oauth-status-list-20 §14.3 requests them.
    /// The list's signer, which must be under one of the credential's own authorities.
    private func requireAuthority(_ authorities: Set<Data>, chain: [Data]) async throws -> MDocSigner {
        guard let signers = cwtSigners else { throw Self.refused("this verifier has no mdoc authorities to hold the status list to") }
        let signer = try await signers.statusListSigner(certificates: chain)
        guard !authorities.isDisjoint(with: signer.authorities) else {
            throw Self.refused("the status list is not signed under the authority that issued the credential")
        }
        return signer
    }

    /// The list's signer: under the certificate the MSO names (`reference.trustPoint`, ISO/IEC 18013-5
    /// second edition: its top certificate signed by it), or else under one of the credential's own authorities.
    private func listSigner(_ reference: StatusReference, chain: [Data]) async throws -> MDocSigner {
        guard let signers = cwtSigners else { throw Self.refused("this verifier has no mdoc authorities to hold the status list to") }
        if let trustPoint = reference.trustPoint { return try await signers.statusListSigner(certificates: chain, trustPoint: trustPoint) }
        guard let authorities = reference.authorities else { throw Self.refused("a CWT status list answers only for an mdoc") }
        return try await requireAuthority(authorities, chain: chain)
    }

    /// A CWT list: a Status List Token (§5.2: `typ` (16) `application/statuslist+cwt`, claim `status_list`
    /// (65533) with `bits` and `lst` as ZLIB bytes, §4.3), or an Identifier List Token (ISO/IEC 18013-5 second
    /// edition, as the public implementations read it: `typ` `application/identifierlist+cwt`, claim
    /// `identifier_list` (65530) `{"identifiers": {bstr => map}, ? "aggregation_uri": tstr}`). Both COSE_Sign1
    /// (ES256) with the signer's `x5chain` (33) and claims `sub` (2) the credential's URI, `iat` (6), `exp` (4)
    /// and `ttl` (65534). Labels as draft-ietf-oauth-status-list-20 §14.3 requests them.
    private func fetchedCWT(_ body: Data, reference: StatusReference, now: TimeInterval) async throws -> (FetchedList, TimeInterval) {
        guard cwtSigners != nil else { throw Self.refused("the status list is a CWT, which this verifier did not ask for") }
        let identifiers = if case .identifier = reference.entry { true } else { false }
        let name = identifiers ? "identifier list token" : "status list token"
        let token: COSESign1
        do { token = try COSESign1(try CBOR.decode(body), name) } catch let error as CBORError {
            throw Self.refused("the CWT \(name) is not CBOR (\(error))")
        }
        let types = identifiers ? ["application/identifierlist+cwt", "identifierlist+cwt"] : ["application/statuslist+cwt", "statuslist+cwt"]
        guard let type = token.protectedHeader[.int(16)]?.text, types.contains(type) else {
            throw Self.refused("the CWT \(name)'s typ is not \(types[0])")
        }
        guard let payload = token.payload else { throw Self.refused("the CWT \(name) has no payload") }
        let chain = try MDocVerifier.certificates(token.header(33))
        let signer = try await listSigner(reference, chain: chain)
        try token.verify(key: signer.key, payload: payload, name)
        try await signer.confirm?()
        let claims: CBOR
        do { claims = try CBOR.decode(payload) } catch { throw Self.refused("the CWT \(name)'s claims are not CBOR") }
        guard claims[.int(2)] == .text(reference.uri) else { throw Self.refused("the \(name)'s sub is not the credential's uri (§5.2)") }
        guard let issuedAt = claims[.int(6)]?.int, Double(issuedAt) <= now + 60 else {
            throw Self.refused("the \(name) has no iat, or one to come")
        }
        // ISO/IEC 18013-5 second edition §12.3.6.3: an mdoc's list carries its exp, so an old one is not taken forever.
        guard let exp = claims[.int(4)]?.int else { throw Self.refused("the CWT \(name) has no exp") }
        guard Double(exp) > now else { throw Self.refused("the \(name) has expired") }
        var until = min(now + maximumAge, Double(exp))
        if let ttl = claims[.int(65534)]?.int, ttl > 0 { until = min(until, now + Double(ttl)) }
        if identifiers {
            guard case .map(let entries)? = claims[.int(65530)]?["identifiers"] else {
                throw Self.refused("the identifier list token has no identifier_list with identifiers")
            }
            guard entries.count <= Self.maximumIdentifiers else {
                throw Self.refused("the identifier list holds more than \(Self.maximumIdentifiers) identifiers")
            }
            var listed: Set<Data> = []
            for entry in entries {
                guard let identifier = entry.key.bytes, case .map = entry.value else {
                    throw Self.refused("the identifier list holds an identifier that is not a byte string, or its information not a map")
                }
                listed.insert(identifier)
            }
            return (.identifiers(listed), until)
        }
        guard let list = claims[.int(65533)], let bits = list["bits"]?.int, let lst = list["lst"]?.bytes else {
            throw Self.refused("the status list token has no status_list with bits and lst")
        }
        return (.statuses(try StatusList(bits: bits, compressed: lst, limit: Self.maximumListBytes)), until)
    }
}
