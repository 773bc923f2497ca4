public import Foundation

/// A Token Status List (draft-ietf-oauth-status-list-20 §4): `bits` per entry (1, 2, 4 or 8), entries packed
/// from the least significant bit of each byte (§4.1 step 3), the byte array compressed with DEFLATE in the
/// ZLIB format and base64url-encoded in `lst` (§4.2).
@_spi(SwitchbackInternals) public struct StatusList: Sendable, Equatable {
    /// The registered values (§7.1).
    public static let valid: UInt8 = 0
    public static let invalid: UInt8 = 1
    public static let suspended: UInt8 = 2

    public let bits: Int
    let bytes: [UInt8]

    /// Reads `lst`; `limit` bounds the inflated size.
    public init(bits: Int, lst: String, limit: Int = 16 << 20) throws {
        guard [1, 2, 4, 8].contains(bits) else { throw SwitchbackError(.presentationInvalid, "a status list's bits must be 1, 2, 4 or 8 (§4.2)") }
        guard let compressed = Base64URL.decode(lst) else { throw SwitchbackError(.presentationInvalid, "a status list's lst is not base64url") }
        do {
            bytes = try Inflate.zlib(compressed, limit: limit)
        } catch {
            throw SwitchbackError(.presentationInvalid, "a status list's lst does not inflate: \(error.description)")
        }
        self.bits = bits
    }

    /// The status at `index`, or nil past the end (§8.3 step 6: the token is then refused).
    public func status(at index: Int) -> UInt8? {
        let perByte = 8 / bits
        guard index >= 0, index / perByte < bytes.count else { return nil }
        return (bytes[index / perByte] >> ((index % perByte) * bits)) & UInt8((1 << bits) - 1)
    }
}

/// Checks a credential's status (draft-ietf-oauth-status-list-20 §8.3): the Status List Token at the
/// credential's `uri` is fetched (§8.1, `Accept: application/statuslist+jwt`, https, up to three https
/// redirects), its `typ` must be `statuslist+jwt` and its signature by keys of the credential's own issuer
/// (as `CredentialIssuerKeys` gives them; §11.3's first way), its `sub` the `uri`, its `exp` in the future;
/// then the index must be inside the list. A token is kept until its `exp`, its `ttl` or `maximumAge`,
/// whichever is first (§8.2). Any failure means nothing is known of the status, and the credential is
/// refused (§8.3).
@_spi(SwitchbackInternals) public actor StatusListChecker {
    private let transport: any HTTPTransport
    private let issuers: any CredentialIssuerKeys
    private let clock: any WallClock
    private let maximumAge: TimeInterval
    /// By issuer and `uri`: a list is taken for the issuer whose keys verified it, never for another.
    private var cache: [String: (list: StatusList, until: TimeInterval)] = [:]
    /// Lists kept at most; the oldest is dropped for a new one.
    static let cacheLimit = 64

    public init(
        transport: any HTTPTransport, issuers: any CredentialIssuerKeys, clock: any WallClock = SystemClock(), maximumAge: TimeInterval = 3600
    ) {
        self.transport = transport
        self.issuers = issuers
        self.clock = clock
        self.maximumAge = maximumAge
    }

    private static func refused(_ why: String) -> SwitchbackError {
        SwitchbackError(.presentationInvalid, "the credential's status cannot be confirmed: \(why)")
    }

    /// The status of entry `index` of the list at `uri`, for a credential of `issuer`.
    public func status(uri: String, index: Int, issuer: String?) async throws -> UInt8 {
        let now = clock.now().timeIntervalSince1970
        let list: StatusList
        let cacheKey = (issuer ?? "") + " " + uri
        if let kept = cache[cacheKey], kept.until > now {
            list = kept.list
        } else {
            let (fetched, until) = try await fetch(uri, issuer: issuer, now: now)
            cache = cache.filter { $0.value.until > now }
            if cache.count >= Self.cacheLimit, let oldest = cache.min(by: { $0.value.until < $1.value.until })?.key { cache[oldest] = nil }
            cache[cacheKey] = (fetched, until)
            list = fetched
        }
        guard let status = list.status(at: index) else { throw Self.refused("its index is outside the status list") }
        return status
    }

    private func fetch(_ uri: String, issuer: String?, now: TimeInterval) async throws -> (StatusList, TimeInterval) {
        guard var url = URL(string: uri), url.scheme == "https" else { throw Self.refused("the status list's uri is not https") }
        var response = HTTPResponse(status: 0)
        for _ in 0...3 {
            response = try await transport.send(HTTPRequest(method: .get, url: url, headers: ["Accept": "application/statuslist+jwt"]))
            guard (300..<400).contains(response.status) else { break }
            guard let location = response.headers.first(where: { $0.key.lowercased() == "location" })?.value,
                let next = URL(string: location, relativeTo: url)?.absoluteURL, next.scheme == "https"
            else { throw Self.refused("the status list redirects to no https URL") }
            url = next
        }
        guard (200..<300).contains(response.status), response.body.count <= 4 << 20 else {
            throw Self.refused("the status list answered HTTP \(response.status)")
        }
        let token = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let jws = try CompactJWS(token, malformed: .presentationInvalid)
        guard jws.header.typ == "statuslist+jwt" else { throw Self.refused("the status list token's typ is not statuslist+jwt") }
        guard SigningAlgorithms.asymmetric.contains(jws.header.alg) else { throw Self.refused("the status list token's alg is not allowed") }
        try await issuers.keys(issuer: issuer, certificates: jws.header.x5c, keyID: jws.header.kid).verify(jws)
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
        return (try StatusList(bits: Int(exactly: bits) ?? 0, lst: lst), until)
    }
}
