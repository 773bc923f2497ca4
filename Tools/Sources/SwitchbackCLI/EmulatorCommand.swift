import ArgumentParser
import Foundation
import Logging
import SwitchbackEmulator
import UnixSignals

/// `switchback emulator`: runs the local provider until interrupted.
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run a local OpenID provider that behaves like a national eID provider.",
        discussion: """
            Prints the issuer URL, the clients and the users it serves, then runs until Ctrl-C. Point \
            an app (or the iOS Simulator) at the issuer. --config takes a JSON file with "clients" \
            and "users" in the shape of the defaults printed at start.
            """
    )

    @Option(help: "The provider to emulate (available: \(Profile.all.map(\.name).joined(separator: ", "))).")
    var profile = "generic"

    @Option(
        name: .customLong("variant"),
        help:
            "A variant of the profile, repeatable (uaepass: \(UAEPassOptions.Variant.allCases.map(\.rawValue).joined(separator: ", ")); bankid-se: app-link; for any hand-off: \(Profile.HandOffDelivery.allCases.map(\.rawValue).joined(separator: ", ")); for any profile: no-webview, which refuses embedded WebViews)."
    )
    var variants: [String] = []

    @Option(help: "The loopback port to listen on (0 picks a free one).")
    var port = 8484

    @Option(help: "A JSON file with the clients and users to serve.")
    var config: String?

    func validate() throws {
        if case .failure(let unknown) = Profile.named(profile, variants: variants) { throw ValidationError(unknown.description) }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        let configuration = try loadConfiguration()
        let profile = try Profile.named(self.profile, variants: variants).get()
        var logger = Logger(label: "switchback.emulator")
        logger.logLevel = .warning
        let emulator = try await Emulator.start(
            profile: profile, configuration: configuration, port: port, shutdownSignals: [.sigint, .sigterm], logger: logger)
        var lines = [
            "Switchback emulator, profile \(profile.name)\(variants.isEmpty ? "" : " (\(variants.joined(separator: ", ")))"): \(profile.summary)",
            "issuer: \(emulator.issuer)",
            "discovery: \(emulator.issuer)/.well-known/openid-configuration",
        ]
        for client in configuration.clients {
            let kind = client.secret == nil ? "public" : "confidential, \(client.authentication.rawValue)"
            lines.append(
                "client: \(client.clientID) (\(kind), ID token \(client.idTokenAlgorithm)); redirect URIs: \(client.redirectURIs.joined(separator: " "))"
            )
        }
        for user in configuration.users {
            lines.append("user: \(user.username) (sub \(user.subject))")
        }
        lines.append("Ctrl-C stops it.")
        // Written unbuffered: a script reading the issuer through a pipe must see it now, not at exit.
        FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        try await emulator.waitUntilStopped()
    }

    private func loadConfiguration() throws -> EmulatorConfiguration {
        guard let config else { return .defaults }
        do {
            return try JSONDecoder().decode(EmulatorConfiguration.self, from: Data(contentsOf: URL(fileURLWithPath: config)))
        } catch {
            throw ValidationError("cannot read the emulator configuration \(config): \(error)")
        }
    }
}
