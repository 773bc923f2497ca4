import Crypto
import Foundation
import SwiftASN1
import X509
@_spi(SwitchbackInternals) import Switchback

/// An X.509 certificate revocation list (RFC 5280 §5.1): what an IACA publishes at the distribution point
/// its document signer certificates name (ISO/IEC 18013-5 Annex B, Table B.4, `CRLDistributionPoints`).
/// Read from DER; ``verify(issuer:now:)`` checks it before its entries are believed.
struct RevocationList: Sendable {
    /// Why a list was not read or not believed: the text names the rule, never the bytes.
    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// The DER of `tbsCertList`, which the signature covers.
    let signed: ArraySlice<UInt8>
    let algorithm: ASN1ObjectIdentifier
    /// `tbsCertList.signature`, which must name the same algorithm as the outer one (§5.1.1.2).
    let innerAlgorithm: ASN1ObjectIdentifier
    let signature: ArraySlice<UInt8>
    let issuer: DistinguishedName
    let thisUpdate: Date
    let nextUpdate: Date?
    /// The revoked serial numbers, leading zero bytes dropped.
    let revoked: Set<[UInt8]>
    /// A critical extension of the list or of an entry that this reader does not act on: an issuing
    /// distribution point, a delta-CRL indicator, an indirect list's certificate issuer. Such a list is not
    /// used (§5.2, §5.3: a list with an unrecognised critical extension must not be used to decide status).
    let unhandledCritical: ASN1ObjectIdentifier?

    /// The most a list may hold here, in bytes: a document signer list names few certificates.
    static let maximumBytes = 1 << 20

    init(der: [UInt8]) throws {
        guard der.count <= Self.maximumBytes else { throw Refused(description: "the revocation list is larger than \(Self.maximumBytes) bytes") }
        do {
            let root = try DER.parse(der)
            guard root.encodedBytes.count == der.count else { throw Refused(description: "the revocation list has bytes after its end") }
            var parts: (ArraySlice<UInt8>, ASN1ObjectIdentifier, ArraySlice<UInt8>)?
            var body: ASN1Node?
            try DER.sequence(root, identifier: .sequence) { nodes in
                guard let tbs = nodes.next(), let algorithm = nodes.next(), let signature = nodes.next(), nodes.next() == nil else {
                    throw Refused(description: "the revocation list is not a CertificateList")
                }
                parts = (tbs.encodedBytes, try Self.algorithm(algorithm), try ASN1BitString(derEncoded: signature).bytes)
                body = tbs
            }
            guard let (signed, algorithm, signature) = parts, let body else {
                throw Refused(description: "the revocation list is not a CertificateList")
            }
            self.signed = signed
            self.algorithm = algorithm
            self.signature = signature
            var fields: (ASN1ObjectIdentifier, DistinguishedName, Date, Date?, Set<[UInt8]>, ASN1ObjectIdentifier?)?
            try DER.sequence(body, identifier: .sequence) { nodes in
                var node = nodes.next()
                if let version = node, version.identifier == .integer {
                    // v2 (1) is the only version with extensions; v1 lists carry no version.
                    guard try Int(derEncoded: version) == 1 else { throw Refused(description: "the revocation list's version is not v2") }
                    node = nodes.next()
                }
                guard let innerNode = node, let issuerNode = nodes.next(), let thisNode = nodes.next() else {
                    throw Refused(description: "the revocation list's tbsCertList is incomplete")
                }
                let inner = try Self.algorithm(innerNode)
                let issuer = try DistinguishedName(derEncoded: issuerNode)
                let thisUpdate = try Self.time(thisNode)
                node = nodes.next()
                var nextUpdate: Date?
                if let candidate = node, candidate.identifier == .utcTime || candidate.identifier == .generalizedTime {
                    nextUpdate = try Self.time(candidate)
                    node = nodes.next()
                }
                var revoked: Set<[UInt8]> = []
                var unhandled: ASN1ObjectIdentifier?
                if let list = node, list.identifier == .sequence {
                    for entry in try Self.elements(list) {
                        try DER.sequence(entry, identifier: .sequence) { fields in
                            guard let serial = fields.next(), serial.identifier == .integer, case .primitive(let bytes) = serial.content,
                                let date = fields.next()
                            else { throw Refused(description: "a revoked certificate entry is malformed") }
                            _ = try Self.time(date)
                            revoked.insert(Self.normalised(bytes))
                            if let extensions = fields.next(), unhandled == nil { unhandled = try Self.unhandledCritical(extensions, handled: []) }
                            guard fields.next() == nil else { throw Refused(description: "a revoked certificate entry has extra fields") }
                        }
                    }
                    node = nodes.next()
                }
                if let extensions = node {
                    guard extensions.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) else {
                        throw Refused(description: "the revocation list's tbsCertList has an unexpected field")
                    }
                    guard case .constructed(let wrapped) = extensions.content, let inner = wrapped.first(where: { _ in true }) else {
                        throw Refused(description: "the revocation list's extensions are malformed")
                    }
                    // The CRL number and the authority key identifier are informational here.
                    if unhandled == nil { unhandled = try Self.unhandledCritical(inner, handled: [[2, 5, 29, 20], [2, 5, 29, 35]]) }
                    node = nodes.next()
                }
                guard node == nil else { throw Refused(description: "the revocation list's tbsCertList has extra fields") }
                fields = (inner, issuer, thisUpdate, nextUpdate, revoked, unhandled)
            }
            guard let (inner, issuer, thisUpdate, nextUpdate, revoked, unhandled) = fields else {
                throw Refused(description: "the revocation list's tbsCertList is incomplete")
            }
            innerAlgorithm = inner
            self.issuer = issuer
            self.thisUpdate = thisUpdate
            self.nextUpdate = nextUpdate
            self.revoked = revoked
            unhandledCritical = unhandled
        } catch let refused as Refused {
            throw refused
        } catch {
            throw Refused(description: "the revocation list is not DER a CertificateList reads from")
        }
    }

    /// Checks that `issuer` (the IACA) signed the list for itself and that it is current at `now`: the names
    /// match, the IACA may sign lists (`cRLSign`), the signature holds, `thisUpdate` is not in the future and
    /// `nextUpdate` is not past (a list without `nextUpdate` is refused: RFC 5280 §5.1.2.5 requires it of
    /// conforming CAs, and nothing would bound how stale it is).
    func verify(issuer certificate: Certificate, now: Date, skew: TimeInterval = 300) throws {
        guard issuer == certificate.subject else { throw Refused(description: "the revocation list is not the IACA's (its issuer is another name)") }
        guard (try? certificate.extensions.keyUsage)??.cRLSign == true else {
            throw Refused(description: "the IACA's certificate does not allow it to sign revocation lists (cRLSign)")
        }
        guard algorithm == innerAlgorithm, let signatureAlgorithm = Self.signatureAlgorithms[algorithm] else {
            throw Refused(description: "the revocation list's signature algorithm is not one this verifier takes")
        }
        guard certificate.publicKey.isValidSignature(signature, for: signed, signatureAlgorithm: signatureAlgorithm) else {
            throw Refused(description: "the revocation list's signature is not the IACA's")
        }
        if let unhandledCritical {
            throw Refused(description: "the revocation list has a critical extension this verifier does not act on (\(unhandledCritical))")
        }
        guard thisUpdate <= now + skew else { throw Refused(description: "the revocation list is dated in the future") }
        guard let nextUpdate else { throw Refused(description: "the revocation list has no nextUpdate") }
        guard now < nextUpdate + skew else { throw Refused(description: "the revocation list is out of date (past its nextUpdate)") }
    }

    /// Whether `certificate`'s serial number is listed.
    func lists(_ certificate: Certificate) -> Bool {
        revoked.contains(Self.normalised(certificate.serialNumber.bytes))
    }

    static let signatureAlgorithms: [ASN1ObjectIdentifier: Certificate.SignatureAlgorithm] = [
        [1, 2, 840, 10045, 4, 3, 2]: .ecdsaWithSHA256, [1, 2, 840, 10045, 4, 3, 3]: .ecdsaWithSHA384, [1, 2, 840, 10045, 4, 3, 4]: .ecdsaWithSHA512,
        [1, 2, 840, 113549, 1, 1, 11]: .sha256WithRSAEncryption, [1, 2, 840, 113549, 1, 1, 12]: .sha384WithRSAEncryption,
        [1, 2, 840, 113549, 1, 1, 13]: .sha512WithRSAEncryption,
    ]

    private static func normalised(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let trimmed = bytes.drop { $0 == 0 }
        return trimmed.isEmpty ? [0] : Array(trimmed)
    }

    /// The elements of a SEQUENCE OF.
    static func elements(_ node: ASN1Node) throws -> ASN1NodeCollection {
        guard node.identifier == .sequence, case .constructed(let children) = node.content else {
            throw Refused(description: "a SEQUENCE OF is expected")
        }
        return children
    }

    /// An AlgorithmIdentifier's OID (its parameters, absent or NULL for the algorithms taken, are not read).
    private static func algorithm(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
        try DER.sequence(node, identifier: .sequence) { nodes in
            guard let oid = nodes.next() else { throw Refused(description: "an AlgorithmIdentifier is empty") }
            _ = nodes.next()
            guard nodes.next() == nil else { throw Refused(description: "an AlgorithmIdentifier has extra fields") }
            return try ASN1ObjectIdentifier(derEncoded: oid)
        }
    }

    /// The first critical extension of `node` (a SEQUENCE OF Extension) whose OID is not in `handled`.
    private static func unhandledCritical(_ node: ASN1Node, handled: Set<ASN1ObjectIdentifier>) throws -> ASN1ObjectIdentifier? {
        var found: ASN1ObjectIdentifier?
        for extensionNode in try Self.elements(node) {
            let parsed = try Certificate.Extension(derEncoded: extensionNode)
            if parsed.critical, !handled.contains(parsed.oid), found == nil { found = parsed.oid }
        }
        return found
    }

    /// A `Time` (UTCTime or GeneralizedTime) as a date.
    private static func time(_ node: ASN1Node) throws -> Date {
        var components = DateComponents()
        components.timeZone = TimeZone(identifier: "UTC")
        switch node.identifier {
        case .utcTime:
            let time = try UTCTime(derEncoded: node)
            (components.year, components.month, components.day) = (time.year, time.month, time.day)
            (components.hour, components.minute, components.second) = (time.hours, time.minutes, time.seconds)
        case .generalizedTime:
            let time = try GeneralizedTime(derEncoded: node)
            (components.year, components.month, components.day) = (time.year, time.month, time.day)
            (components.hour, components.minute, components.second) = (time.hours, time.minutes, time.seconds)
        default:
            throw Refused(description: "a revocation list time is neither UTCTime nor GeneralizedTime")
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: components) else { throw Refused(description: "a revocation list time is not a date") }
        return date
    }
}

extension Certificate {
    /// The http(s) URIs of the certificate's CRL distribution points (RFC 5280 §4.2.1.13): the `fullName`
    /// of each point, its `uniformResourceIdentifier` names. A point that covers only some `reasons`, or
    /// whose list another issuer signs (`cRLIssuer`), is not one whole list of the IACA's and is left out.
    /// Nil when the extension is absent; empty when it names nothing usable.
    func revocationListURIs() throws -> [URL]? {
        guard let extensionValue = extensions[oid: [2, 5, 29, 31]] else { return nil }
        var uris: [URL] = []
        let points = try DER.parse(extensionValue.value)
        for point in try RevocationList.elements(points) {
            try DER.sequence(point, identifier: .sequence) { fields in
                // distributionPoint [0] (a CHOICE, so explicitly tagged) → fullName [0] GeneralNames.
                guard let name = fields.next(), name.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific),
                    case .constructed(let choice) = name.content
                else { return }
                // reasons [1] or cRLIssuer [2]: a partial or indirect list.
                var partial = false
                while fields.next() != nil { partial = true }
                guard !partial else { return }
                for fullName in choice where fullName.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                    guard case .constructed(let names) = fullName.content else { continue }
                    // uniformResourceIdentifier [6] IA5String, implicitly tagged.
                    for general in names where general.identifier == ASN1Identifier(tagWithNumber: 6, tagClass: .contextSpecific) {
                        guard case .primitive(let bytes) = general.content, let text = String(bytes: bytes, encoding: .ascii),
                            let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil
                        else { continue }
                        uris.append(url)
                    }
                }
            }
        }
        return uris
    }
}

/// Whether an IACA revoked a document signer (ISO/IEC 18013-5 Annex B: the document signer certificate
/// names the IACA's CRL distribution point). The list at the first http(s) distribution point that answers
/// is fetched (no redirects, 10 s in all, at most 1 MiB; one fetch for concurrent checks; a failure
/// remembered 30 s), must be the IACA's own (``RevocationList/verify(issuer:now:)``) and no older than one
/// already read, and is kept until its `nextUpdate` (a day at most), for that IACA only. A listed signer is
/// refused, and so is one whose list cannot be read or believed, or whose distribution points name none
/// this verifier can fetch: nothing is then known of it. A signer whose certificate has no distribution
/// points is taken as its IACA issued it (Apple's test issuer's signers name none).
actor DocumentSignerRevocation {
    private let transport: any HTTPTransport
    private let clock: any WallClock
    /// By distribution point and IACA (the digest of its certificate): a list is believed only for the
    /// IACA whose key verified it.
    private var cache: [String: (list: RevocationList, until: Date)] = [:]
    /// The latest `thisUpdate` read per list: an older one is not believed.
    private var newest: [String: Date] = [:]
    private var failures: [String: (reason: String, until: Date)] = [:]
    private var fetching: [String: Task<RevocationList, any Error>] = [:]
    static let cacheLimit = 32
    static let failureMemory: TimeInterval = 30
    static let deadline: Duration = .seconds(10)
    static let maximumAge: TimeInterval = 86_400

    init(transport: any HTTPTransport, clock: any WallClock) {
        self.transport = transport
        self.clock = clock
    }

    private static func refused(_ why: String) -> SwitchbackError {
        SwitchbackError(.presentationInvalid, "the mdoc is refused: \(why)")
    }

    /// Throws ``SwitchbackError/Code/presentationInvalid`` when `signer` is revoked by `iaca`, or when its
    /// revocation could not be learnt.
    func check(_ signer: Certificate, issuedBy iaca: Certificate) async throws {
        let named: [URL]?
        do { named = try signer.revocationListURIs() } catch {
            throw Self.refused("its document signer's CRL distribution points cannot be read")
        }
        guard let points = named else { return }
        // A distribution point named but none this verifier can read: nothing is known of the signer.
        guard !points.isEmpty else {
            throw Self.refused("its document signer names no revocation list this verifier can fetch (an http(s) URI of a whole list)")
        }
        var reason = ""
        for point in points.prefix(3) {
            let list: RevocationList
            do {
                list = try await self.list(point, iaca: iaca)
            } catch let refused as RevocationList.Refused {
                reason = refused.description
                continue
            } catch let error as SwitchbackError {
                reason = error.message
                continue
            }
            if list.lists(signer) { throw Self.refused("its document signer certificate has been revoked by its IACA") }
            return
        }
        throw Self.refused("its document signer's revocation list could not be checked (\(reason))")
    }

    private func list(_ point: URL, iaca: Certificate) async throws -> RevocationList {
        var serializer = DER.Serializer()
        try serializer.serialize(iaca)
        let key = point.absoluteString + " " + Base64URL.encode(Data(SHA256.hash(data: serializer.serializedBytes)))
        let now = clock.now()
        if let cached = cache[key], cached.until > now { return cached.list }
        if let failed = failures[key], failed.until > now { throw RevocationList.Refused(description: failed.reason) }
        // Concurrent checks of one list wait for one fetch.
        if let running = fetching[key] { return try await running.value }
        let (transport, newest) = (transport, newest[key])
        let fetch = Task { try await Self.fetch(point, iaca: iaca, now: now, newest: newest, transport: transport) }
        fetching[key] = fetch
        defer { fetching[key] = nil }
        do {
            let list = try await fetch.value
            if cache.count >= Self.cacheLimit, let oldest = cache.min(by: { $0.value.until < $1.value.until })?.key { cache[oldest] = nil }
            cache[key] = (list, min(list.nextUpdate ?? now, now + Self.maximumAge))
            self.newest[key] = max(list.thisUpdate, self.newest[key] ?? list.thisUpdate)
            failures[key] = nil
            return list
        } catch {
            // A failure is remembered briefly: a flood of answers naming an unreachable point costs one fetch
            // every ``failureMemory`` seconds, not one each.
            if failures.count >= Self.cacheLimit, let oldest = failures.min(by: { $0.value.until < $1.value.until })?.key { failures[oldest] = nil }
            failures[key] = ("\(error)", now + Self.failureMemory)
            throw error
        }
    }

    private static func fetch(
        _ point: URL, iaca: Certificate, now: Date, newest: Date?, transport: any HTTPTransport
    ) async throws -> RevocationList {
        let request = HTTPRequest(method: .get, url: point, headers: ["Accept": "application/pkix-crl"])
        guard let outcome = await within(deadline, { try await transport.send(request) }) else {
            throw RevocationList.Refused(description: "its distribution point did not answer within 10 s")
        }
        let response: HTTPResponse
        do { response = try outcome.get() } catch { throw RevocationList.Refused(description: "its distribution point could not be reached") }
        guard response.status == 200 else { throw RevocationList.Refused(description: "its distribution point answered \(response.status)") }
        let list = try RevocationList(der: Array(response.body))
        try list.verify(issuer: iaca, now: now)
        // An older list than one already seen (replayed by someone on the path) could hide a revocation.
        if let newest, list.thisUpdate < newest {
            throw RevocationList.Refused(description: "the revocation list is older than one this verifier has read")
        }
        return list
    }
}
