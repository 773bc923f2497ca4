import Foundation
@_spi(SwitchbackInternals) import Switchback

/// The rate limits of the routes the banner marks `[rate-limited]`: a budget per client network, in tiers,
/// and one per route for the whole instance.
///
/// **Client networks.** A client is counted at every tier its address belongs to, and refused when any of
/// them is spent: an IPv6 address by its /64 (one subscriber), /56 (one customer's delegation) and /48 (one
/// site), so that cycling the /64s of a delegation buys nothing; an IPv4 address by itself and, more
/// softly, by its /24. Each tier holds a minute's allowance (the per-address limit times
/// ``Tier/multiple``) and refills continuously.
///
/// The tiers' buckets live in a fixed table of counters indexed by keyed hashes (a count-min sketch with
/// conservative update): its memory is fixed, no address is ever forgotten to make room, and a flood of
/// new addresses cannot push a spent one out. A client shares a counter with another only by chance, in
/// every row at once; the hash key is random per instance, so no one can aim for a victim's counters.
///
/// **Routes.** Each rate-limited route has its own budget for the instance (``Kind/multiple`` times
/// `limits.startsPerMinute`), so a flood of one route does not stop the others. A client's starts share
/// one budget per network, and its requests in a flow already started share another, four times larger.
///
/// **Headroom.** When a flow route's instance budget is spent (or an attested start's), requests are still
/// answered if they belong to a flow the server knows (or carry a valid attestation); any other refusal
/// becomes `429`. Volume beyond what an instance can look up belongs to the edge (Deployment.md).
actor RateLimiter {
    enum Decision: Equatable {
        case allowed
        /// The route's instance budget is spent: answer only a request the server recognises (a flow it
        /// started, a valid attestation); anything else is refused with this `Retry-After`.
        case knownOnly(retryAfter: Int)
        /// Refused; the client may try again after this many seconds.
        case limited(retryAfter: Int)
    }

    /// What a rate-limited route does, which sets its budgets.
    enum Kind: Int, Sendable, CaseIterable {
        /// Begins a flow (a record in the store, a provider call for an anonymous client).
        case start
        /// Continues a flow the server started: its request names state the server issued.
        case flow

        /// The budgets' multiple of the configured limits: a sign-in or presentation makes one start and a
        /// few requests within it (the request object fetched once or twice, the answer, the redemption).
        var multiple: Int {
            switch self {
            case .start: 1
            case .flow: 4
            }
        }
    }

    /// A network an address is counted in.
    struct Tier: Sendable, Equatable {
        let bits: Int
        /// The tier's budget as a multiple of the per-address limit.
        let multiple: Int

        static let ipv4: [Tier] = [Tier(bits: 32, multiple: 1), Tier(bits: 24, multiple: 8)]
        static let ipv6: [Tier] = [Tier(bits: 64, multiple: 1), Tier(bits: 56, multiple: 4), Tier(bits: 48, multiple: 16)]
    }

    /// One rate-limited route, as registered.
    struct Route: Sendable, Hashable {
        let name: String
        let kind: Kind
        /// When the instance budget is spent, the route still answers what it recognises (a flow's state, an
        /// attestation) and refuses the rest.
        let answersKnown: Bool
    }

    /// A counter of the sketch: how much of a full bucket was used, as a fraction that drains in a minute.
    private struct Cell {
        var used: Double = 0
        var updated: Double = 0
    }

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    /// Rows and width of the sketch: 3 × 65 536 counters of 16 bytes, 3 MiB.
    static let rows = 3
    static let width = 1 << 16

    let perAddress: Int
    let global: Int
    private let clock: any WallClock
    private let origin: Date
    private let key = (UInt64.random(in: .min ... .max), UInt64.random(in: .min ... .max))
    private var cells: [Cell]
    private var routes: [Route: Bucket] = [:]

    /// `perAddress` and `global` are requests per minute; 0 turns that limit off.
    init(perAddress: Int, global: Int, clock: any WallClock) {
        self.perAddress = perAddress
        self.global = global
        self.clock = clock
        origin = clock.now()
        cells = Array(repeating: Cell(), count: perAddress > 0 ? Self.rows * Self.width : 0)
    }

    /// Takes one request of `route` from `client`'s networks and from the route's instance budget, or says
    /// why not. `client` is nil when the address is unknown or unreadable: those share one bucket.
    func admit(_ client: ClientAddress?, route: Route) -> Decision {
        let now = clock.now()
        let seconds = now.timeIntervalSince(origin)
        var waits: [Double] = []
        var charges: [(slots: [Int], used: Double)] = []
        if perAddress > 0 {
            for (prefix, tier) in Self.networks(of: client) {
                let cost = 1 / Double(perAddress * tier.multiple * route.kind.multiple)
                let slots = self.slots(route.kind, prefix)
                let used = slots.map { drained(cells[$0], at: seconds) }.min()!
                if used + cost > 1 + 1e-9 {
                    waits.append((used + cost - 1) * 60)
                } else {
                    charges.append((slots, used + cost))
                }
            }
        }
        let capacity = Double(global * route.kind.multiple)
        var bucket: Bucket?
        var routeWait: Double?
        if global > 0 {
            let refilled = refilled(routes[route] ?? Bucket(tokens: capacity, updated: now), capacity: capacity, now: now)
            if refilled.tokens < 1 { routeWait = (1 - refilled.tokens) * 60 / capacity }
            bucket = refilled
        }
        guard waits.isEmpty else {
            if let bucket { routes[route] = bucket }
            return .limited(retryAfter: Self.seconds(waits.max()!))
        }
        if let routeWait, !route.answersKnown {
            routes[route] = bucket
            return .limited(retryAfter: Self.seconds(routeWait))
        }
        // Conservative update: a counter rises only as far as this client's estimate needs.
        for charge in charges {
            for slot in charge.slots {
                cells[slot] = Cell(used: max(drained(cells[slot], at: seconds), charge.used), updated: seconds)
            }
        }
        if var bucket {
            bucket.tokens = max(0, bucket.tokens - 1)
            routes[route] = bucket
        }
        if let routeWait { return .knownOnly(retryAfter: Self.seconds(routeWait)) }
        return .allowed
    }

    /// The prefixes `client` is counted under, with their tiers: the address's own tiers, or one shared
    /// bucket for every client whose address is unknown.
    static func networks(of client: ClientAddress?) -> [(prefix: [UInt8], tier: Tier)] {
        guard let client else { return [([], Tier(bits: 0, multiple: 1))] }
        let tiers = if case .v4 = client.value { Tier.ipv4 } else { Tier.ipv6 }
        let bytes = client.bytes
        return tiers.map { tier in
            var prefix = Array(bytes.prefix((tier.bits + 7) / 8))
            if tier.bits % 8 != 0 { prefix[prefix.count - 1] &= UInt8(0xFF) << (8 - tier.bits % 8) }
            return ([UInt8(bytes.count), UInt8(tier.bits)] + prefix, tier)
        }
    }

    /// The sketch's counters for `prefix` under `kind`: one per row, each from its own bits of one keyed hash.
    private func slots(_ kind: Kind, _ prefix: [UInt8]) -> [Int] {
        var hasher = Hasher()
        hasher.combine(key.0)
        hasher.combine(key.1)
        hasher.combine(kind.rawValue)
        hasher.combine(prefix)
        let hash = UInt64(bitPattern: Int64(hasher.finalize()))
        // A slice of 16 bits of the hash per row (the width is 2^16): 48 independent bits in all.
        return (0..<Self.rows).map { row in row * Self.width + Int((hash >> UInt64(16 * row)) & UInt64(Self.width - 1)) }
    }

    private func drained(_ cell: Cell, at seconds: Double) -> Double {
        max(0, cell.used - max(0, seconds - cell.updated) / 60)
    }

    private func refilled(_ bucket: Bucket, capacity: Double, now: Date) -> Bucket {
        let elapsed = max(0, now.timeIntervalSince(bucket.updated))
        return Bucket(tokens: min(capacity, bucket.tokens + elapsed * capacity / 60), updated: now)
    }

    private static func seconds(_ wait: Double) -> Int { max(1, Int(wait.rounded(.up))) }
}

/// The rate limits' view of the request being answered, for its handler: its client, whether the route is
/// over its instance budget, and whether the server recognised the request's flow (a record of it was
/// found in the store), which decides how a refusal over the budget is answered.
final class Admission: Sendable {
    let limiter: RateLimiter
    let client: ClientAddress?
    /// Set when the route is over its instance budget: the `Retry-After` of a refusal.
    let knownOnly: Int?
    private let found = LockedValue(false)

    init(limiter: RateLimiter, client: ClientAddress?, knownOnly: Int?) {
        self.limiter = limiter
        self.client = client
        self.knownOnly = knownOnly
    }

    /// A record of the request's flow was found: its refusal is the flow's own (a wrong binding, an answer
    /// that does not verify), not the limit's, and a retry would not help.
    func recognise() { found.withLock { $0 = true } }

    var recognised: Bool { found.withLock { $0 } }
}

extension CompanionService {
    @TaskLocal static var admission: Admission?

    /// A branch of a flow route that starts work for an anonymous client (an app-started `/exchange`
    /// redeems a code at the provider) is charged as a start of its own, and refused outright when the
    /// route is over its instance budget: nothing it could recognise is at stake.
    static func admitStart(_ name: String) async throws {
        guard let admission else { return }
        if let retryAfter = admission.knownOnly { throw CompanionError.rateLimited(retryAfter: retryAfter) }
        let start = RateLimiter.Route(name: name, kind: .start, answersKnown: false)
        if case .limited(let retryAfter) = await admission.limiter.admit(admission.client, route: start) {
            throw CompanionError.rateLimited(retryAfter: retryAfter)
        }
    }
}
