import ArgumentParser
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import UnixSignals

/// `switchback server`: runs the backend companion until interrupted.
struct ServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Run the backend companion: code exchange, permission proxy, native-callback bridge, session hand-off, backend completion.",
        discussion: """
            With --config FILE (JSON, the shape of ServerConfiguration) it serves the routes the file turns \
            on, against the provider it names, on PostgreSQL when "postgresURL" is set. With \
            --with-emulator instead it starts a local emulator as the provider (a fake: never for \
            production) and serves every route but the permission proxy from memory, for trying the \
            flows out. One of the two is required. It prints its routes and limits, then runs until Ctrl-C.
            """
    )

    @Option(help: "A JSON server configuration.")
    var config: String?

    @Flag(help: "Run against a local emulator instead of a real provider (development only; prints a warning).")
    var withEmulator = false

    @Option(help: "The port to listen on, overriding the configuration (0 picks a free one).")
    var port: Int?

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
        // A production binary never starts against a fake provider by accident.
        switch (config != nil, withEmulator) {
        case (false, false):
            throw ValidationError("give --config FILE for a real provider, or --with-emulator to try the routes against a local emulator")
        case (true, true): throw ValidationError("--config and --with-emulator exclude each other")
        default: break
        }
    }

    func run() async throws {
        var logger = Logger(label: "switchback.server")
        logger.logLevel = .notice
        var emulator: Emulator?
        var configuration: ServerConfiguration
        if let config {
            do {
                configuration = try ServerConfiguration.load(config)
            } catch let error as SwitchbackError {
                throw ValidationError(error.message)
            }
        } else {
            let started = try await Self.developmentEmulator()
            emulator = started
            configuration = Self.developmentConfiguration(issuer: started.issuer)
        }
        if let port { configuration.port = port }
        let companion: Companion
        do {
            companion = try await Companion.start(configuration, shutdownSignals: [.sigint, .sigterm], logger: logger)
        } catch let error as SwitchbackError {
            await emulator?.stop()
            throw ValidationError(error.message)
        }
        var notes: [String] = []
        if let emulator {
            notes.append("WARNING: --with-emulator: the provider is a FAKE local emulator at \(emulator.issuer) (client \"backend\", user alice).")
            notes.append("WARNING: anyone can sign in as alice; never expose this server. The permission proxy is off.")
        }
        FileHandle.standardOutput.write(Data((companion.banner(configuration, notes: notes) + "Ctrl-C stops it.\n").utf8))
        try await companion.waitUntilStopped()
        await emulator?.stop()
    }

    static func developmentEmulator() async throws -> Emulator {
        var configuration = EmulatorConfiguration.defaults
        for index in configuration.clients.indices where configuration.clients[index].clientID == "backend" {
            configuration.clients[index].redirectURIs += ["http://127.0.0.1/bridge/callback", "http://127.0.0.1/complete"]
        }
        var logger = Logger(label: "switchback.emulator")
        logger.logLevel = .warning
        return try await Emulator.start(profile: .generic, configuration: configuration, port: 0, logger: logger)
    }

    static func developmentConfiguration(issuer: String) -> ServerConfiguration {
        ServerConfiguration(
            // The exchange asks for `web-session`, the scope the hand-off route requires of a token.
            provider: .init(issuer: issuer, clientID: "backend", clientSecret: "backend-secret", scopes: ["openid", "web-session"]),
            exchange: .init(redirectURIs: EmulatorConfiguration.defaultRedirectURIs),
            bridge: .init(schemes: ["com.example.app", "myapp"]),
            handOff: .init(requiredScope: "web-session", allowedRedirects: ["http://127.0.0.1:3000/", "https://web.example.com/"]),
            completion: .init(appLink: "https://app.example.com/signed-in"),
            associations: [AppAssociation(appIDs: ["A1B2C3D4E5.com.example.app"], paths: ["/appswitch*", "/signed-in*"])]
        )
    }
}
