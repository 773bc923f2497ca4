import ArgumentParser
import Foundation
import Logging
import SwitchbackScenarios

/// `switchback demo`: one complete sign-in on the simulated device, narrated.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Sign in end to end against the emulator on a simulated phone, and narrate it.",
        discussion: """
            Starts the emulator and the app's companion on loopback ports, installs the app and the \
            authenticator on a simulated device, and signs in over real HTTP. The default is the hard \
            case: UAE Pass staging, whose pages open the production authenticator, in a WebView that \
            rewrites the link to the staging app and returns to the app. Codes, tokens and verifiers \
            are never printed. `switchback-webkit demo` (WebKitHost/) takes the same options and runs the \
            user agents on a real WebKit engine.
            """
    )

    @OptionGroup var options: DemoOptions

    @Option(help: "Write the run as a Mermaid sequence diagram to this file.")
    var diagram: String?

    func validate() throws {
        if diagram != nil, options.all { throw ValidationError("--diagram draws one sign-in; leave out --all") }
    }

    func run() async throws {
        var logger = Logger(label: "switchback.demo")
        logger.logLevel = .error
        var failed = 0
        for scenario in options.scenarios() {
            let result = try await ScenarioRunner.run(scenario, logger: logger)
            print(Narration.text(result))
            if case .failure = result.outcome { failed += 1 } else if !result.afterSignInSucceeded { failed += 1 }
            if let diagram {
                try Narration.mermaid(result).write(toFile: diagram, atomically: true, encoding: .utf8)
                print("Sequence diagram written to \(diagram)")
            }
        }
        if failed > 0 { throw ExitCode(1) }
    }
}
