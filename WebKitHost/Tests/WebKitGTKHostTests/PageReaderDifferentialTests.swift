import Foundation
import Switchback
import SwitchbackScenarios
import SwitchbackTesting
import Testing
import WebKitGTKHost

/// `SwitchbackTesting.WebPage` reads the emulator's and the companion's pages by patterns so that the
/// simulated device can act on them fast. Here the same pages run in the engine: each time a page starts a
/// navigation by itself (not the user's tap, not the app's load, not a redirect), its HTML at that moment
/// goes to the reader, and the reader must predict that navigation. The engine is the reference: a
/// mismatch means the reader is wrong.
@Suite(
    "WebKitGTK host: the simulated device's page reader against the engine", .serialized,
    .enabled(if: Engine.runs, "WebKitGTK or a display is missing (run scripts/test.sh, which installs it and uses Xvfb)"))
struct PageReaderDifferentialTests {
    /// What the reader says `page` does by itself: its own move at once (a script or refresh hand-off, an
    /// auto-submitting form) and, for a page that polls, where it continues once answered; each with whether
    /// it is a form submission.
    static func predicted(_ page: WebPage) -> [(url: URL, form: Bool)] {
        var moves: [(url: URL, form: Bool)] = []
        switch page.automaticMove {
        case .navigate(let url): moves.append((url, false))
        case .post(let url, _): moves.append((url, true))
        case nil: break
        }
        if let poll = page.poll { moves.append((poll.next, false)) }
        return moves
    }

    @Test(
        "every navigation a page starts by itself is the one the reader predicts: script and meta-refresh hand-offs, auto-submitting forms, polling pages that continue, the companion's completion page",
        arguments: [
            Scenario(provider: "uaepass", strategy: .webView),
            Scenario(provider: "uaepass", strategy: .webView, variants: ["handoff-meta-refresh"]),
            Scenario(provider: "generic", strategy: .webView, emulatorProfile: "apple-form-post"),
            Scenario(provider: "bankid-se", strategy: .webView),
            Scenario(provider: "bankid-se", strategy: .safariView),
            Scenario(provider: "singpass", strategy: .systemBrowser),
            Scenario(provider: "mitid", strategy: .systemBrowser, backendCompletion: true),
        ])
    func selfStartedNavigations(_ scenario: Scenario) async throws {
        let host = try WebKitGTKHostTests.host()
        host.capturesPages = true
        let runs = Task {
            // The user's part, as switchback-webkit's user does it: sign in, tap return links (and MitID's "Open" link),
            // once per page load, as a person does (a second tap on a link whose page is still loading cancels
            // that load and sends a one-time code twice).
            var actedOn = 0
            for _ in 0..<600 where !Task.isCancelled {
                let loads = host.observations.count { if case .finished = $0 { true } else { false } }
                if loads > actedOn, await host.userActs(username: "alice", password: "Secret-123", tapsHandOff: scenario.provider == "mitid") != nil {
                    actedOn = loads
                }
                try? await Task.sleep(nanoseconds: 100_000_000)
            }
        }
        let result = try await WebKitGTKHostTests.run(scenario, host: host)
        runs.cancel()
        let pages = host.observations.compactMap { observation -> (from: URL, html: String, to: URL, kind: String)? in
            guard case .left(let from?, let html, let to?, let kind, false) = observation, from.scheme == "http", !html.isEmpty else { return nil }
            return (from, html, to, kind)
        }
        #expect(!pages.isEmpty, "some page navigated by itself")
        for page in pages {
            let moves = Self.predicted(WebPage(url: page.from, html: page.html))
            guard let move = moves.first(where: { $0.url.absoluteString == page.to.absoluteString }) else {
                Issue.record(
                    "the engine left \(Redaction.describe(page.from)) for \(Redaction.describe(page.to)) by itself; the reader predicts \(moves.map { Redaction.describe($0.url) })"
                )
                continue
            }
            #expect(move.form == (page.kind == "form"), "a form submission exactly when the reader says the page posts")
        }
        // And the other way: a page the reader says moves at once did so in the engine. (A page's DOM changes
        // while it waits, so its navigations are matched by the page's URL, not by its HTML.)
        for page in pages {
            guard let immediate = WebPage(url: page.from, html: page.html).automaticMove else { continue }
            let target: URL
            switch immediate {
            case .navigate(let url), .post(let url, _): target = url
            }
            #expect(pages.contains { $0.from == page.from && $0.to.absoluteString == target.absoluteString }, "\(Redaction.describe(target))")
        }
        if case .failure(let error) = result.outcome, scenario.emulatorProfile == nil {
            let seen = host.observations.map(WebKitGTKHostTests.describe).joined(separator: "\n")
            let steps = result.transcript.map { "\($0.from.rawValue) → \($0.to.rawValue): \($0.text)" }.joined(separator: "\n")
            Issue.record("the sign-in failed: \(error)\non the engine:\n\(seen)\non the device:\n\(steps)")
        }
    }
}
