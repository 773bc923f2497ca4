import Foundation
@_spi(SwitchbackInternals) import Switchback

/// Token buckets for the rate-limited routes (the starts, `/exchange`, `/handoff`, attestation and wallet
/// routes): one per client address and one for the whole instance.
///
/// Each bucket holds up to a minute's allowance and refills continuously. Addresses are forgotten once
/// their bucket is full again, and at most ``maximumAddresses`` are tracked: when a flood of distinct
/// addresses fills the table, new addresses share the global bucket only.
actor RateLimiter {
    enum Decision: Equatable {
        case allowed
        /// Refused; the client may try again after this many seconds.
        case limited(retryAfter: Int)
    }

    private struct Bucket {
        var tokens: Double
        var updated: Date
    }

    static let maximumAddresses = 10_000

    let perAddress: Int
    let global: Int
    private let clock: any WallClock
    private var addresses: [String: Bucket] = [:]
    private var all: Bucket

    /// `perAddress` and `global` are requests per minute; 0 turns that limit off.
    init(perAddress: Int, global: Int, clock: any WallClock) {
        self.perAddress = perAddress
        self.global = global
        self.clock = clock
        self.all = Bucket(tokens: Double(global), updated: clock.now())
    }

    /// Takes one request from `address`'s bucket and the global one, or says how long to wait.
    func admit(_ address: String) -> Decision {
        let now = clock.now()
        var global = refilled(all, capacity: self.global, now: now)
        var own =
            perAddress > 0 ? refilled(addresses[address] ?? Bucket(tokens: Double(perAddress), updated: now), capacity: perAddress, now: now) : nil
        var waits: [Double] = []
        if self.global > 0, global.tokens < 1 { waits.append((1 - global.tokens) * 60 / Double(self.global)) }
        if let bucket = own, bucket.tokens < 1 { waits.append((1 - bucket.tokens) * 60 / Double(perAddress)) }
        guard waits.isEmpty else {
            all = global
            if let own, addresses[address] != nil { addresses[address] = own }
            return .limited(retryAfter: max(1, Int(waits.max()!.rounded(.up))))
        }
        global.tokens -= 1
        all = global
        if own != nil {
            own!.tokens -= 1
            if addresses[address] == nil, addresses.count >= Self.maximumAddresses { forgetFullBuckets(now: now) }
            if addresses[address] != nil || addresses.count < Self.maximumAddresses { addresses[address] = own }
        }
        return .allowed
    }

    /// How many addresses are tracked now.
    var trackedAddresses: Int { addresses.count }

    private func refilled(_ bucket: Bucket, capacity: Int, now: Date) -> Bucket {
        let elapsed = max(0, now.timeIntervalSince(bucket.updated))
        return Bucket(tokens: min(Double(capacity), bucket.tokens + elapsed * Double(capacity) / 60), updated: now)
    }

    private func forgetFullBuckets(now: Date) {
        addresses = addresses.filter { refilled($0.value, capacity: perAddress, now: now).tokens < Double(perAddress) }
    }
}
