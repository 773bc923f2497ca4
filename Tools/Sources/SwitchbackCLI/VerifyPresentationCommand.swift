import ArgumentParser
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// `switchback verify-presentation`: verifies an SD-JWT presentation with exactly the library's rules
/// (`SDJWTVerifier`, RFC 9901 §7).
struct VerifyPresentationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-presentation",
        abstract: "Verify an SD-JWT presentation (RFC 9901) with the library's rules and print its disclosed claims.",
        discussion: """
            Exit status 0 prints the processed claims as JSON; any failed check prints its error code and \
            message on standard error and exits 1. With --audience and --nonce a Key Binding JWT is \
            required and checked against them. A credential with a status (Token Status List) has its \
            Status List Token fetched and checked with the same keys. Pass - as PRESENTATION to read it \
            from standard input.
            """
    )

    @Option(help: "The issuer's keys: a JWKS file.")
    var jwks: String

    @Option(help: "The issuer-signed JWT's typ the credential must carry (default dc+sd-jwt; - for any).")
    var type: String = "dc+sd-jwt"

    @Option(help: "The verifier's Client Identifier the Key Binding JWT must name (aud).")
    var audience: String?

    @Option(help: "The nonce of the presentation request the Key Binding JWT must carry.")
    var nonce: String?

    @Option(help: "Verify as if the time were this Unix timestamp.")
    var now: Int?

    @Argument(help: "The presentation (<issuer JWT>~<disclosures>~<KB-JWT>), or - to read it from standard input.")
    var presentation: String

    func validate() throws {
        guard (audience == nil) == (nonce == nil) else { throw ValidationError("pass both --audience and --nonce, or neither") }
    }

    func run() async throws {
        let clock: any WallClock = now.map { FixedClock(date: Date(timeIntervalSince1970: TimeInterval($0))) } ?? SystemClock()
        do {
            let keys = try JWKSCache(
                jwksJSON: try Data(contentsOf: URL(fileURLWithPath: jwks)), clock: clock, logger: Logger(label: "switchback.verify-presentation"))
            let statusLists = StatusListChecker(transport: URLSessionTransport(), issuers: FixedIssuerKeys(keys), clock: clock)
            let verifier = SDJWTVerifier(issuerKeys: keys, type: type == "-" ? nil : type, clock: clock, statusLists: statusLists)
            let binding = audience.flatMap { audience in nonce.map { SDJWTVerifier.KeyBinding(audience: audience, nonce: $0) } }
            let verified = try await verifier.verify(try readPresentation(), keyBinding: binding)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print("valid presentation (typ \(verified.type ?? "none"), \(verified.keyBound ? "key-bound" : "not key-bound"))")
            print(String(decoding: try encoder.encode(verified.claims), as: UTF8.self))
        } catch let error as SwitchbackError {
            FileHandle.standardError.write(Data("invalid: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }

    private func readPresentation() throws -> String {
        guard presentation == "-" else { return presentation }
        let input = FileHandle.standardInput.readDataToEndOfFile()
        return String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
