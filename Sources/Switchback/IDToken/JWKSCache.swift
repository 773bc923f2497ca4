public import Foundation
public import Logging
import JWTKit

/// A provider's signing keys, fetched once and refetched only when a token names a key it lacks.
///
/// Refetches caused by unknown `kid`s are rate-limited (at most one per `refetchInterval`), and
/// concurrent requests share one fetch, so an attacker sending tokens with random `kid`s cannot make the
/// client hammer the provider. Keys that fail to parse, have an unknown type or are meant for encryption
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
    private var inFlight: Task<[Key], any Error>?
    private var verifiers: [String: [any JWTAlgorithm]] = [:]
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

    /// The verifiers able to check a signature made with `alg` by the key `kid`.
    ///
    /// With a `kid`, only that key is a candidate; an unknown `kid` triggers one rate-limited refetch.
    /// Without a `kid`, every key whose type fits `alg` is a candidate (the documented choice for
    /// "kid absent, several keys": try each).
    func verifiers(kid: String?, alg: String) async throws -> [any JWTAlgorithm] {
        if lastFetch == nil { try await refetch() }
        var found = try await candidates(kid: kid, alg: alg)
        if found.isEmpty, canRefetch() {
            logger.debug("no key for this token; refetching JWKS", metadata: ["kid": "\(kid ?? "none")", "alg": "\(alg)"])
            try await refetch()
            found = try await candidates(kid: kid, alg: alg)
        }
        return found
    }

    /// Refetches the key set, when the rate limit allows, and returns the fresh candidates; nil when
    /// a refetch is not allowed yet. Used when no key verifies a token without `kid`: the provider may
    /// have rotated to a key of the same type.
    func verifiersAfterRefetch(kid: String?, alg: String) async throws -> [any JWTAlgorithm]? {
        guard canRefetch() else { return nil }
        logger.debug("no key verified this token; refetching JWKS", metadata: ["alg": "\(alg)"])
        try await refetch()
        return try await candidates(kid: kid, alg: alg)
    }

    private func canRefetch() -> Bool {
        guard case .remote = source else { return false }
        guard let lastFetch else { return true }
        return clock.now().timeIntervalSince(lastFetch) >= refetchInterval
    }

    private func candidates(kid: String?, alg: String) async throws -> [any JWTAlgorithm] {
        let cacheKey = "\(kid ?? "\u{0}")\u{1}\(alg)"
        if let cached = verifiers[cacheKey] { return cached }
        var result: [any JWTAlgorithm] = []
        for key in keys where kid == nil || key.kid == kid {
            if let verifier = await Self.verifier(for: key.jwk, alg: alg) { result.append(verifier) }
        }
        verifiers[cacheKey] = result
        return result
    }

    private func refetch() async throws {
        guard case .remote(let url) = source, let transport else { return }
        if let inFlight {
            _ = try await inFlight.value
            return
        }
        let logger = self.logger
        let task = Task<[Key], any Error> {
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
        inFlight = task
        defer { inFlight = nil }
        fetchCount += 1
        lastFetch = clock.now()
        let fetched = try await task.value
        keys = fetched
        verifiers.removeAll()
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

    /// A jwt-kit verifier for `jwk` used with `alg`, or nil when the two do not fit together.
    private static func verifier(for jwk: JWK, alg: String) async -> (any JWTAlgorithm)? {
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
