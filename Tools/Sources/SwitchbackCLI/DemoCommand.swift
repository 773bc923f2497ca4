import ArgumentParser
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackScenarios
import SwitchbackTesting

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
            are never printed.
            """
    )

    @Option(help: "The provider preset (\(Scenario.providers.joined(separator: ", "))).")
    var provider = "uaepass"

    @Option(
        help:
            "The user agent (\(UserAgentStrategy.allCases.map(\.rawValue).joined(separator: ", "))); default: uaepass uses webview, others their preset's first."
    )
    var strategy: String?

    @Option(
        help:
            "How the authenticator returns (\(ReturnPattern.allCases.map(\.rawValue).joined(separator: ", "))); default: the first the preset can use."
    )
    var pattern: String?

    @Option(help: "production or staging (uaepass defaults to staging).")
    var environment: String?

    @Option(name: .customLong("variant"), help: "An emulator profile variant, repeatable (see `switchback emulator --help`).")
    var variants: [String] = []

    @Flag(help: "The system terminates the app while the user is in the authenticator; the sign-in continues after the relaunch.")
    var killDuringHandoff = false

    @Flag(help: "The user declines in the authenticator.")
    var decline = false

    @Flag(help: "The authenticator app is not installed.")
    var noAuthenticator = false

    @Flag(
        help:
            "The authenticator app is on another phone: the user scans the page's QR code there (bankid-se, singpass, mitid) or picks the page's number in the request sent there (uaepass)."
    )
    var otherPhone = false

    @Flag(help: "mitid only: the user signs in with a code display (user ID, its six-digit code, password) instead of the app.")
    var codeDisplay = false

    @Flag(
        help:
            "mitid only: the broker answers the app's companion, which completes the sign-in and links back to the app (MitID's backend completion).")
    var backendCompletion = false

    @Option(help: "Write the run as a Mermaid sequence diagram to this file.")
    var diagram: String?

    @Flag(help: "Run every provider preset with its default user agent, one after the other.")
    var all = false

    func validate() throws {
        guard Scenario.providers.contains(provider) else {
            throw ValidationError("unknown provider \(provider); known: \(Scenario.providers.joined(separator: ", "))")
        }
        if let strategy, UserAgentStrategy(rawValue: strategy) == nil {
            throw ValidationError("unknown strategy \(strategy); known: \(UserAgentStrategy.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let pattern, ReturnPattern(rawValue: pattern) == nil {
            throw ValidationError("unknown pattern \(pattern); known: \(ReturnPattern.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let environment, !["production", "staging"].contains(environment) { throw ValidationError("--environment is production or staging") }
        if backendCompletion, all || provider != "mitid" { throw ValidationError("--backend-completion goes with --provider mitid") }
        if otherPhone, all || !Self.otherPhoneProviders.contains(provider) {
            throw ValidationError(
                "--other-phone goes with --provider \(Self.otherPhoneProviders.joined(separator: ", ")): their pages offer another phone")
        }
        if codeDisplay, all || provider != "mitid" { throw ValidationError("--code-display goes with --provider mitid") }
        if otherPhone, noAuthenticator { throw ValidationError("--other-phone already means the authenticator is not on this phone") }
    }

    func run() async throws {
        guard #available(macOS 14, iOS 17, *) else { throw ValidationError("the demo needs macOS 14 or later") }
        var logger = Logger(label: "switchback.demo")
        logger.logLevel = .error
        let scenarios = all ? Scenario.providers.map { self.scenario(provider: $0) } : [scenario(provider: provider)]
        var failed = 0
        for scenario in scenarios {
            let result = try await ScenarioRunner.run(scenario, logger: logger)
            print(Narration.text(result))
            if case .failure = result.outcome { failed += 1 }
            if let diagram, scenarios.count == 1 {
                try Narration.mermaid(result).write(toFile: diagram, atomically: true, encoding: .utf8)
                print("Sequence diagram written to \(diagram)")
            }
        }
        if failed > 0 { throw ExitCode(1) }
    }

    /// The presets whose pages offer a phone other than the one signing in.
    static let otherPhoneProviders = ["uaepass", "mitid", "bankid-se", "singpass"]

    private func scenario(provider: String) -> Scenario {
        var strategy = self.strategy.flatMap(UserAgentStrategy.init(rawValue:))
        if strategy == nil, provider == "uaepass" { strategy = .webView }
        return Scenario(
            provider: provider, strategy: all ? (provider == "uaepass" ? .webView : nil) : strategy,
            pattern: pattern.flatMap(ReturnPattern.init(rawValue:)),
            environment: environment.map(AuthenticatorRule.Environment.init), variants: variants, decision: decline ? .decline : .approve(),
            authenticatorInstalled: !noAuthenticator, killDuringHandOff: killDuringHandoff, backendCompletion: backendCompletion,
            otherPhone: otherPhone, codeDisplay: codeDisplay
        )
    }
}

/// Turns a scenario's transcript into the narration and the sequence diagram.
enum Narration {
    static func text(_ result: ScenarioResult) -> String {
        let scenario = result.scenario
        var lines = [
            "== \(scenario.provider) (\(scenario.environment)), \(result.strategy)\(scenario.killDuringHandOff ? ", app killed during the hand-off" : "")\(scenario.otherPhone ? ", authenticator on another phone" : "")\(scenario.codeDisplay ? ", code display" : "") =="
        ]
        for (number, step) in result.transcript.enumerated() {
            lines.append(String(format: "%3d. ", number + 1) + "\(step.from.rawValue) → \(step.to.rawValue): \(step.text)")
        }
        switch result.outcome {
        case .success(.credential(let credential)):
            let identity = credential.identitySource == .userInfo ? " (identity from userinfo: the provider issues no ID token)" : ""
            lines.append(
                "Signed in: sub \(credential.subject ?? "?"), assurance \(credential.acr ?? "none reported")\(identity); token type \(credential.tokenType), access token \(Redaction.secret(credential.accessToken))."
            )
        case .success(.companion(let signIn)):
            let grant =
                signIn.session.map { "companion session \(Redaction.secret($0))" } ?? signIn.tokens.map {
                    "tokens from the companion, access token \(Redaction.secret($0.accessToken))"
                } ?? "nothing"
            lines.append("Signed in through the companion: sub \(signIn.subject), assurance \(signIn.acr ?? "none reported"); \(grant).")
        case .failure(let error):
            lines.append("Sign-in failed: \(error)")
        }
        return lines.joined(separator: "\n")
    }

    static func mermaid(_ result: ScenarioResult) -> String {
        var lines = ["sequenceDiagram"]
        let used = SimulatedDevice.Participant.allCases.filter { participant in
            result.transcript.contains { $0.from == participant || $0.to == participant }
        }
        for actor in used { lines.append("    participant \(actor.rawValue)") }
        for step in result.transcript {
            let text = step.text.replacingOccurrences(of: ";", with: ",").replacingOccurrences(of: "#", with: "").replacingOccurrences(
                of: "\"", with: "'")
            lines.append("    \(step.from.rawValue)->>\(step.to.rawValue): \(text)")
        }
        switch result.outcome {
        case .success: lines.append("    Note over App: signed in")
        case .failure(let error): lines.append("    Note over App: failed, \(error.code)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
