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

    @Option(
        help: ArgumentHelp(
            "Ask the companion this configuration describes for PATH (/health or /ready) and exit 0 on 200, 1 otherwise: a Docker HEALTHCHECK.",
            valueName: "PATH"))
    var probe: String?

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw refuse("--port must be between 0 and 65535") }
        if let probe, !probe.hasPrefix("/") || probe.hasPrefix("//") { throw refuse("--probe takes a path, such as /health") }
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
            throw refuse("give the configuration file with --config FILE or SWITCHBACK_CONFIG")
        }
        let sources = ServerConfiguration.Sources(
            file: file, environment: environment,
            secretsDirectory: secrets ?? environment["SWITCHBACK_SECRETS_DIRECTORY"])
        var configuration: ServerConfiguration
        do {
            configuration = try await ServerConfiguration.load(sources, checkingKeys: probe == nil && !printConfig)
        } catch let error as SwitchbackError {
            throw refuse(error.message)
        }
        if let port { configuration.port = port }
        if let level = Logger.Level(rawValue: configuration.logLevel) { logger.logLevel = level }
        for name in ServerConfiguration.unknownEnvironmentNames(in: environment) where probe == nil {
            FileHandle.standardError.write(Data("warning: \(name) names no setting of switchback-companion; it is ignored\n".utf8))
        }
        if printConfig {
            // Printed first, so that a key file missing where this runs still shows the configuration; a
            // key the start could not use is then refused as any other unusable value is.
            FileHandle.standardOutput.write(Data((configuration.printed() + "\n").utf8))
            do {
                try await configuration.checkKeys()
            } catch let error as SwitchbackError {
                throw refuse(error.message)
            }
            return
        }
        if let probe {
            try await Self.probe(probe, configuration)
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

    /// GETs `path` from the companion `configuration` describes, on its port, through loopback when it listens
    /// on every address. Docker reads exit status 1 as unhealthy (and reserves 2), so every failure is 1.
    static func probe(_ path: String, _ configuration: ServerConfiguration) async throws {
        guard configuration.port != 0 else { throw unhealthy("the configuration's port is 0 (any free port): there is no port to probe") }
        let host =
            switch configuration.host {
            case "0.0.0.0", "": "127.0.0.1"
            case "::", "[::]": "[::1]"
            case let named: URLHost.bracketed(named)
            }
        guard let url = URL(string: "http://\(host):\(configuration.port)\(path)") else { throw unhealthy("no URL for \(host) and \(path)") }
        let transport = ServerTransport(timeout: 5, maximumResponseBytes: 64 << 10)
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: .get, url: url))
        } catch {
            await transport.shutdown()
            throw unhealthy("\(url.absoluteString): no answer (\(error))")
        }
        await transport.shutdown()
        let summary = "\(url.absoluteString): \(response.status) \(String(decoding: response.body.prefix(512), as: UTF8.self))"
        guard response.status == 200 else { throw unhealthy(summary) }
        FileHandle.standardOutput.write(Data("\(summary)\n".utf8))
    }

    /// A command line or configuration that cannot be used: ArgumentParser's usage error, or for a probe
    /// Docker's "unhealthy" (Docker documents 0 and 1 and reserves 2; ArgumentParser's would be 64).
    func refuse(_ message: String) -> any Error { probe == nil ? ValidationError(message) : Self.unhealthy(message) }

    /// Prints `message` and gives the status Docker reads as unhealthy.
    static func unhealthy(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
        return ExitCode(1)
    }
}
