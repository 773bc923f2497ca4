import ArgumentParser
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackServer
import UnixSignals

/// `switchback-companion`: the production companion, alone. Unlike `switchback server` it carries no
/// emulator, simulated device or demo, so a deployment's image holds only the server and its
/// dependencies.
@main
struct CompanionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switchback-companion",
        abstract: "Run the app's backend companion against the provider its configuration names.",
        discussion: """
            Reads a JSON configuration (the shape of ServerConfiguration: the provider, the routes to \
            turn on, the limits, PostgreSQL), serves until SIGINT or SIGTERM, and prints its routes and \
            limits when it starts. A configuration it cannot use is refused before anything listens.
            """
    )

    @Option(help: "The JSON configuration file.")
    var config: String

    @Option(help: "The port to listen on, overriding the configuration (0 picks a free one).")
    var port: Int?

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        var logger = Logger(label: "switchback.companion")
        logger.logLevel = .notice
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.load(config)
        } catch let error as SwitchbackError {
            throw ValidationError(error.message)
        }
        if let port { configuration.port = port }
        let companion: Companion
        do {
            companion = try await Companion.start(configuration, shutdownSignals: [.sigint, .sigterm], logger: logger)
        } catch let error as SwitchbackError {
            throw ValidationError(error.message)
        }
        FileHandle.standardOutput.write(Data(companion.banner(configuration).utf8))
        try await companion.waitUntilStopped()
    }
}
