public import Foundation
import Crypto
import Logging
@_spi(SwitchbackInternals) public import Switchback

/// A verified SD-JWT presentation (RFC 9901): the claims the issuer signed, with the disclosed ones put
/// in place and every undisclosed one left out.
public struct VerifiedPresentation: Sendable, Equatable {
    /// The processed payload (RFC 9901 §7.1): clear claims and disclosed ones; `_sd`, `_sd_alg` and
    /// undisclosed array elements removed.
    public let claims: [String: JSONValue]
    /// The issuer-signed JWT's `typ` (`dc+sd-jwt` for an SD-JWT VC).
    public let type: String?
    /// True when a Key Binding JWT was verified (holder's key, audience, nonce, `sd_hash`), or an mdoc's
    /// device signature.
    public let keyBound: Bool
    /// The credential format (OpenID4VP 1.0 Appendix B): `dc+sd-jwt`, or `mso_mdoc`, whose ``type`` is its
    /// `docType` and whose claims are `{namespace: {element: value}}`.
    public var format: String = "dc+sd-jwt"
    /// The issuer's certificate chain as the credential carries it (`x5c`, an mdoc's `x5chain`; DER, leaf
    /// first); empty when it carries none. Not validated by itself: see ``issuerAuthorities``.
    public var issuerChain: [Data] = []
    /// The key identifiers of the authorities on the issuer's validated path to a trust anchor, which a
    /// query's `trusted_authorities` is held to; filled by whoever validated the path (the companion).
    public var issuerAuthorities: Set<Data> = []
    /// The credential's status, left to be read when its verification was asked to (``StatusCheck/later``);
    /// nil when the status was read, or when the credential has none.
    public var pendingStatus: StatusReference?
}

/// When a verifier reads a credential's status (draft-ietf-oauth-status-list-20 §8.3: after everything else).
public enum StatusCheck: Sendable {
    /// Within the verification: a status not VALID, or not known, refuses the credential.
    case now
    /// Left to the caller in ``VerifiedPresentation/pendingStatus``, to read every credential's at once and
    /// tell a revoked credential from a status that could not be read (``StatusListChecker/status(of:)``).
    case later
}

/// Where a credential's status is to be read: its entry in a Token Status List or an identifier list, and
/// whose keys must sign the list.
public struct StatusReference: Sendable, Equatable {
    /// The credential's entry: an index in a Token Status List (draft-ietf-oauth-status-list-20 §6), or an
    /// mdoc's identifier in an identifier list (ISO/IEC 18013-5 second edition), listed when revoked.
    public enum Entry: Sendable, Equatable {
        case index(Int)
        case identifier(Data)
    }

    public let uri: String
    public let entry: Entry
    /// An SD-JWT VC's issuer (`iss`); nil for an mdoc, whose list is held to ``authorities``.
    public let issuer: String?
    /// The authorities (IACA key identifiers) that issued an mdoc; nil for an SD-JWT VC.
    public let authorities: Set<Data>?
    /// An SD-JWT VC's own certificate chain (`x5c`, leaf first, DER): a list signed by a Status Issuer of its
    /// own is held to it (§11.3).
    public var issuerChain: [Data] = []
    /// An mdoc's `certificate` (DER), which the issuer put in its signed MSO: the list's signer must lead to it
    /// instead of to the IACA that issued the credential (ISO/IEC 18013-5 second edition).
    public var trustPoint: Data?

    public init(uri: String, entry: Entry, issuer: String?, authorities: Set<Data>?) {
        self.uri = uri
        self.entry = entry
        self.issuer = issuer
        self.authorities = authorities
    }
}

/// Verifies SD-JWT presentations as RFC 9901 §7 has a verifier do it: the issuer's signature (never
/// `none`), every disclosure's digest (SHA-256 over the disclosure as sent, §4.2.3) referenced exactly
/// once from the signed payload or from another disclosure, names that neither clash nor use `_sd` or
/// `...`, decoy digests ignored, `exp` and `nbf`, and the Key Binding JWT (§4.3, §7.3): `typ` `kb+jwt`,
/// signed by the key in the payload's `cnf.jwk`, `aud` and `nonce` as expected, `iat` recent, and
/// `sd_hash` over the presentation up to its last `~`.
public struct SDJWTVerifier: Sendable {
    /// What the presentation must be bound to; nil accepts one without a Key Binding JWT (a Key Binding JWT
    /// that is there is still verified, with nothing expected of `aud` and `nonce`: it must not be).
    public struct KeyBinding: Sendable {
        /// The verifier's Client Identifier as the holder saw it (OpenID4VP 1.0 §B.3.6: with its prefix).
        public var audience: String
        public var nonce: String

        public init(audience: String, nonce: String) {
            self.audience = audience
            self.nonce = nonce
        }
    }

    /// Where the issuer's keys come from, and which issuers are trusted.
    let issuerKeys: any CredentialIssuerKeys
    /// The issuer-signed JWT's `typ`, when one is required (`dc+sd-jwt`).
    let type: String?
    let allowedAlgorithms: Set<String>
    let clock: any WallClock
    let clockSkew: TimeInterval
    /// How old a Key Binding JWT's `iat` may be.
    let keyBindingAge: TimeInterval
    /// Checks a credential's `status` (Token Status List); without one, a credential that has a status is
    /// refused, since nothing can be said of it.
    let statusLists: StatusListChecker?

    /// One issuer's key set.
    public init(
        issuerKeys: JWKSCache, type: String? = "dc+sd-jwt", clock: any WallClock = SystemClock(), clockSkew: TimeInterval = 60,
        keyBindingAge: TimeInterval = 300, statusLists: StatusListChecker? = nil
    ) {
        self.init(
            issuers: FixedIssuerKeys(issuerKeys), type: type, clock: clock, clockSkew: clockSkew, keyBindingAge: keyBindingAge,
            statusLists: statusLists)
    }

    public init(
        issuers issuerKeys: any CredentialIssuerKeys, type: String? = "dc+sd-jwt",
        allowedAlgorithms: Set<String> = ["ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256"],
        clock: any WallClock = SystemClock(), clockSkew: TimeInterval = 60, keyBindingAge: TimeInterval = 300,
        statusLists: StatusListChecker? = nil
    ) {
        self.statusLists = statusLists
        self.issuerKeys = issuerKeys
        self.type = type
        self.allowedAlgorithms = allowedAlgorithms.intersection(SigningAlgorithms.asymmetric)
        self.clock = clock
        self.clockSkew = clockSkew
        self.keyBindingAge = keyBindingAge
    }

    /// Claims an SD-JWT VC must carry in its signed payload, never in a disclosure (SD-JWT VC §2.2.2.3).
    static let neverDisclosed: Set<String> = ["iss", "nbf", "exp", "cnf", "vct", "vct#integrity", "status"]

    private static func invalid(_ why: String) -> SwitchbackError { SwitchbackError(.presentationInvalid, "the presentation is refused: \(why)") }

    /// Verifies `presentation` (`<issuer JWT>~<disclosure>~…~<KB-JWT or nothing>`).
    public func verify(_ presentation: String, keyBinding expected: KeyBinding?, status: StatusCheck = .now) async throws -> VerifiedPresentation {
        guard presentation.utf8.count <= 256 * 1024 else { throw Self.invalid("it is larger than 256 KiB") }
        let parts = presentation.split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count >= 2, let issuerJWT = parts.first, !issuerJWT.isEmpty else {
            throw Self.invalid("it is not <issuer-signed JWT>~<disclosures>~[KB-JWT]")
        }
        let keyBindingJWT = parts[parts.count - 1]
        let disclosures = parts.dropFirst().dropLast()

        // §7.1 step 2: the issuer's signature, before anything of the payload is believed.
        let jws = try CompactJWS(String(issuerJWT), malformed: .presentationInvalid)
        guard allowedAlgorithms.contains(jws.header.alg) else {
            throw SwitchbackError(.unsupportedAlgorithm, "the presentation's alg \"\(jws.header.alg.prefix(20))\" is not allowed")
        }
        if let type, jws.header.typ != type { throw Self.invalid("the issuer-signed JWT's typ is not \(type)") }
        // The issuer named before the signature is checked only chooses the keys; the source refuses one it
        // does not trust, and the signature is then checked with what it returns.
        guard let payload = JSONReader.object(jws.payload) else { throw Self.invalid("the issuer-signed JWT's payload is not a JSON object") }
        let issuer: String? = if case .string(let value)? = payload["iss"] { value } else { nil }
        try await issuerKeys.keys(issuer: issuer, certificates: jws.header.x5c, keyID: jws.header.kid).verify(jws)
        if let algorithm = payload["_sd_alg"], algorithm != .string("sha-256") {
            throw SwitchbackError(.unsupportedAlgorithm, "the presentation's _sd_alg is not sha-256")
        }

        // §7.1 step 3: each disclosure by its digest; the same disclosure twice is refused (step 4).
        var byDigest: [String: Disclosure] = [:]
        for text in disclosures {
            guard !text.isEmpty else { throw Self.invalid("a disclosure is empty") }
            let digest = Base64URL.encode(SHA256.hash(data: Data(text.utf8)))
            guard byDigest[digest] == nil else { throw Self.invalid("a disclosure is sent twice") }
            byDigest[digest] = try Disclosure(text)
        }
        var processing = Processing(disclosures: byDigest)
        guard case .object(var claims) = try processing.process(.object(payload)) else { throw Self.invalid("the payload is not an object") }
        claims["_sd_alg"] = nil
        // Step 5: a disclosure nothing refers to was not issued for this credential.
        guard processing.used.isSuperset(of: byDigest.keys) else { throw Self.invalid("a disclosure is not referred to by the credential") }

        // Step 6: validity times, from the signed payload (the claims below are never disclosed).
        let now = clock.now().timeIntervalSince1970
        if case .number(let exp)? = claims["exp"], exp <= now - clockSkew { throw Self.invalid("the credential has expired") }
        if case .number(let nbf)? = claims["nbf"], nbf > now + clockSkew { throw Self.invalid("the credential is not valid yet") }

        // §7.3: the Key Binding JWT, before the status is fetched, so that a credential without its holder's
        // key makes the verifier fetch nothing.
        let keyBound: Bool
        if keyBindingJWT.isEmpty {
            if expected != nil { throw Self.invalid("it has no Key Binding JWT") }
            keyBound = false
        } else {
            let boundPart = presentation.utf8.count - keyBindingJWT.utf8.count
            let sdHash = Base64URL.encode(SHA256.hash(data: Data(presentation.utf8.prefix(boundPart))))
            try await verifyKeyBinding(String(keyBindingJWT), claims: claims, sdHash: sdHash, expected: expected, now: now)
            keyBound = true
        }
        var verified = VerifiedPresentation(claims: claims, type: jws.header.typ, keyBound: keyBound, issuerChain: jws.header.x5c)
        if let reference = claims["status"] {
            var pending = try statusReference(reference, issuer: issuer)
            pending.issuerChain = jws.header.x5c
            switch status {
            case .now: try StatusList.requireValid(try await self.status(of: pending), Self.invalid)
            case .later: verified.pendingStatus = pending
            }
        }
        return verified
    }

    /// The credential's `status` (draft-ietf-oauth-status-list-20 §6.2, SD-JWT VC §2.4): a `status_list`
    /// reference with `idx` and `uri`, which this verifier can read. Only VALID passes.
    private func statusReference(_ status: JSONValue, issuer: String?) throws -> StatusReference {
        guard case .object(let mechanisms) = status, case .object(let reference)? = mechanisms["status_list"],
            case .number(let idx)? = reference["idx"], let index = Int(exactly: idx), index >= 0, case .string(let uri)? = reference["uri"]
        else { throw Self.invalid("its status is not a status_list reference with idx and uri") }
        guard statusLists != nil else { throw Self.invalid("it has a status this verifier is not set up to check") }
        return StatusReference(uri: uri, entry: .index(index), issuer: issuer, authorities: nil)
    }

    /// The status a credential this verifier left to be read (``StatusCheck/later``) has in its list;
    /// throws when it cannot be known (the list not fetched in time, not signed by the issuer, the index outside).
    public func status(of reference: StatusReference) async throws -> UInt8 {
        guard let statusLists else { throw Self.invalid("it has a status this verifier is not set up to check") }
        return try await statusLists.status(of: reference)
    }

    private func verifyKeyBinding(_ token: String, claims: [String: JSONValue], sdHash: String, expected: KeyBinding?, now: TimeInterval)
        async throws
    {
        let jws = try CompactJWS(token, malformed: .presentationInvalid)
        guard jws.header.typ == "kb+jwt" else { throw Self.invalid("the Key Binding JWT's typ is not kb+jwt") }
        guard allowedAlgorithms.contains(jws.header.alg) else {
            throw SwitchbackError(.unsupportedAlgorithm, "the Key Binding JWT's alg \"\(jws.header.alg.prefix(20))\" is not allowed")
        }
        guard case .object(let confirmation)? = claims["cnf"], case .object(var jwk)? = confirmation["jwk"] else {
            throw Self.invalid("the credential names no holder key (cnf.jwk)")
        }
        // The holder's key is the only candidate, whatever kid the Key Binding JWT names. ES256 with a P-256
        // key (what HAIP uses) is checked straight away; any other through a one-key set.
        if let verified = JWKSCache.es256Verifies(jws, jwk: jwk) {
            guard verified else { throw SwitchbackError(.signatureInvalid, "the ES256 signature does not verify") }
        } else {
            jwk["kid"] = jws.header.kid.map(JSONValue.string)
            let holder = try JWKSCache(
                jwksJSON: Data(JSONValue.object(["keys": .array([.object(jwk)])]).description.utf8), logger: Logger(label: "switchback.sd-jwt"))
            try await holder.verify(jws)
        }
        guard let members = JSONReader.object(jws.payload) else { throw Self.invalid("the Key Binding JWT's payload is not a JSON object") }
        guard case .number(let iat)? = members["iat"], iat <= now + clockSkew, iat >= now - keyBindingAge - clockSkew else {
            throw Self.invalid("the Key Binding JWT's iat is missing or not recent")
        }
        guard case .string(let hash)? = members["sd_hash"], ConstantTime.equals(hash, sdHash) else {
            throw Self.invalid("the Key Binding JWT's sd_hash is not this presentation's")
        }
        guard case .string(let audience)? = members["aud"], case .string(let nonce)? = members["nonce"] else {
            throw Self.invalid("the Key Binding JWT lacks aud or nonce")
        }
        if let expected {
            guard audience == expected.audience else { throw Self.invalid("the Key Binding JWT is for another audience") }
            guard ConstantTime.equals(nonce, expected.nonce) else { throw Self.invalid("the Key Binding JWT's nonce is not this request's") }
        }
    }

    /// One disclosure, decoded (§4.2.1, §4.2.2).
    struct Disclosure {
        /// Nil for an array element.
        let name: String?
        let value: JSONValue

        init(_ text: Substring) throws {
            guard let data = Base64URL.decode(text), case .array(let elements)? = JSONReader.value(data) else {
                throw SDJWTVerifier.invalid("a disclosure is not a base64url JSON array")
            }
            switch elements.count {
            case 3:
                guard case .string = elements[0], case .string(let name) = elements[1] else {
                    throw SDJWTVerifier.invalid("a disclosure's salt or name is not a string")
                }
                guard name != "_sd", name != "..." else { throw SDJWTVerifier.invalid("a disclosure uses the reserved name \(name)") }
                self.name = name
                value = elements[2]
            case 2:
                guard case .string = elements[0] else { throw SDJWTVerifier.invalid("a disclosure's salt is not a string") }
                name = nil
                value = elements[1]
            default:
                throw SDJWTVerifier.invalid("a disclosure is neither [salt, name, value] nor [salt, value]")
            }
        }
    }

    /// §7.1 step 3, recursively: disclosures put in place of their digests, each digest used once.
    struct Processing {
        let disclosures: [String: Disclosure]
        var used: Set<String> = []
        var depth = 0

        mutating func use(_ digest: String) throws {
            guard used.insert(digest).inserted else { throw SDJWTVerifier.invalid("a digest appears more than once") }
        }

        mutating func process(_ value: JSONValue) throws -> JSONValue {
            depth += 1
            defer { depth -= 1 }
            guard depth <= JSONReader.maximumDepth else { throw SDJWTVerifier.invalid("disclosures nest too deep") }
            switch value {
            case .object(let members):
                var result: [String: JSONValue] = [:]
                for (name, member) in members where name != "_sd" { result[name] = try process(member) }
                guard let digests = members["_sd"] else { return .object(result) }
                guard case .array(let list) = digests else { throw SDJWTVerifier.invalid("an _sd member is not an array") }
                for entry in list {
                    guard case .string(let digest) = entry else { throw SDJWTVerifier.invalid("an _sd entry is not a string") }
                    try use(digest)
                    // A digest without its disclosure is a decoy or a claim not disclosed: nothing to add.
                    guard let disclosure = disclosures[digest] else { continue }
                    guard let name = disclosure.name else { throw SDJWTVerifier.invalid("an array element's disclosure is referred to from _sd") }
                    guard result[name] == nil else { throw SDJWTVerifier.invalid("a disclosed claim \(name.prefix(40)) is already there") }
                    // SD-JWT VC §2.2.2.3: what the verifier decides with is never selectively disclosed, so a
                    // holder cannot leave out an expiry or a status, or bring an issuer of its own.
                    if depth == 1, SDJWTVerifier.neverDisclosed.contains(name) {
                        throw SDJWTVerifier.invalid("the claim \(name) is disclosed selectively, which SD-JWT VC forbids")
                    }
                    result[name] = try process(disclosure.value)
                }
                return .object(result)
            case .array(let elements):
                var result: [JSONValue] = []
                for element in elements {
                    guard case .object(let members) = element, members.count == 1, let reference = members["..."] else {
                        result.append(try process(element))
                        continue
                    }
                    guard case .string(let digest) = reference else { throw SDJWTVerifier.invalid("an array element's digest is not a string") }
                    try use(digest)
                    guard let disclosure = disclosures[digest] else { continue }
                    guard disclosure.name == nil else { throw SDJWTVerifier.invalid("a claim's disclosure is referred to from an array") }
                    result.append(try process(disclosure.value))
                }
                return .array(result)
            default:
                return value
            }
        }
    }
}
