import ArgumentParser
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback

/// `switchback verify-id-token`: validates an ID token with exactly the library's rules.
struct VerifyIDTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-id-token",
        abstract: "Validate an ID token with the library's rules and print its claims.",
        discussion: """
            Exit status 0 prints the claims as JSON; any failed check prints its error code and \
            message on standard error and exits 1. Pass - as TOKEN to read the token from standard \
            input (keeps it out of the shell history).
            """
    )

    @Option(help: "The issuer the token must name (iss).")
    var issuer: String

    @Option(name: .customLong("client-id"), help: "The client the token must be addressed to (aud).")
    var clientID: String

    @Option(help: "The provider's keys: a JWKS file path or an http(s) URL.")
    var jwks: String?

    @Option(help: "The issuer's discovery URL (or the issuer itself); its jwks_uri is used.")
    var discovery: String?

    @Option(help: "The nonce sent in the authorization request.")
    var nonce: String?

    @Option(name: .customLong("max-age"), help: "The max_age sent, in seconds; auth_time must be recent enough.")
    var maxAge: Int?

    @Option(help: "An acceptable acr value (repeat for several).")
    var acr: [String] = []

    @Option(help: "An accepted signature algorithm (repeat for several; default RS256 and ES256).")
    var alg: [String] = []

    @Option(help: "Validate as if the time were this Unix timestamp.")
    var now: Int?

    @Argument(help: "The compact ID token, or - to read it from standard input.")
    var token: String

    func validate() throws {
        guard (jwks == nil) != (discovery == nil) else {
            throw ValidationError("pass exactly one of --jwks and --discovery")
        }
    }

    func run() async throws {
        let clock: any WallClock = now.map { FixedClock(date: Date(timeIntervalSince1970: TimeInterval($0))) } ?? SystemClock()
        let logger = Logger(label: "switchback.verify-id-token")
        do {
            let keys = try await keyCache(clock: clock, logger: logger)
            let algorithms = alg.isEmpty ? SigningAlgorithms.idTokenDefaults : Set(alg)
            let validator = IDTokenValidator(
                issuer: issuer, clientID: clientID, allowedAlgorithms: algorithms,
                requiredACRValues: Set(acr), keys: keys, clock: clock
            )
            let validated = try await validator.validate(try readToken(), expectations: .init(nonce: nonce, maxAge: maxAge))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let header = "alg \(validated.algorithm)" + (validated.keyID.map { ", kid \($0)" } ?? "")
            print("valid ID token (\(header))")
            print(String(decoding: try encoder.encode(validated.allClaims), as: UTF8.self))
        } catch let error as SwitchbackError {
            FileHandle.standardError.write(Data("invalid: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    private func readToken() throws -> String {
        guard token == "-" else { return token }
        let input = FileHandle.standardInput.readDataToEndOfFile()
        return String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static let wellKnownPath = "/.well-known/openid-configuration"

    private func keyCache(clock: any WallClock, logger: Logger) async throws -> JWKSCache {
        let transport = URLSessionTransport()
        if let discovery {
            var discoveredIssuer = discovery
            if discoveredIssuer.hasSuffix(Self.wellKnownPath) { discoveredIssuer.removeLast(Self.wellKnownPath.count) }
            guard discoveredIssuer == issuer else {
                throw ValidationError("--discovery names issuer \(discoveredIssuer), not --issuer \(issuer)")
            }
            let metadata = try await DiscoveryClient(transport: transport, clock: clock, logger: logger)
                .metadata(for: .discovery(issuer: issuer))
            return JWKSCache(jwksURI: metadata.jwksURI, transport: transport, clock: clock, logger: logger)
        }
        let location = jwks ?? ""
        if let url = URL(string: location), url.scheme == "https" || url.scheme == "http" {
            return JWKSCache(jwksURI: url, transport: transport, clock: clock, logger: logger)
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: location))
        } catch {
            throw ValidationError("cannot read the JWKS file \(location): \(error.localizedDescription)")
        }
        return try JWKSCache(jwksJSON: data, clock: clock, logger: logger)
    }
}

/// A clock stopped at one instant, for `--now`.
struct FixedClock: WallClock {
    let date: Date

    func now() -> Date { date }
}
