public import Foundation
public import Logging
import Crypto
import _CryptoExtras
import JWTKit

/// A provider's signing keys, fetched once and refetched only when a token names a key it lacks.
///
/// Refetches caused by unknown `kid`s are rate-limited (at most one per `refetchInterval`), and
/// concurrent requests share one fetch, so an attacker sending tokens with random `kid`s cannot make the
/// client hammer the provider. The first fetch does not count against the limit: a provider that rotates
/// its keys right after a sign-in is followed at once. Keys that fail to parse, have an unknown type or are meant for encryption
/// are skipped, not fatal.
public actor JWKSCache {
    private struct Key {
        let kid: String?
        let jwk: JWK
    }

    private enum Source {
        case remote(URL)
        case fixed
    }

    private let source: Source
    private let transport: (any HTTPTransport)?
    private let clock: any WallClock
    private let refetchInterval: TimeInterval
    private let logger: Logger
    private var keys: [Key] = []
    private var lastFetch: Date?
    /// When a token naming a key the set lacks last caused a refetch.
    private var lastMissRefetch: Date?
    private var inFlight: (number: Int, task: Task<[Key], any Error>)?
    private var verifiers: [String: [Verifier]] = [:]
    /// The last answer of `candidates`, for the keys of `generation`, readable without a hop onto the actor:
    /// a provider's tokens name the same key one after the other, so most checks find their key here and
    /// verify on the caller's own thread, and concurrent checks run side by side rather than one at a time
    /// on the actor. Written only for the current generation, and cleared when the keys are replaced.
    private nonisolated let recent = LockedValue<Recent?>(nil)
    /// The number of the fetch whose keys are in `keys` (0 for a fixed set).
    private var generation = 0
    /// How many times the JWKS was fetched (for tests and diagnostics).
    public private(set) var fetchCount = 0

    /// A cache over the provider's `jwks_uri`.
    public init(jwksURI: URL, transport: any HTTPTransport, clock: any WallClock, refetchInterval: TimeInterval = 60, logger: Logger) {
        self.source = .remote(jwksURI)
        self.transport = transport
        self.clock = clock
        self.refetchInterval = refetchInterval
        self.logger = logger
    }

    /// A fixed key set, for example read from a file; never refetched.
    public init(jwksJSON: Data, clock: any WallClock = SystemClock(), logger: Logger) throws {
        self.source = .fixed
        self.transport = nil
        self.clock = clock
        self.refetchInterval = .infinity
        self.logger = logger
        self.keys = try Self.parse(jwksJSON)
        self.lastFetch = clock.now()
    }

    /// Verifies the token's signature with the provider's keys.
    ///
    /// With a `kid`, only that key is a candidate; without one, every key whose type fits `alg` is tried
    /// (the documented choice for "kid absent, several keys"). When no candidate exists, or a token
    /// without `kid` verifies with none of them, the provider may have rotated its keys: the set is
    /// refetched once, within the rate limit, and the check repeated.
    @_spi(SwitchbackInternals) public nonisolated func verify(_ jws: CompactJWS) async throws {
        switch try verdictOfRecentKeys(jws) {
        case .verified: return
        case .unknown: try await verifyOnActor(jws, failed: nil)
        case .refused(let generation): try await verifyOnActor(jws, failed: generation)
        }
    }

    /// What the last candidates for a token's `kid` and `alg` say of it.
    private enum RecentVerdict {
        case verified
        /// No candidates for this `kid` and `alg` yet: the actor decides.
        case unknown
        /// The candidates of this generation refused a token without `kid`: the keys may have rotated.
        case refused(generation: Int)
    }

    /// ``verify(_:)``'s first step, on the caller's thread: the common case of a token signed by the key the
    /// previous one named is decided here, and a token naming a key that refuses it is refused here.
    private nonisolated func verdictOfRecentKeys(_ jws: CompactJWS) throws -> RecentVerdict {
        let kid = jws.header.kid
        let alg = jws.header.alg
        guard let last = recent.withLock({ $0 }), last.kid == kid, last.alg == alg else { return .unknown }
        if Self.anyVerifies(last.verifiers, jws) { return .verified }
        // What the actor would conclude from the same candidates: a token naming its key is refused at once;
        // one without a kid may need the refetch, and the candidates already tried are not tried again.
        guard kid == nil else { throw SwitchbackError(.signatureInvalid, "the \(alg) signature does not verify") }
        return .refused(generation: last.generation)
    }

    /// The check with the actor's state: the first fetch, new candidates, the refetch. `failed` is the
    /// generation whose candidates already refused this token.
    private func verifyOnActor(_ jws: CompactJWS, failed: Int?) async throws {
        let kid = jws.header.kid
        let alg = jws.header.alg
        if lastFetch == nil { try await refetch() }
        let seen = generation
        var found = try await candidates(kid: kid, alg: alg)
        if failed != seen, Self.anyVerifies(found, jws) { return }
        if found.isEmpty || kid == nil, try await refresh(after: seen) {
            found = try await candidates(kid: kid, alg: alg)
            if Self.anyVerifies(found, jws) { return }
        }
        guard !found.isEmpty else {
            throw SwitchbackError(.unknownSigningKey, "no \(alg) key \(kid.map { "with kid \"\($0.prefix(80))\" " } ?? "")in the provider's JWKS")
        }
        throw SwitchbackError(.signatureInvalid, "the \(alg) signature does not verify")
    }

    private static func anyVerifies(_ candidates: [Verifier], _ jws: CompactJWS) -> Bool {
        // The signing input is hashed once for every candidate (a token without kid may have several).
        var digest: SHA256.Digest?
        return candidates.contains { $0.verifies(jws, digest: &digest) }
    }

    /// One `candidates` answer and the generation of keys it was computed from.
    struct Recent: Sendable {
        let kid: String?
        let alg: String
        let generation: Int
        let verifiers: [Verifier]
    }

    /// Whether `jws`, an ES256 signature, verifies with the public P-256 JWK `jwk`; nil when `jwk` is not such a
    /// key (``Verifier/es256(_:)``), and the caller then verifies through a one-key set. For a holder's key
    /// named in a credential, which is the only candidate whatever `kid` the token names.
    @_spi(SwitchbackInternals) public static func es256Verifies(_ jws: CompactJWS, jwk: [String: JSONValue]) -> Bool? {
        guard jws.header.alg == "ES256", let verifier = Verifier.es256(jwk) else { return nil }
        return verifier.verifies(jws)
    }

    /// How a candidate key checks a signature: ES256 and RS256 straight through swift-crypto with the key
    /// parsed once (the common cases, without jwt-kit's generic path and its copies), anything else through
    /// jwt-kit. jwt-kit still decides whether a key fits an algorithm before either direct path is taken.
    enum Verifier: Sendable {
        case p256(P256.Signing.PublicKey)
        /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3), a modulus of 2048 bits or more.
        case rs256(_RSA.Signing.PublicKey)
        case jwtKit(any JWTAlgorithm)

        /// Whether this key verifies `jws`.
        func verifies(_ jws: CompactJWS) -> Bool {
            var digest: SHA256.Digest?
            return verifies(jws, digest: &digest)
        }

        /// Whether this key verifies `jws`; `digest` is the signing input's SHA-256, computed on first need.
        func verifies(_ jws: CompactJWS, digest: inout SHA256.Digest?) -> Bool {
            func hashed() -> SHA256.Digest {
                if let digest { return digest }
                let computed = jws.signingInputDigest()
                digest = computed
                return computed
            }
            switch self {
            case .p256(let key):
                guard jws.signature.count == 64, let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature) else {
                    return false
                }
                return key.isValidSignature(signature, for: hashed())
            case .rs256(let key):
                // BoringSSL refuses a signature whose length is not the modulus's.
                return key.isValidSignature(
                    _RSA.Signing.RSASignature(rawRepresentation: jws.signature), for: hashed(), padding: .insecurePKCS1v1_5)
            case .jwtKit(let algorithm):
                return (try? algorithm.verify(jws.signature, signs: jws.signingInput)) == true
            }
        }

        /// An ES256 verifier for a public P-256 JWK's members (`kty` EC, `crv` P-256, `x`, `y`, no `d`; `use`,
        /// `key_ops` and `alg`, when present, allowing ES256 signatures), or nil for any other key, which the
        /// caller then hands to the one-key set as before. swift-crypto refuses a point not on the curve.
        static func es256(_ jwk: [String: JSONValue]) -> Verifier? {
            guard jwk["kty"] == .string("EC"), jwk["crv"] == .string("P-256"), jwk["d"] == nil,
                jwk["use"] == nil || jwk["use"] == .string("sig"), jwk["alg"] == nil || jwk["alg"] == .string("ES256"),
                case .string(let x)? = jwk["x"], case .string(let y)? = jwk["y"]
            else { return nil }
            if let operations = jwk["key_ops"] {
                guard case .array(let listed) = operations, listed.contains(.string("verify")) else { return nil }
            }
            return es256(x: x, y: y)
        }

        static func es256(x: String, y: String) -> Verifier? {
            guard let x = Base64URL.decode(x), let y = Base64URL.decode(y), x.count == 32, y.count == 32,
                let key = try? P256.Signing.PublicKey(rawRepresentation: x + y)
            else { return nil }
            return .p256(key)
        }

        /// An RS256 verifier for an RSA public key's modulus and exponent, or nil when swift-crypto refuses
        /// them (a modulus under 2048 bits among others).
        static func rs256(n: Data, e: Data) -> Verifier? {
            (try? _RSA.Signing.PublicKey(n: n, e: e)).map { .rs256($0) }
        }
    }

    /// Makes sure the keys are newer than `generation`: true when they already are, when a fetch
    /// under way was joined, or when a new fetch was allowed; false when the rate limit refuses.
    private func refresh(after seen: Int) async throws -> Bool {
        if generation != seen { return true }
        if inFlight != nil || canRefetch() {
            logger.debug("no key verifies this token; refetching JWKS")
            if inFlight == nil { lastMissRefetch = clock.now() }
            try await refetch()
            return true
        }
        return false
    }

    /// Keeps `answer` for the lock-free path; only the actor writes it, between two suspension points, so
    /// an answer from replaced keys is never kept.
    private func remember(_ answer: Recent) {
        guard answer.generation == generation else { return }
        recent.withLock { $0 = answer }
    }

    private func canRefetch() -> Bool {
        guard case .remote = source else { return false }
        guard let lastMissRefetch else { return true }
        return clock.now().timeIntervalSince(lastMissRefetch) >= refetchInterval
    }

    private func candidates(kid: String?, alg: String) async throws -> [Verifier] {
        // A provider's tokens name the same key one after the other: compare with the last answer first.
        let cacheKey = "\(kid ?? "\u{0}")\u{1}\(alg)"
        if let cached = verifiers[cacheKey] {
            remember(Recent(kid: kid, alg: alg, generation: generation, verifiers: cached))
            return cached
        }
        let current = keys
        let seen = generation
        var result: [Verifier] = []
        for key in current where kid == nil || key.kid == kid {
            if let verifier = await Self.verifier(for: key.jwk, alg: alg) { result.append(verifier) }
        }
        // Empty results are not kept, so random kids cannot grow the cache; results computed from keys
        // replaced meanwhile are not kept either.
        if !result.isEmpty, seen == generation {
            verifiers[cacheKey] = result
            remember(Recent(kid: kid, alg: alg, generation: seen, verifiers: result))
        }
        return result
    }

    /// Fetches the key set, or joins the fetch already under way; every caller applies the result
    /// before returning, so a joiner never looks at the keys before they are replaced.
    private func refetch() async throws {
        guard case .remote(let url) = source, let transport else { return }
        let number: Int
        let task: Task<[Key], any Error>
        if let inFlight {
            (number, task) = inFlight
        } else {
            fetchCount += 1
            lastFetch = clock.now()
            number = fetchCount
            let logger = self.logger
            task = Task {
                logger.debug("fetching JWKS", metadata: ["url": "\(url)"])
                let response: HTTPResponse
                do {
                    response = try await transport.send(HTTPRequest(method: .get, url: url, headers: ["Accept": "application/json"]))
                } catch {
                    throw SwitchbackError(.jwksFetchFailed, "could not fetch the JWKS from \(url)", underlying: error)
                }
                guard response.status == 200 else {
                    throw SwitchbackError(.jwksFetchFailed, "the JWKS endpoint answered HTTP \(response.status)", httpStatus: response.status)
                }
                return try Self.parse(response.body)
            }
            inFlight = (number, task)
        }
        let result = await task.result
        if inFlight?.number == number { inFlight = nil }
        let fetched = try result.get()
        if generation < number {
            keys = fetched
            generation = number
            verifiers.removeAll()
            recent.withLock { $0 = nil }
        }
    }

    private static func parse(_ data: Data) throws -> [Key] {
        struct Document: Decodable {
            let keys: [Entry]
        }
        struct Entry: Decodable {
            let jwk: JWK?
            let use: String?
            let keyOps: [String]?

            enum CodingKeys: String, CodingKey {
                case use
                case keyOps = "key_ops"
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                use = try? container.decodeIfPresent(String.self, forKey: .use)
                keyOps = try? container.decodeIfPresent([String].self, forKey: .keyOps)
                jwk = try? JWK(from: decoder)
            }
        }
        guard let document = try? JSONDecoder().decode(Document.self, from: data) else {
            throw SwitchbackError(.jwksFetchFailed, "the JWKS is not a JSON object with a keys array")
        }
        return document.keys.compactMap { entry in
            guard let jwk = entry.jwk, entry.use == nil || entry.use == "sig",
                entry.keyOps.map({ $0.contains("verify") }) ?? true,
                jwk.privateExponent == nil
            else { return nil }
            return Key(kid: jwk.keyIdentifier?.string, jwk: jwk)
        }
    }

    /// A verifier for `jwk` used with `alg`, or nil when the two do not fit together (jwt-kit decides).
    private static func verifier(for jwk: JWK, alg: String) async -> Verifier? {
        guard let algorithm = await jwtKitVerifier(for: jwk, alg: alg) else { return nil }
        if alg == "ES256", jwk.curve == .ecdsa(.p256), let x = jwk.x, let y = jwk.y, let direct = Verifier.es256(x: x, y: y) { return direct }
        if alg == "RS256", let modulus = jwk.modulus.flatMap({ Base64URL.decode($0) }), let exponent = jwk.exponent.flatMap({ Base64URL.decode($0) }),
            let direct = Verifier.rs256(n: modulus, e: exponent)
        {
            return direct
        }
        return .jwtKit(algorithm)
    }

    /// A jwt-kit verifier for `jwk` used with `alg`, or nil when the two do not fit together.
    private static func jwtKitVerifier(for jwk: JWK, alg: String) async -> (any JWTAlgorithm)? {
        if let declared = jwk.algorithm, declared.rawValue != alg { return nil }
        var keyed = jwk
        let handle = JWKIdentifier(string: "switchback-candidate")
        keyed.keyIdentifier = handle
        let collection = JWTKeyCollection()
        guard (try? await collection.add(jwk: keyed)) != nil,
            let algorithm = try? await collection.getKey(for: handle, alg: alg),
            algorithm.name == alg
        else { return nil }
        return algorithm
    }
}
