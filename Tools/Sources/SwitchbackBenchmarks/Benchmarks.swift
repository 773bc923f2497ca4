import Crypto
import _CryptoExtras
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackTesting

/// ID-token validation throughput with a warm JWKS cache, side by side with the raw signature
/// verification of the same key through swift-crypto alone (the floor of what validation can cost);
/// then complete code flows per second against the emulator and against glewlwyd; then the client CPU
/// time of a complete hand-off sign-in on the simulated device.
///
/// Run with `swift run -c release --package-path Tools SwitchbackBenchmarks`.
@main
struct Benchmarks {
    static let seconds = Double(ProcessInfo.processInfo.environment["BENCH_SECONDS"] ?? "") ?? 2

    static func main() async throws {
        let arguments = ProcessInfo.processInfo.arguments
        if arguments.count >= 3, arguments[1] == "serve-emulator" {
            try await ChildEmulator.serve(profile: arguments[2], variants: Array(arguments.dropFirst(3)))
            return
        }
        if arguments.count >= 2, arguments[1] == "companion-load" {
            try await CompanionBenchmark.generateLoad(Array(arguments.dropFirst(2)))
            return
        }
        if ProcessInfo.processInfo.environment["BENCH_ONLY"] == "companion" {
            try await CompanionBenchmark.run(seconds: seconds * 2)
            return
        }
        if ProcessInfo.processInfo.environment["BENCH_ONLY"] == "records" {
            try await CompanionBenchmark.measureRecords()
            return
        }
        if ProcessInfo.processInfo.environment["BENCH_ONLY"] == "presentation" {
            try await PresentationBenchmark.run()
            return
        }
        if ProcessInfo.processInfo.environment["BENCH_ONLY"] == "handoff" {
            try await HandOffBenchmark.run(seconds: seconds * 5)
            return
        }
        #if DEBUG
            print("warning: debug build; run `swift run -c release --package-path Tools SwitchbackBenchmarks` for meaningful figures\n")
        #endif
        print("ID-token validation vs raw swift-crypto signature verification, \(seconds) s per row, one core")
        print(pad("case", 12) + pad("validations/s", 16) + pad("raw verify/s", 16) + "ratio" + "   (goals: RS256 85%, ES256 90%)")
        for algorithm in [TestTokenSigner.Algorithm.rs256, .es256] {
            let row = try await measure(algorithm)
            let ratio = row.validation / row.raw * 100
            print(
                pad(row.name, 12) + pad(String(format: "%.0f", row.validation), 16) + pad(String(format: "%.0f", row.raw), 16)
                    + String(format: "%.1f%%", ratio))
        }
        try await measureClaimsReading()
        if ProcessInfo.processInfo.environment["BENCH_ONLY"] == "validation" { return }
        try await PresentationBenchmark.run()
        try await CodeFlowBenchmark.run(seconds: seconds * 5)
        try await HandOffBenchmark.run(seconds: seconds * 5)
        try await CompanionBenchmark.run(seconds: seconds * 2)
    }

    static func measure(_ algorithm: TestTokenSigner.Algorithm) async throws -> (name: String, validation: Double, raw: Double) {
        let signer = try await TestTokenSigner(algorithm, keyID: "bench")
        let clock = ManualClock()
        let now = clock.now().timeIntervalSince1970
        let token = try await signer.sign([
            "iss": .string("https://id.example.test"), "aud": .string("app"), "sub": .string("user-1"), "nonce": .string("n"),
            "iat": .number(now), "exp": .number(now + 300), "auth_time": .number(now), "acr": .string("urn:eid:high"),
        ])
        let keys = try JWKSCache(jwksJSON: Data(TestTokenSigner.jwks([signer]).utf8), clock: clock, logger: Logger(label: "bench"))
        let validator = IDTokenValidator(
            issuer: "https://id.example.test", clientID: "app", allowedAlgorithms: [algorithm.rawValue], keys: keys, clock: clock
        )
        let expectations = IDTokenValidator.Expectations(nonce: "n", maxAge: 600)
        _ = try await validator.validate(token, expectations: expectations)  // warms the cache

        let raw = try rawVerifier(algorithm, signer: signer, token: token)
        guard raw() else { throw BenchmarkError(description: "raw verification of the benchmark token failed") }

        let (validations, verifications) = try await alternating(
            { _ = try await validator.validate(token, expectations: expectations) },
            { if !raw() { throw BenchmarkError(description: "raw verification failed") } })
        return ("\(algorithm.rawValue)\(algorithm == .rs256 ? "-2048" : "")", validations, verifications)
    }

    /// An ID token's header and claims read by Foundation's `JSONDecoder` into the claims type, and by
    /// ``JSONReader`` (what validation uses), per second.
    static func measureClaimsReading() async throws {
        let signer = try await TestTokenSigner(.rs256, keyID: "bench")
        let token = try await signer.sign([
            "iss": .string("https://id.example.test"), "aud": .string("app"), "sub": .string("user-1"), "nonce": .string("n"),
            "iat": .number(1_764_000_000), "exp": .number(1_764_000_300), "auth_time": .number(1_764_000_000), "acr": .string("urn:eid:high"),
        ])
        let parts = token.split(separator: ".")
        guard let header = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]) else {
            throw BenchmarkError(description: "the benchmark token does not decode")
        }
        struct Header: Decodable {
            let alg: String
            let kid: String?
            let typ: String?
            let crit: [String]?
        }
        let decoder = JSONDecoder()
        let foundation = try await rate {
            _ = try decoder.decode(Header.self, from: header)
            _ = try decoder.decode(IDTokenClaims.self, from: payload)
        }
        let reader = try await rate {
            guard let head = JSONReader.members(header), let claims = JSONReader.members(payload), head["alg"] != nil, claims["sub"] != nil else {
                throw BenchmarkError(description: "the reader refused the benchmark token")
            }
        }
        print(
            "header and claims read: JSONDecoder " + String(format: "%.0f/s (%.1f µs)", foundation, 1e6 / foundation) + ", JSONReader "
                + String(format: "%.0f/s (%.1f µs)", reader, 1e6 / reader) + String(format: ", %.1f× faster", reader / foundation))
    }

    /// Verifies the token's signature with swift-crypto directly: parse the public key once, then
    /// hash-and-verify the signing input per call, as any validation must.
    static func rawVerifier(_ algorithm: TestTokenSigner.Algorithm, signer: TestTokenSigner, token: String) throws -> () -> Bool {
        let parts = token.split(separator: ".")
        let signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let signature = try decode(parts[2])
        switch algorithm {
        case .rs256:
            let key = try _RSA.Signing.PublicKey(n: try decode(string(signer.publicJWK["n"])), e: try decode(string(signer.publicJWK["e"])))
            let rsaSignature = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return { key.isValidSignature(rsaSignature, for: signingInput, padding: .insecurePKCS1v1_5) }
        case .es256:
            let x = try decode(string(signer.publicJWK["x"]))
            let y = try decode(string(signer.publicJWK["y"]))
            let key = try P256.Signing.PublicKey(rawRepresentation: x + y)
            let ecdsaSignature = try P256.Signing.ECDSASignature(rawRepresentation: signature)
            return { key.isValidSignature(ecdsaSignature, for: signingInput) }
        }
    }

    /// The rates of `first` and `second` measured in turns, six slices each over `seconds` in all per
    /// operation: a ratio of two rates taken one after the other moved by a few percent from run to run on
    /// this shared machine, as its speed drifted between the two.
    static func alternating(_ first: () async throws -> Void, _ second: () async throws -> Void) async throws -> (Double, Double) {
        let clock = ContinuousClock()
        let slice = Duration.milliseconds(Int(seconds * 1000 / 6))
        var counts = (0, 0)
        var elapsed = (Duration.zero, Duration.zero)
        for _ in 0..<6 {
            for turn in 0..<2 {
                let start = clock.now
                var count = 0
                while clock.now - start < slice {
                    for _ in 0..<50 { try await turn == 0 ? first() : second() }
                    count += 50
                }
                if turn == 0 {
                    counts.0 += count
                    elapsed.0 += clock.now - start
                } else {
                    counts.1 += count
                    elapsed.1 += clock.now - start
                }
            }
        }
        func inSeconds(_ duration: Duration) -> Double { Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18 }
        return (Double(counts.0) / inSeconds(elapsed.0), Double(counts.1) / inSeconds(elapsed.1))
    }

    /// Operations per second over `seconds`.
    static func rate(_ operation: () async throws -> Void) async throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        var count = 0
        while clock.now < deadline {
            for _ in 0..<50 { try await operation() }
            count += 50
        }
        let elapsed = start.duration(to: clock.now)
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static func string(_ value: JSONValue?) throws -> String {
        guard case .string(let text)? = value else { throw BenchmarkError(description: "JWK member missing") }
        return text
    }

    static func decode(_ text: some StringProtocol) throws -> Data {
        guard let data = Base64URL.decode(text) else { throw BenchmarkError(description: "bad base64url") }
        return data
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.padding(toLength: max(width, text.count + 1), withPad: " ", startingAt: 0)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
}
