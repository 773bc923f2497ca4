/// A SplitMix64 sequence from a fixed seed, for tests that generate many inputs and must generate the same
/// ones on every run (the JSON reader's documents, base64url's lengths, the JSON writer's numbers).
public struct SeededGenerator {
    public var state: UInt64

    public init(state: UInt64) {
        self.state = state
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    public mutating func pick<T>(_ choices: [T]) -> T { choices[below(choices.count)] }
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
