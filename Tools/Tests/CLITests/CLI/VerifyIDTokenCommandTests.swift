import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// `switchback verify-id-token`, run as the built executable the way an integrator runs it.
@Suite("switchback verify-id-token", .serialized)
struct VerifyIDTokenCommandTests {
    // `executable` and `run` are shared with the other command tests.
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// The `switchback` binary that `swift build --build-tests` put beside the test bundle.
    static var executable: URL {
        get throws {
            var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            if directory.path.contains(".xctest/") {  // macOS bundles nest the binary
                while !directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
                directory.deleteLastPathComponent()
            }
            let binary = directory.appendingPathComponent("switchback")
            guard FileManager.default.isExecutableFile(atPath: binary.path) else {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: binary.path])
            }
            return binary
        }
    }

    static func run(_ arguments: [String], stdin: String? = nil, command: [String] = ["verify-id-token"]) async throws -> Outcome {
        let outcome = try await ChildProcess.run(try executable.path, command + arguments, stdin: stdin)
        return Outcome(status: outcome.status, stdout: outcome.stdout, stderr: outcome.stderr)
    }

    /// A signed token, its JWKS written to a file, and the arguments every run shares.
    static func fixture(_ claims: (TimeInterval) -> [String: JSONValue]) async throws -> (token: String, arguments: [String], cleanup: () -> Void) {
        let signer = try await TestTokenSigner(.es256, keyID: "cli-key")
        let now: TimeInterval = 1_700_000_000
        let token = try await signer.sign(claims(now))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-jwks-\(UUID().uuidString).json")
        try Data(TestTokenSigner.jwks([signer]).utf8).write(to: file)
        let arguments = ["--issuer", "https://id.example.test", "--client-id", "app", "--jwks", file.path, "--now", String(Int(now))]
        return (token, arguments, { try? FileManager.default.removeItem(at: file) })
    }

    static func claims(_ now: TimeInterval) -> [String: JSONValue] {
        [
            "iss": .string("https://id.example.test"), "aud": .string("app"), "sub": .string("user-42"), "nonce": .string("n-1"),
            "iat": .number(now), "exp": .number(now + 300), "acr": .string("urn:eid:high"),
        ]
    }

    @Test("a valid token prints its claims and exits 0")
    func validToken() async throws {
        let fixture = try await Self.fixture(Self.claims)
        defer { fixture.cleanup() }
        let outcome = try await Self.run(fixture.arguments + ["--nonce", "n-1", "--acr", "urn:eid:high", fixture.token])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("alg ES256, kid cli-key"))
        #expect(outcome.stdout.contains(#""sub" : "user-42""#))
    }

    @Test("the token can come from standard input")
    func tokenFromStandardInput() async throws {
        let fixture = try await Self.fixture(Self.claims)
        defer { fixture.cleanup() }
        let outcome = try await Self.run(fixture.arguments + ["-"], stdin: fixture.token + "\n")
        #expect(outcome.status == 0, "\(outcome.stderr)")
    }

    @Test("a failed check prints the typed error, no stack trace and not the token, and exits non-zero")
    func failedCheck() async throws {
        let fixture = try await Self.fixture(Self.claims)
        defer { fixture.cleanup() }
        let wrongNonce = try await Self.run(fixture.arguments + ["--nonce", "other", fixture.token])
        #expect(wrongNonce.status == 1)
        #expect(wrongNonce.stderr.hasPrefix("invalid: nonceMismatch:"))
        #expect(!wrongNonce.stderr.contains(fixture.token) && !wrongNonce.stdout.contains(fixture.token))
        let later = fixture.arguments.dropLast(2) + ["--now", "1700001000", fixture.token]
        let expired = try await Self.run(Array(later))
        #expect(expired.status == 1)
        #expect(expired.stderr.hasPrefix("invalid: tokenExpired:"))
        let lowAssurance = try await Self.run(fixture.arguments + ["--acr", "urn:eid:substantial", fixture.token])
        #expect(lowAssurance.stderr.hasPrefix("invalid: acrNotSatisfied:"))
    }

    @Test("usage errors exit non-zero with a message: neither --jwks nor --discovery")
    func usageError() async throws {
        let outcome = try await Self.run(["--issuer", "i", "--client-id", "c", "a.b.c"])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("exactly one of --jwks and --discovery"))
    }

    @Test("--discovery validates glewlwyd's ID token against its live JWKS", .enabled(if: Glewlwyd.enabled, Glewlwyd.skipReason))
    func discoveryAgainstGlewlwyd() async throws {
        let peer = try Glewlwyd.require()
        let client = Glewlwyd.client(peer, clientID: "native-es")
        let session = try await client.prepareAuthorization()
        let landing = try await Glewlwyd.login(session.authorizationURL, peer: peer)
        let credential = try await client.completeAuthorization(try Glewlwyd.callback(landing), session: session)
        let token = try #require(credential.idToken)
        let common = ["--issuer", peer.issuer, "--client-id", "native-es", "--discovery", peer.issuer]
        let valid = try await Self.run(common + ["--nonce", session.nonce, token])
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(valid.stdout.contains("alg ES256"))
        let wrongClient = try await Self.run(["--issuer", peer.issuer, "--client-id", "native-rs", "--discovery", peer.issuer, token])
        #expect(wrongClient.stderr.hasPrefix("invalid: audienceInvalid:"))
    }
}
