public import Foundation
import Crypto
@_spi(SwitchbackInternals) public import Switchback

/// Where an mdoc's document signer key comes from: the `x5chain` of its `issuerAuth` (ISO/IEC 18013-5
/// §9.1.2.4), validated to one of the verifier's trust anchors (IACA roots, §9.3.3).
public protocol MDocIssuerKeys: Sendable {
    /// The document signer that heads `certificates` (DER, leaf first), once the chain leads to a trust
    /// anchor. Throws ``SwitchbackError/Code/presentationInvalid`` otherwise.
    func documentSigner(certificates: [Data]) async throws -> MDocSigner
    /// The signer of a status list under the same anchors: as ``documentSigner(certificates:)`` but for
    /// what is asked of a document signer alone (its extended key usage). By default the same.
    func statusListSigner(certificates: [Data]) async throws -> MDocSigner
    /// The signer of a status or identifier list whose top certificate must be signed by `trustPoint` (DER),
    /// the certificate an mdoc's MSO names for its list (ISO/IEC 18013-5 second edition). By default refused.
    func statusListSigner(certificates: [Data], trustPoint: Data) async throws -> MDocSigner
}

extension MDocIssuerKeys {
    public func statusListSigner(certificates: [Data]) async throws -> MDocSigner {
        try await documentSigner(certificates: certificates)
    }

    public func statusListSigner(certificates: [Data], trustPoint: Data) async throws -> MDocSigner {
        throw SwitchbackError(
            .presentationInvalid, "the mdoc is refused: this verifier does not take a status list under a certificate the MSO names")
    }
}

/// A document signer whose chain was validated: its key, and the authorities it was validated under.
public struct MDocSigner: Sendable {
    /// The P-256 key, X9.63 form.
    public var key: Data
    /// The key identifiers of the issuing certificates on its validated path (the IACA): what a query's
    /// `trusted_authorities` names, and what the mdoc's status list must be signed under.
    public var authorities: Set<Data>
    /// What remains to check of the signer once its signature verified (its IACA's revocation list): run
    /// only then, so that a certificate copied into a forged answer costs no fetch.
    public var confirm: (@Sendable () async throws -> Void)?

    public init(key: Data, authorities: Set<Data>, confirm: (@Sendable () async throws -> Void)? = nil) {
        self.key = key
        self.authorities = authorities
        self.confirm = confirm
    }
}

/// Verifies an ISO/IEC 18013-5 mdoc presented through OpenID4VP 1.0 (`mso_mdoc`, Appendix B.2): the
/// `vp_token` entry is a base64url `DeviceResponse` holding one document, whose
/// - `issuerAuth` (COSE_Sign1, ES256) is signed by a document signer certificate that leads to a trust anchor;
/// - Mobile Security Object names the document's `docType`, is valid now, and holds the digest of every
///   disclosed data element (ISO/IEC 18013-5 §9.3.1);
/// - `deviceSignature` (COSE_Sign1, ES256, detached) is made by the MSO's device key over
///   `DeviceAuthentication` with this request's `SessionTranscript` (OpenID4VP 1.0 §B.2.6.1): client
///   identifier, nonce, the thumbprint of the response encryption key, and the response URI.
///
/// Only ES256 is taken, for both signatures (HAIP 1.0 §7 requires every party to take it); `deviceMac` is refused,
/// since a redirect request offers no reader key to agree one with. A `status` is checked in its Token
/// Status List when a checker is given, and refused otherwise. The disclosed claims come back as
/// `{namespace: {element: value}}`, the shape OpenID4VP 1.0 §7.2's claims paths select from.
public struct MDocVerifier: Sendable {
    /// What the device signature must be over (OpenID4VP 1.0 §B.2.6.1, redirects).
    public struct SessionBinding: Sendable {
        public var clientID: String
        public var nonce: String
        /// The RFC 7638 SHA-256 thumbprint of the key the response was encrypted to; nil for a plain response.
        public var encryptionKeyThumbprint: Data?
        public var responseURI: String

        public init(clientID: String, nonce: String, encryptionKeyThumbprint: Data?, responseURI: String) {
            self.clientID = clientID
            self.nonce = nonce
            self.encryptionKeyThumbprint = encryptionKeyThumbprint
            self.responseURI = responseURI
        }

        /// `SessionTranscript` = [null, null, ["OpenID4VPHandover", SHA-256(OpenID4VPHandoverInfo)]].
        public var sessionTranscript: CBOR {
            .array([.null, .null, .array([.text("OpenID4VPHandover"), .bytes(Data(SHA256.hash(data: handoverInfo.encoded)))])])
        }

        /// `OpenID4VPHandoverInfo` = [clientId, nonce, jwkThumbprint or null, responseUri].
        var handoverInfo: CBOR {
            .array([.text(clientID), .text(nonce), encryptionKeyThumbprint.map(CBOR.bytes) ?? .null, .text(responseURI)])
        }
    }

    let issuers: any MDocIssuerKeys
    let clock: any WallClock
    let clockSkew: TimeInterval
    /// Checks an MSO's `status` (a Token Status List reference); without one, an mdoc that has a status is
    /// refused, since nothing can be said of it.
    let statusLists: StatusListChecker?

    public init(
        issuers: any MDocIssuerKeys, clock: any WallClock = SystemClock(), clockSkew: TimeInterval = 60, statusLists: StatusListChecker? = nil
    ) {
        self.issuers = issuers
        self.clock = clock
        self.clockSkew = clockSkew
        self.statusLists = statusLists
    }

    /// A base64url `DeviceResponse` is at most this long: a document with a portrait and its chain.
    static let maximumLength = 192 * 1024

    static func refused(_ why: String) -> SwitchbackError { SwitchbackError(.presentationInvalid, "the mdoc is refused: \(why)") }

    /// Verifies `presentation` (base64url `DeviceResponse`) for the request `binding` describes.
    public func verify(_ presentation: String, binding: SessionBinding, status: StatusCheck = .now) async throws -> VerifiedPresentation {
        guard presentation.utf8.count <= Self.maximumLength, let bytes = Base64URL.decode(presentation) else {
            throw Self.refused("it is not base64url (or is too long)")
        }
        return try await verify(
            deviceResponse: try Self.decode(bytes, "the DeviceResponse"), sessionTranscript: binding.sessionTranscript, status: status)
    }

    /// Verifies a decoded `DeviceResponse` whose device signature must cover `sessionTranscript` (OpenID4VP's,
    /// or another protocol's, such as Apple's Verify with Wallet).
    public func verify(deviceResponse response: CBOR, sessionTranscript: CBOR, status: StatusCheck = .now) async throws -> VerifiedPresentation {
        guard response["version"]?.text?.hasPrefix("1.") == true else { throw Self.refused("its DeviceResponse version is not 1.x") }
        guard response["status"] == .unsigned(0) else { throw Self.refused("its DeviceResponse status is not OK (0)") }
        guard let documents = response["documents"]?.array, documents.count == 1, let document = documents.first else {
            throw Self.refused("its DeviceResponse does not hold exactly one document")
        }
        guard let docType = document["docType"]?.text else { throw Self.refused("the document has no docType") }
        guard let issuerSigned = document["issuerSigned"], let deviceSigned = document["deviceSigned"] else {
            throw Self.refused("the document lacks issuerSigned or deviceSigned")
        }

        // Issuer data authentication (ISO/IEC 18013-5 §9.3.1): the MSO's signature, then what it says.
        let issuerAuth = try COSESign1(issuerSigned["issuerAuth"], "issuerAuth")
        let chain = try Self.certificates(issuerAuth.header(33))
        let signer = try await issuers.documentSigner(certificates: chain)
        guard let payload = issuerAuth.payload else { throw Self.refused("its issuerAuth has no payload") }
        try issuerAuth.verify(key: signer.key, payload: payload, "issuerAuth")
        try await signer.confirm?()
        let mso = try Self.decode(try Self.embedded(try Self.decode(payload, "the MSO"), "the MSO"), "the MSO")
        guard mso["version"]?.text == "1.0" else { throw Self.refused("its MSO version is not 1.0") }
        guard mso["docType"]?.text == docType else { throw Self.refused("its MSO is for another docType") }
        try checkValidity(mso["validityInfo"])
        let digest = try Self.digest(mso["digestAlgorithm"]?.text)
        let claims = try Self.disclosed(issuerSigned["nameSpaces"], digests: mso["valueDigests"], digest: digest)

        // mdoc authentication (§9.1.3): the device key signs this request's transcript.
        guard let deviceKey = mso["deviceKeyInfo"]?["deviceKey"] else { throw Self.refused("its MSO has no device key") }
        let holderKey = try Self.publicKey(deviceKey)
        guard let deviceNameSpaces = deviceSigned["nameSpaces"], deviceNameSpaces.embedded != nil else {
            throw Self.refused("its deviceSigned nameSpaces are not embedded CBOR")
        }
        guard let deviceAuth = deviceSigned["deviceAuth"], deviceAuth["deviceMac"] == nil else {
            throw Self.refused("it authenticates the device with a MAC, which needs a reader key this request has not")
        }
        let deviceSignature = try COSESign1(deviceAuth["deviceSignature"], "deviceSignature")
        guard deviceSignature.payload == nil else { throw Self.refused("its deviceSignature carries its payload instead of leaving it detached") }
        let deviceAuthentication = CBOR.array([.text("DeviceAuthentication"), sessionTranscript, .text(docType), deviceNameSpaces])
        try deviceSignature.verify(
            key: holderKey, payload: CBOR.tagged(24, .bytes(deviceAuthentication.encoded)).encoded, "deviceSignature")
        // Last, as for an SD-JWT VC: a credential its holder did not present here makes no one fetch anything.
        var verified = VerifiedPresentation(
            claims: claims, type: docType, keyBound: true, format: "mso_mdoc", issuerChain: chain, issuerAuthorities: signer.authorities)
        if let reference = mso["status"] {
            let pending = try statusReference(reference, authorities: signer.authorities)
            switch status {
            case .now: try StatusList.requireValid(try await self.status(of: pending), Self.refused)
            case .later: verified.pendingStatus = pending
            }
        }
        return verified
    }

    /// The MSO's `status` (ISO/IEC 18013-5 second edition, HAIP 1.0 §5.3.1): exactly one of a Token Status List
    /// reference `{"status_list": {"idx", "uri", ? "certificate"}}` and an identifier list reference
    /// `{"identifier_list": {"id", "uri", ? "certificate"}}`, `id` a byte string (a plugtest credential writing
    /// it as an integer was found non-conformant), `certificate` the DER certificate the list's signer must lead
    /// to instead of the IACA.
    private func statusReference(_ status: CBOR, authorities: Set<Data>) throws -> StatusReference {
        let mechanisms = [status["status_list"], status["identifier_list"]].compactMap { $0 }
        guard case .map(let pairs) = status, pairs.count == 1, mechanisms.count == 1, let mechanism = mechanisms.first,
            let uri = mechanism["uri"]?.text
        else {
            throw Self.refused("its status is not one status_list or identifier_list reference with a uri")
        }
        let entry: StatusReference.Entry
        if let index = mechanism["idx"]?.int, index >= 0, status["status_list"] != nil {
            entry = .index(index)
        } else if let id = mechanism["id"]?.bytes, !id.isEmpty, status["identifier_list"] != nil {
            entry = .identifier(id)
        } else {
            throw Self.refused("its status_list has no idx, or its identifier_list no id as a byte string")
        }
        var reference = StatusReference(uri: uri, entry: entry, issuer: nil, authorities: authorities)
        if let certificate = mechanism["certificate"] {
            guard let der = certificate.bytes, !der.isEmpty else { throw Self.refused("its status certificate is not a byte string") }
            reference.trustPoint = der
        }
        guard statusLists != nil else { throw Self.refused("it has a status this verifier is not set up to check") }
        return reference
    }

    /// The status an mdoc this verifier left to be read (``StatusCheck/later``) has in its list; throws when
    /// it cannot be known.
    public func status(of reference: StatusReference) async throws -> UInt8 {
        guard let statusLists else { throw Self.refused("it has a status this verifier is not set up to check") }
        return try await statusLists.status(of: reference)
    }

    /// `validityInfo` (§9.1.2.4): `validFrom` ≤ now ≤ `validUntil`, with the clock skew allowed.
    private func checkValidity(_ info: CBOR?) throws {
        guard let from = info?["validFrom"].flatMap(Self.date), let until = info?["validUntil"].flatMap(Self.date) else {
            throw Self.refused("its MSO has no validFrom and validUntil dates")
        }
        let now = clock.now()
        guard from.timeIntervalSince(now) <= clockSkew else { throw Self.refused("its MSO is not valid yet") }
        guard now.timeIntervalSince(until) <= clockSkew else { throw Self.refused("its MSO has expired") }
    }

    /// The disclosed elements, each checked against its digest in the MSO: `{namespace: {element: value}}`.
    private static func disclosed(_ nameSpaces: CBOR?, digests: CBOR?, digest: (Data) -> Data) throws -> [String: JSONValue] {
        guard case .map(let spaces)? = nameSpaces, !spaces.isEmpty else { throw refused("it discloses no nameSpaces") }
        var claims: [String: JSONValue] = [:]
        for space in spaces {
            guard let name = space.key.text, let items = space.value.array, !items.isEmpty, let known = digests?[name] else {
                throw refused("a namespace is malformed, or has no digests in the MSO")
            }
            var elements: [String: JSONValue] = [:]
            for wrapped in items {
                // The digest is over IssuerSignedItemBytes as sent: the tag-24 item (§9.1.2.5).
                guard let inner = wrapped.embedded else { throw refused("an IssuerSignedItem is not embedded CBOR") }
                let item = try decode(inner, "an IssuerSignedItem")
                guard let id = item["digestID"], case .unsigned = id, let element = item["elementIdentifier"]?.text,
                    let value = item["elementValue"], let random = item["random"]?.bytes, random.count >= 16
                else { throw refused("an IssuerSignedItem lacks digestID, random (16+ bytes), elementIdentifier or elementValue") }
                // Digests are public (they are in the signed MSO): a plain comparison.
                guard known[id]?.bytes == digest(wrapped.encoded) else {
                    throw refused("\(name.prefix(60)) \(element.prefix(40)) does not match its digest in the MSO")
                }
                guard elements[element] == nil else { throw refused("\(element.prefix(40)) is disclosed twice") }
                elements[element] = json(value)
            }
            claims[name] = .object(elements)
        }
        return claims
    }

    /// A data element as JSON: byte strings as base64url, dates (tags 0 and 1004) as their text.
    static func json(_ value: CBOR) -> JSONValue {
        switch value {
        case .unsigned(let number): .number(Double(number))
        case .negative(let number): .number(-1 - Double(number))
        case .bytes(let data): .string(Base64URL.encode(data))
        case .text(let text): .string(text)
        case .array(let items): .array(items.map(json))
        case .map(let pairs):
            .object(
                Dictionary(
                    pairs.map { (($0.key.text ?? $0.key.int.map(String.init)) ?? "?", json($0.value)) }, uniquingKeysWith: { first, _ in first }))
        case .tagged(_, let inner): json(inner)
        case .bool(let flag): .bool(flag)
        case .null, .undefined: .null
        case .float(let number): number.isFinite ? .number(number) : .null
        }
    }

    /// A `tdate` (tag 0, RFC 3339 text), as `validityInfo` writes its dates.
    static func date(_ value: CBOR) -> Date? {
        guard case .tagged(0, .text(let text)) = value else { return nil }
        return RFC3339.date(text)
    }

    /// The digest function the MSO names (§9.1.2.5).
    static func digest(_ name: String?) throws -> (Data) -> Data {
        switch name {
        case "SHA-256": { Data(SHA256.hash(data: $0)) }
        case "SHA-384": { Data(SHA384.hash(data: $0)) }
        case "SHA-512": { Data(SHA512.hash(data: $0)) }
        default: throw refused("its MSO digest algorithm is not SHA-256, SHA-384 or SHA-512")
        }
    }

    /// An EC2 P-256 COSE_Key (RFC 9053 §7.1): kty 2, crv 1, 32-byte x and y.
    static func publicKey(_ key: CBOR) throws -> Data {
        guard key[.int(1)] == .int(2), key[.int(-1)] == .int(1), let x = key[.int(-2)]?.bytes, let y = key[.int(-3)]?.bytes, x.count == 32,
            y.count == 32
        else { throw refused("its device key is not a P-256 COSE_Key") }
        return Data([4]) + x + y
    }

    /// `x5chain` (RFC 9360 §2): one certificate as a byte string, or several in an array, leaf first.
    static func certificates(_ value: CBOR?) throws -> [Data] {
        switch value {
        case .bytes(let one)?: return [one]
        case .array(let items)? where !items.isEmpty && items.count <= 8:
            return try items.map {
                guard let der = $0.bytes else { throw refused("its x5chain holds something other than certificates") }
                return der
            }
        default: throw refused("its issuerAuth carries no x5chain")
        }
    }

    static func decode(_ bytes: Data, _ what: String) throws -> CBOR {
        do { return try CBOR.decode(bytes) } catch let error as CBORError { throw refused("\(what) is not CBOR: \(error)") }
    }

    static func embedded(_ value: CBOR, _ what: String) throws -> Data {
        guard let inner = value.embedded else { throw refused("\(what) is not embedded CBOR (tag 24)") }
        return inner
    }
}

/// A COSE_Sign1 structure (RFC 9052 §4.2), tagged (18) or not.
struct COSESign1 {
    let protectedBytes: Data
    let protectedHeader: CBOR
    let unprotectedHeader: CBOR
    let payload: Data?
    let signature: Data

    init(_ value: CBOR?, _ what: String) throws {
        var value = value
        if case .tagged(18, let inner)? = value { value = inner }
        guard let parts = value?.array, parts.count == 4, let protectedBytes = parts[0].bytes, case .map = parts[1],
            let signature = parts[3].bytes
        else { throw MDocVerifier.refused("its \(what) is not a COSE_Sign1") }
        self.protectedBytes = protectedBytes
        protectedHeader = protectedBytes.isEmpty ? .map([]) : try MDocVerifier.decode(protectedBytes, "the \(what) header")
        unprotectedHeader = parts[1]
        switch parts[2] {
        case .bytes(let data): payload = data
        case .null: payload = nil
        default: throw MDocVerifier.refused("its \(what) payload is neither bytes nor detached")
        }
        self.signature = signature
        guard case .map = protectedHeader else { throw MDocVerifier.refused("its \(what) protected header is not a map") }
    }

    /// A header parameter, protected first (RFC 9052 §3).
    func header(_ label: Int) -> CBOR? { protectedHeader[.int(label)] ?? unprotectedHeader[.int(label)] }

    /// Checks the ES256 signature (alg -7, or -9 for ECDSA on P-256 with SHA-256 fully specified; protected)
    /// over `Sig_structure` with `payload` (RFC 9052 §4.4). A `crit` header is refused: it would name
    /// parameters this verifier must understand, and it understands none beyond these (RFC 9052 §3.1).
    func verify(key x963: Data, payload: Data, _ what: String) throws {
        guard protectedHeader[.int(2)] == nil else { throw MDocVerifier.refused("its \(what) has critical header parameters (crit)") }
        guard protectedHeader[.int(1)] == .int(-7) || protectedHeader[.int(1)] == .int(-9) else {
            throw MDocVerifier.refused("its \(what) is not ES256 (alg -7 or -9, protected)")
        }
        let structure = CBOR.array([.text("Signature1"), .bytes(protectedBytes), .bytes(Data()), .bytes(payload)]).encoded
        guard let key = try? P256.Signing.PublicKey(x963Representation: x963),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            key.isValidSignature(ecdsa, for: structure)
        else { throw MDocVerifier.refused("its \(what) signature does not verify") }
    }
}

/// RFC 3339 §5.6 `date-time`, read by hand: Foundation's `ISO8601DateFormatter` cost 70% of an mdoc's
/// verification (Documentation/Decisions/0011-rfc3339-date-reader.md). `YYYY-MM-DDTHH:MM:SS`, an optional fraction, and `Z` or `±HH:MM`; `t`, `z`
/// and a space for `T` as §5.6 allows; a leap second is refused, as Foundation refuses it.
enum RFC3339 {
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ allowed: Set<UInt8>) -> Bool {
            guard index < bytes.count, allowed.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect([0x2D]), let month = number(2), expect([0x2D]), let day = number(2), expect([0x54, 0x74, 0x20]),
            let hour = number(2), expect([0x3A]), let minute = number(2), expect([0x3A]), let second = number(2)
        else { return nil }
        var fraction = 0.0
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if expect([0x5A, 0x7A]) {
            offset = 0
        } else if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D {
            let sign = bytes[index] == 0x2B ? 1 : -1
            index += 1
            guard let hours = number(2), expect([0x3A]), let minutes = number(2), hours <= 23, minutes <= 59 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard index == bytes.count, (1...12).contains(month), (1...days[month - 1]).contains(day), hour <= 23, minute <= 59, second <= 59 else {
            return nil
        }
        // Days from 1970-01-01 to the civil date (the proleptic Gregorian calendar).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let epochDays = era * 146_097 + dayOfEra - 719_468
        let seconds = Double(epochDays * 86400 + hour * 3600 + minute * 60 + second - offset) + fraction
        return Date(timeIntervalSince1970: seconds)
    }
}
