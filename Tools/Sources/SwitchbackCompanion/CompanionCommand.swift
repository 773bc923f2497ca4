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
            turn on, the limits, PostgreSQL), then the values SWITCHBACK_<KEY> environment variables and \
            files in a secrets directory give (environment first, then secrets, then the file), serves \
            until SIGINT or SIGTERM, and prints its routes and limits when it starts. A configuration it \
            cannot use is refused, naming the key, before anything listens.
            """
    )

    @Option(help: "The JSON configuration file (default: $SWITCHBACK_CONFIG).")
    var config: String?

    @Option(help: "A directory of secret files named after their keys, such as provider-clientSecret (default: $SWITCHBACK_SECRETS_DIRECTORY).")
    var secrets: String?

    @Option(help: "The port to listen on, overriding the configuration (0 picks a free one).")
    var port: Int?

    @Flag(help: "Print the effective configuration (secrets redacted) and exit without listening.")
    var printConfig = false

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        var logger = Logger(label: "switchback.companion")
        logger.logLevel = .notice
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else {
            throw ValidationError("switchback-companion needs macOS 15 or later (swift-configuration)")
        }
        let environment = ProcessInfo.processInfo.environment
        // The file turns the routes on: without one, nothing would be served.
        guard let file = config ?? environment["SWITCHBACK_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            throw ValidationError("give the configuration file with --config FILE or SWITCHBACK_CONFIG")
        }
        let sources = ServerConfiguration.Sources(
            file: file, environment: environment,
            secretsDirectory: secrets ?? environment["SWITCHBACK_SECRETS_DIRECTORY"])
        var configuration: ServerConfiguration
        do {
            configuration = try await ServerConfiguration.load(sources)
        } catch let error as SwitchbackError {
            throw ValidationError(error.message)
        }
        if let port { configuration.port = port }
        for name in ServerConfiguration.unknownEnvironmentNames(in: environment) {
            FileHandle.standardError.write(Data("warning: \(name) names no setting of switchback-companion; it is ignored\n".utf8))
        }
        if printConfig {
            FileHandle.standardOutput.write(Data((configuration.printed() + "\n").utf8))
            return
        }
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
