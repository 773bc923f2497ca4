import ArgumentParser
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackScenarios
import SwitchbackTesting
import WebKitGTKHost

/// `switchback-webkit`: the demo's sign-ins with iOS's user agents stood in for by a real WebKit engine.
@main
struct SwitchbackWebKit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switchback-webkit",
        abstract: "Switchback's demo on a real WebKit engine (WebKitGTK).",
        subcommands: [Demo.self]
    )
}

/// `switchback-webkit demo`: `switchback demo`'s scenarios, each user agent a WebKitGTK view.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Sign in end to end against the emulator, the user agents on a real WebKit engine, and narrate it.",
        discussion: """
            The same scenarios and options as `switchback demo`; the authentication session, the Safari view and \
            the WebView are WebKitGTK views with the cookie stores iOS gives them, and the pages' scripts run in \
            the engine. The simulated device still routes links, runs the authenticator app and the app's \
            lifecycle. The user's part on a page (signing in, confirming, tapping a link) is done in the engine. \
            Without a display, run it under xvfb-run. With --all: every preset with every user agent (those a \
            preset cannot use must be refused, typed), plus a decline, a kill during the hand-off, MitID's \
            backend completion, the authenticator on another phone (every preset whose pages offer it), MitID's \
            code display, a session hand-off to Safari and to the app's WebView, and a hybrid app whose own \
            WebView is the engine.
            """
    )

    @OptionGroup var options: DemoOptions

    @Option(help: "Write a PNG of every page a user agent shows, numbered in order, and an index.html beside the narration, to this folder.")
    var screenshots: String?

    func run() async throws {
        var logger = Logger(label: "switchback.webkit")
        logger.logLevel = .error
        let folder = screenshots.map { URL(fileURLWithPath: $0, isDirectory: true) }
        if let folder { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        var album = Album(folder: folder)
        var failed: [String] = []
        for (number, run) in plan().enumerated() {
            let host = try WebKitGTKHost()
            let engineUser = EngineUser(host: host, folder: folder, prefix: String(format: "%02d", number + 1))
            let user = Task { await engineUser.act() }
            let result = try await ScenarioRunner.run(
                run.scenario, logger: logger, userAgent: { host.routeLinks(through: $0, resolving: $1) },
                during: { rig in
                    // The user's other phone or code display, as the scenario gave them to the device.
                    let means = EngineUser.Means(otherPhone: await rig.device.otherPhone, codeDisplay: await rig.device.codeDisplay)
                    engineUser.means.withLock { $0 = means }
                })
            user.cancel()
            let seen = await user.value
            await host.dismiss()
            let narration = Narration.text(result) + seen.narration
            print(narration)
            let verdict = run.judge(result)
            if let verdict { print(verdict) }
            album.chapter(narration: narration + (verdict.map { "\n" + $0 } ?? ""), photos: seen.photos)
            if verdict?.hasPrefix("FAILED") == true { failed.append("\(run.scenario.provider) \(result.strategy)") }
        }
        if options.all {
            let hybrid = try await HybridRun.run(folder: folder, prefix: "hybrid")
            print(hybrid.narration)
            album.chapter(narration: hybrid.narration, photos: hybrid.photos)
            if !hybrid.signedIn { failed.append("the hybrid app") }
        }
        if let folder {
            try album.index().write(to: folder.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
            print("Screenshots and index.html written to \(folder.path)")
        }
        if !failed.isEmpty {
            print("\(failed.count) scenario(s) failed on the engine: \(failed.joined(separator: ", "))")
            throw ExitCode(1)
        }
    }

    /// One scenario and what it must end with.
    struct Run {
        let scenario: Scenario
        /// Whether the preset documents this user agent as unusable (the run must be refused, typed).
        let refused: Bool

        /// Nil when the run ended as it must; else a line saying how it did not.
        func judge(_ result: ScenarioResult) -> String? {
            switch (result.outcome, refused) {
            case (.success, false):
                if scenario.signOut, let failure = judgeSignOut(result) { return failure }
                guard scenario.handOff != nil else { return nil }
                switch result.handOff {
                case .success?: return nil
                case .failure(let error)?: return "FAILED: the hand-off: \(error)"
                case nil: return "FAILED: the app signed in but did not hand off"
                }
            case (.failure(let error), true) where error.code == .strategyNotSupported:
                return "Refused, as the preset says: \(error.message)"
            case (.failure(let error), false) where scenario.declines && error.code == .authorizationError:
                return "Declined, as the user chose: \(error.oauthError?.error ?? "\(error.code)")"
            case (.success, true): return "FAILED: \(result.strategy) signed in, but the preset says it cannot be used"
            case (.failure(let error), _): return "FAILED: \(error)"
            }
        }

        /// Nil when the sign-out went as it must: through the sign-in's user agent and back, or with nothing
        /// shown after an ephemeral sign-in.
        private func judgeSignOut(_ result: ScenarioResult) -> String? {
            guard case .success(.credential) = result.outcome else { return nil }
            switch result.signOut {
            case .success(let signOut)?:
                let returned: EndSessionOutcome = signOut.endSession?.state == nil ? .returnedWithoutState : .returned
                let expected: EndSessionOutcome? = result.strategy == .ephemeralBrowser ? nil : returned
                return signOut.userAgent == expected ? nil : "FAILED: the sign-out's page ended \(signOut.userAgent.map { "\($0)" } ?? "unshown")"
            case .failure(let error)?: return "FAILED: the sign-out: \(error)"
            case nil: return "FAILED: the app signed in but did not sign out"
            }
        }
    }

    /// The runs: the options' scenario, or with --all every preset with every user agent and the special cases.
    func plan() -> [Run] {
        guard options.all else { return options.scenarios().map { Run(scenario: $0, refused: false) } }
        var runs: [Run] = []
        for preset in ProviderPreset.all {
            for strategy in UserAgentStrategy.allCases {
                var scenario = options.scenario(provider: preset.name, strategy: strategy)
                let unusable =
                    !preset.strategies.contains(strategy)
                    || preset.unusable.contains { $0.strategy == strategy && ($0.environment == nil || $0.environment == scenario.environment) }
                // Every user agent that signed in signs out again through itself (the app's own credential only).
                scenario.signOut = !unusable && !DemoOptions.companionHeld(preset.name, backendCompletion: false)
                runs.append(Run(scenario: scenario, refused: unusable))
            }
        }
        var decline = options.scenario(provider: "uaepass", strategy: .webView)
        decline.decision = .decline
        var kill = options.scenario(provider: "uaepass", strategy: .webView)
        kill.killDuringHandOff = true
        var backend = options.scenario(provider: "mitid", strategy: .systemBrowser)
        backend.backendCompletion = true
        let otherPhones = DemoOptions.otherPhoneProviders.map { provider in
            var otherPhone = options.scenario(provider: provider)
            otherPhone.otherPhone = true
            return otherPhone
        }
        var codeDisplay = options.scenario(provider: "mitid")
        codeDisplay.codeDisplay = true
        let handOffs = HandOffDestination.allCases.map { destination in
            var handOff = options.scenario(provider: "generic", strategy: .systemBrowser)
            handOff.handOff = destination
            return handOff
        }
        // A wallet shows no page: the device opens the wallet app, which answers the companion; run for the
        // narration beside the providers.
        let wallet = options.scenario(provider: Scenario.wallet)
        return runs + ([decline, kill, backend] + otherPhones + [codeDisplay] + handOffs + [wallet]).map { Run(scenario: $0, refused: false) }
    }
}

extension Scenario {
    /// The user declines in the authenticator.
    var declines: Bool {
        if case .decline = decision { true } else { false }
    }
}
