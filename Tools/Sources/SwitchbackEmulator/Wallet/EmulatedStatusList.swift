public import Foundation
public import Crypto
@_spi(SwitchbackInternals) public import Switchback
import SwitchbackVerification

/// The emulated issuer's Token Status List (draft-ietf-oauth-status-list-20): one list at
/// `https://<issuer host>/status/1`, one bit per credential, the credentials the wallet holds as revoked
/// set to INVALID. The token is `statuslist+jwt`, signed with the issuer's key and its certificate in `x5c`,
/// `sub` the list's URI (§5.1), the list DEFLATE-compressed in the ZLIB format (stored blocks: valid, if
/// not small) and base64url (§4.2).
extension EmulatedIssuer {
    /// Where the issuer publishes its status list: on its own host, or on its Status Issuer's, which the Status
    /// Issuer's certificate names.
    public var statusListURI: String {
        (statusIssuer == nil ? issuer : issuer.replacingOccurrences(of: "https://", with: "https://status.")) + "/status/1"
    }

    /// The status list token with the entries at `revoked` set to INVALID, among `size` entries; signed by
    /// `signer` with `chain` as its `x5c` (leaf first), by default by the Status Issuer if the issuer has one,
    /// else by the issuer itself.
    public func statusListToken(
        revoked: Set<Int>, size: Int = 16, issuedAt: Date = Date(), signer: P256.Signing.PrivateKey? = nil, chain: [Data]? = nil
    ) throws -> String {
        var bytes = [UInt8](repeating: 0, count: (size + 7) / 8)
        for index in revoked where index < size { bytes[index / 8] |= 1 << UInt8(index % 8) }
        let payload: [String: JSONValue] = [
            "sub": .string(statusListURI), "iat": .number(issuedAt.timeIntervalSince1970.rounded(.down)), "ttl": .number(300),
            "status_list": .object(["bits": .number(1), "lst": .string(Base64URL.encode(Self.zlibStored(bytes)))]),
        ]
        let chain = chain ?? [statusIssuer?.certificate ?? authority.leaf]
        let header: [String: JSONValue] = ["alg": "ES256", "typ": "statuslist+jwt", "x5c": .array(chain.map { .string($0.base64EncodedString()) })]
        return try JWS.sign(header, payload, with: signer ?? statusIssuer?.key ?? authority.key)
    }

    /// The same list as a CWT Status List Token (draft-ietf-oauth-status-list-20 §5.2), as an mdoc issuer
    /// publishes it (ISO/IEC 18013-5 second edition): COSE_Sign1 tagged 18, `typ` and `x5chain` protected,
    /// claims `sub` (2), `iat` (6), `exp` (4), `ttl` (65534) and `status_list` (65533) with `lst` as ZLIB bytes.
    package func statusListCWT(revoked: Set<Int>, size: Int = 16, issuedAt: Date = Date()) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: (size + 7) / 8)
        for index in revoked where index < size { bytes[index / 8] |= 1 << UInt8(index % 8) }
        let claims = CBOR.map([
            .init(.int(2), .text(statusListURI)), .init(.int(6), .int(Int(issuedAt.timeIntervalSince1970))),
            .init(.int(4), .int(Int(issuedAt.timeIntervalSince1970) + 86400)), .init(.int(65534), .int(300)),
            .init(.int(65533), .map([.init("bits", .int(1)), .init("lst", .bytes(Self.zlibStored(bytes)))])),
        ])
        let token = try COSE.sign1(
            payload: claims.encoded,
            protected: [.init(.int(16), "application/statuslist+cwt"), .init(.int(33), .bytes(authority.leaf))], with: authority.key)
        return CBOR.tagged(18, token).encoded
    }

    /// Where the issuer publishes its mdocs' identifier list (ISO/IEC 18013-5 second edition).
    public var identifierListURI: String { issuer + "/identifiers/1" }

    /// The identifier list: an Identifier List Token listing the `revoked` identifiers, as the public
    /// implementations of ISO/IEC 18013-5 second edition write it (Multipaz's `IdentifierList`, A-SIT Plus's
    /// `CwtIdentifierListClaim`): COSE_Sign1 tagged 18, `typ` `application/identifierlist+cwt` and `x5chain`
    /// protected, claims `sub` (2), `iat` (6), `exp` (4), `ttl` (65534) and `identifier_list` (65530)
    /// `{"identifiers": {id => {}}}`. Signed by `signer` with `chain`, by default by the issuer's document signer.
    package func identifierListCWT(
        revoked: Set<Data>, issuedAt: Date = Date(), signer: P256.Signing.PrivateKey? = nil, chain: [Data]? = nil
    ) throws -> Data {
        let claims = CBOR.map([
            .init(.int(2), .text(identifierListURI)), .init(.int(6), .int(Int(issuedAt.timeIntervalSince1970))),
            .init(.int(4), .int(Int(issuedAt.timeIntervalSince1970) + 86400)), .init(.int(65534), .int(300)),
            .init(
                .int(65530),
                .map([.init("identifiers", .map(revoked.sorted { $0.lexicographicallyPrecedes($1) }.map { .init(.bytes($0), .map([])) }))])),
        ])
        let chain = chain ?? [authority.leaf]
        let x5chain: CBOR = chain.count == 1 ? .bytes(chain[0]) : .array(chain.map(CBOR.bytes))
        let token = try COSE.sign1(
            payload: claims.encoded, protected: [.init(.int(16), "application/identifierlist+cwt"), .init(.int(33), x5chain)],
            with: signer ?? authority.key)
        return CBOR.tagged(18, token).encoded
    }

    /// `bytes` in the ZLIB format (RFC 1950) with one stored DEFLATE block (RFC 1951 §3.2.4).
    static func zlibStored(_ bytes: [UInt8]) -> Data {
        var out = Data([0x78, 0x01, 0x01])
        let length = UInt16(bytes.count)
        out.append(contentsOf: [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)])
        out.append(contentsOf: bytes)
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = b << 16 | a
        out.append(contentsOf: [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)])
        return out
    }
}

/// A transport that answers the emulated issuer's status list itself (the issuer's https host exists only
/// here) and sends everything else on: what the companion fetches status lists with in the emulated
/// ecosystem.
///
/// It also publishes the issuer root's revocation list at ``EmulatedIssuer/revocationListURI``, listing the
/// document signer when `revokedSigner`.
public struct StatusListHosting: HTTPTransport {
    let issuer: EmulatedIssuer
    let revoked: Set<Int>
    let revokedSigner: Bool
    let revokedIdentifiers: Set<Data>
    let next: any HTTPTransport

    /// Serves the status list with the entries `revoked` INVALID, and the identifier list with
    /// `revokedIdentifiers` (by default the wallet's revoked mdoc's) listed.
    public init(
        _ issuer: EmulatedIssuer, revoked: Set<Int>, revokedSigner: Bool = false, revokedIdentifiers: Set<Data> = [EmulatedWallet.revokedIdentifier],
        next: any HTTPTransport
    ) {
        self.issuer = issuer
        self.revoked = revoked
        self.revokedSigner = revokedSigner
        self.revokedIdentifiers = revokedIdentifiers
        self.next = next
    }

    /// The list in the form the request's `Accept` prefers: CWT when it names it first, else JWT.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if request.method == .get, request.url.absoluteString == issuer.revocationListURI {
            return HTTPResponse(
                status: 200, headers: ["Content-Type": "application/pkix-crl"],
                body: try issuer.authority.revocationList(revokingLeaf: revokedSigner).der())
        }
        if request.method == .get, request.url.absoluteString == issuer.identifierListURI {
            return HTTPResponse(
                status: 200, headers: ["Content-Type": "application/identifierlist+cwt"],
                body: try issuer.identifierListCWT(revoked: revokedIdentifiers))
        }
        guard request.method == .get, request.url.absoluteString == issuer.statusListURI else { return try await next.send(request) }
        let accept = request.headers.first { $0.key.lowercased() == "accept" }?.value ?? ""
        if accept.hasPrefix("application/statuslist+cwt") {
            return HTTPResponse(
                status: 200, headers: ["Content-Type": "application/statuslist+cwt"], body: try issuer.statusListCWT(revoked: revoked))
        }
        return HTTPResponse(
            status: 200, headers: ["Content-Type": "application/statuslist+jwt"], body: Data(try issuer.statusListToken(revoked: revoked).utf8))
    }
}
