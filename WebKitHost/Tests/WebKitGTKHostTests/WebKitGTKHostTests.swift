import Foundation
import Logging
import Switchback
import SwitchbackEmulator
import SwitchbackScenarios
import SwitchbackTesting
import Testing
import WebKitGTKHost

/// Whether the engine can run here; outside CI a missing engine or display skips the suite with the reason.
enum Engine {
    static let host: Result<WebKitGTKHost, any Error> = Result { try WebKitGTKHost() }
    static var unavailable: String? {
        if case .failure(let error) = host { return "WebKitGTK cannot run here: \(error)" }
        return nil
    }
    /// Under CI=true the suite must run: a missing engine is a failure, not a skip.
    static var runs: Bool { unavailable == nil || ProcessInfo.processInfo.environment["CI"] == "true" }
}

@Suite(
    "WebKitGTK host: the emulator's real pages in a real WebKit engine", .serialized,
    .enabled(if: Engine.runs, "WebKitGTK or a display is missing (run scripts/test.sh, which installs it and uses Xvfb)"))
struct WebKitGTKHostTests {
    static func host() throws -> WebKitGTKHost {
        if let reason = Engine.unavailable { throw EngineMissing(description: reason) }
        return try WebKitGTKHost()
    }

    struct EngineMissing: Error, CustomStringConvertible { let description: String }

    static let quiet = Logger(label: "quiet") { _ in SwiftLogNoOpLogHandler() }

    static func run(_ scenario: Scenario, host: WebKitGTKHost, during: (@Sendable (ScenarioRunner.Rig) async throws -> Void)? = nil) async throws
        -> ScenarioResult
    {
        try await ScenarioRunner.run(scenario, logger: quiet, userAgent: { host.routeLinks(through: $0, resolving: $1) }, during: during)
    }

    static func credential(_ result: ScenarioResult, _ host: WebKitGTKHost) throws -> Credential {
        switch result.outcome {
        case .success(.credential(let credential)): return credential
        case .success(.companion(let signIn)):
            Issue.record("the companion ran this sign-in (\(signIn)); the engine tests sign in with the app's own client")
            throw SwitchbackError(.invalidTokenResponse, "no credential")
        case .success(.presentation(let presentation)):
            Issue.record("a wallet answered this sign-in (\(presentation)); the engine tests sign in with the app's own client")
            throw SwitchbackError(.invalidTokenResponse, "no credential")
        case .failure(let error):
            let steps = result.transcript.map { "\($0.from.rawValue) → \($0.to.rawValue): \($0.text)" }.joined(separator: "\n")
            Issue.record("the sign-in failed: \(error)\n\(steps)\n\(host.observations.map(describe).joined(separator: "\n"))")
            throw error
        }
    }

    /// An observation with its URL's query values redacted, for failure messages.
    static func describe(_ observation: WebKitGTKHost.Observation) -> String {
        switch observation {
        case .decided(let url, let kind, let redirect, let gesture, let newWindow, let allowed):
            "decided \(kind) \(url.map(Redaction.describe) ?? "nil") redirect=\(redirect) gesture=\(gesture) newWindow=\(newWindow) allowed=\(allowed)"
        case .response(let url, let status): "response \(status) \(url.map(Redaction.describe) ?? "nil")"
        case .failed(let url, let domain, let code): "failed \(url.map(Redaction.describe) ?? "nil") \(domain) \(code)"
        case .finished(let url): "finished \(url.map(Redaction.describe) ?? "nil")"
        case .presented(let url, let seat): "presented \(seat) \(Redaction.describe(url))"
        case .notShown(let url, let reason): "not shown \(Redaction.describe(url)): \(reason)"
        case .navigated(let url, let kind, let gesture, let loaded):
            "navigated \(kind) \(url.map(Redaction.describe) ?? "nil") gesture=\(gesture) loaded=\(loaded)"
        case .routed(let url, let opened): "routed \(Redaction.describe(url)) opened=\(opened)"
        case .caught(let url): "caught \(Redaction.describe(url))"
        case .resolved(let url, let loopback): "resolved \(Redaction.describe(url)) to \(Redaction.describe(loopback))"
        case .left(let url, _, let target, let kind, let gesture):
            "left \(url.map(Redaction.describe) ?? "nil") for \(target.map(Redaction.describe) ?? "nil") by \(kind) gesture=\(gesture)"
        case .loaded(let url, let cookies): "loaded \(Redaction.describe(url)) cookies=\(cookies)"
        case .closed: "closed"
        }
    }

    /// The user signs in on the provider's password page once the engine shows it (waits up to 10 s).
    static func userSignsIn(_ host: WebKitGTKHost) async throws {
        for _ in 0..<400 {
            if await host.userSignsIn(username: "alice", password: "Secret-123") { return }
            try await Task.sleep(nanoseconds: 25_000_000)
        }
    }

    /// The navigations the engine put to the flow, with the flow's answers.
    static func decisions(_ host: WebKitGTKHost) -> [(url: URL, redirect: Bool, allowed: Bool)] {
        host.observations.compactMap {
            if case .decided(let url?, _, let redirect, _, _, let allowed) = $0 { return (url, redirect, allowed) }
            return nil
        }
    }

    @Test(
        "uaepass: the page's script fires the authenticator link, in production and with the staging-scheme bug",
        arguments: [
            AuthenticatorRule.Environment.production, .staging,
        ])
    func uaePass(_ environment: AuthenticatorRule.Environment) async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, environment: environment), host: host)
        // UAE Pass's userinfo carries no acr and says sub UAEPASS/<uuid> (its contract); the on-device sign-in shows in the transcript.
        #expect(try Self.credential(result, host).subject == "UAEPASS/9b1f7c2e-alice")
        #expect(result.transcript.contains { $0.text.contains("the user approves with biometrics") })
        // Staging pages emit the production scheme (the bug); the policy sends it to the staging app.
        let links = Self.decisions(host).filter { $0.url.scheme == "uaepass" }
        #expect(links.count == 1 && links.allSatisfy { !$0.allowed && !$0.redirect }, "one script navigation to uaepass://, cancelled")
        let opened = environment == .staging ? "opens UAE Pass (staging app)" : "opens UAE Pass (production app)"
        #expect(result.transcript.contains { $0.text == opened })
    }

    @Test(
        "the other presets that allow a WebView sign in on the engine: Swedish BankID's page polls collect until the app answered, then continues by its own script; ID.me; any OpenID provider",
        arguments: ["bankid-se", "idme", "generic"])
    func otherWebViewPresets(_ provider: String) async throws {
        let host = try Self.host()
        // ID.me and the generic provider show a password page: the user signs in on it, in the engine.
        let result = try await Self.run(Scenario(provider: provider, strategy: .webView), host: host) { _ in
            if provider != "bankid-se" { try await Self.userSignsIn(host) }
        }
        #expect(try Self.credential(result, host).subject == "9b1f7c2e-alice")
        let callback = try #require(Self.decisions(host).last { $0.url.scheme == "com.example.app" }, "the redirect URI reached the policy")
        #expect(!callback.allowed, "the redirect URI is intercepted, never loaded")
        if provider == "bankid-se" {
            // The autostart link leaves the WebView for the BankID app (its https universal link first); the
            // callback afterwards comes from the page's own polling script, not from a return link.
            let links = Self.decisions(host).filter { $0.url.host == "app.bankid.com" || $0.url.scheme == "bankid" }
            #expect(!links.isEmpty && links.allSatisfy { !$0.allowed }, "the autostart link was cancelled in the WebView and opened as an app")
            #expect(result.transcript.contains { $0.text.hasPrefix("opens BankID") }, "the device opened the BankID app")
        }
    }

    @Test(
        "every uaepass parameter shape and hand-off delivery (302, meta refresh) signs in through the engine",
        arguments: [
            "successURL", "double-encoded", "trailing-parameters", "no-closeondone", "handoff-meta-refresh", "handoff-302",
        ])
    func variant(_ variant: String) async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, variants: [variant]), host: host)
        // UAE Pass's userinfo carries no acr and says sub UAEPASS/<uuid> (its contract); the on-device sign-in shows in the transcript.
        #expect(try Self.credential(result, host).subject == "UAEPASS/9b1f7c2e-alice")
        #expect(result.transcript.contains { $0.text.contains("the user approves with biometrics") })
        let link = try #require(Self.decisions(host).first { $0.url.scheme?.hasPrefix("uaepass") == true })
        #expect(!link.allowed)
        // A 302 to the deep link reaches the policy as a redirect; script and meta refresh do not.
        #expect(link.redirect == (variant == "handoff-302"))
    }

    @Test(
        "decline in the authenticator: the provider's failure page answers access_denied, or cancelled",
        arguments: [
            ([String](), "access_denied"), (["decline-cancelled"], "cancelled"),
        ])
    func decline(variants: [String], error: String) async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, variants: variants, decision: .decline), host: host)
        guard case .failure(let failure) = result.outcome else {
            Issue.record("a declined sign-in succeeded")
            return
        }
        #expect(failure.code == .authorizationError && failure.oauthError?.error == error)
        #expect(host.observations.contains(.closed))
        #expect(Self.decisions(host).contains { $0.url.scheme == "com.example.app" && !$0.allowed }, "the error response was intercepted")
    }

    @Test("the saved successurl resumes in the same WebView with the same cookies, and the redirect URI is intercepted, never loaded")
    func resumeAndIntercept() async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, environment: .production), host: host)
        _ = try Self.credential(result, host)
        let observations = host.observations
        // One WebView from start to finish: presented once, the resume page loaded into it, closed once.
        #expect(observations.filter { if case .presented = $0 { true } else { false } }.count == 1)
        #expect(observations.filter { $0 == .closed }.count == 1)
        let resumed = try #require(observations.firstIndex { if case .loaded(let url, _) = $0 { url.path == "/uaepass/resume" } else { false } })
        // When the saved page was loaded, the engine still held the provider's session cookie from the first page.
        guard case .loaded(_, let cookies) = observations[resumed] else { return }
        #expect(cookies.contains("switchback_session"), "cookies held at resume: \(cookies)")
        let closed = try #require(observations.firstIndex(of: .closed))
        #expect(resumed < closed)
        #expect(Self.decisions(host).contains { $0.url.path == "/uaepass/resume" && $0.allowed })
        // The provider's 302 to the app's redirect URI reached the policy and was cancelled; it never loaded or failed.
        let callback = try #require(Self.decisions(host).first { $0.url.scheme == "com.example.app" && $0.url.path == "/oauth/callback" })
        #expect(callback.redirect && !callback.allowed)
        #expect(!observations.contains { if case .failed = $0 { true } else { false } })
        #expect(!observations.contains { if case .finished(let url?) = $0 { url.scheme == "com.example.app" } else { false } })
    }

    @Test("a custom-scheme load that is not put to the policy fails its provisional load; the failure alone carries the flow on")
    func customSchemeLoadFailure() async throws {
        // WebKitGTK asks before every navigation; iOS sometimes does not. The host lets custom
        // schemes through unasked, so the real engine fails those loads and only the failure reaches the core.
        let host = try WebKitGTKHost(customSchemesSkipPolicy: true)
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, environment: .staging), host: host)
        // UAE Pass's userinfo carries no acr and says sub UAEPASS/<uuid> (its contract); the on-device sign-in shows in the transcript.
        #expect(try Self.credential(result, host).subject == "UAEPASS/9b1f7c2e-alice")
        #expect(result.transcript.contains { $0.text.contains("the user approves with biometrics") })
        let failures = host.observations.compactMap { if case .failed(let url?, let domain, let code) = $0 { (url, domain, code) } else { nil } }
        #expect(failures.contains { $0.0.scheme == "uaepass" && $0.1 == "WebKitPolicyError" && $0.2 == 101 }, "the engine could not show uaepass://")
        // That failure is acted on; an interrupted frame load (102) and a cancelled request (302) are not failures.
        #expect(!WebKitGTKHost.loadFailureWasCancellation(errorDomain: "WebKitPolicyError", errorCode: 101))
        #expect(WebKitGTKHost.loadFailureWasCancellation(errorDomain: "WebKitPolicyError", errorCode: 102))
        #expect(WebKitGTKHost.loadFailureWasCancellation(errorDomain: "WebKitNetworkError", errorCode: 302))
        #expect(failures.contains { $0.0.scheme == "com.example.app" }, "nor the redirect URI, which the core then took as the callback")
        #expect(!Self.decisions(host).contains { $0.url.scheme != "http" && $0.url.scheme != "https" }, "no custom scheme was put to the policy")
        #expect(result.transcript.contains { $0.text == "opens UAE Pass (staging app)" })
    }

    @Test(
        "a provider that refuses embedded WebViews, behind a preset that allows a WebView: its 403 for the sign-in page fails the flow as userAgentRefused"
    )
    func providerRefusesWebView() async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "generic", strategy: .webView, variants: ["no-webview"]), host: host)
        guard case .failure(let failure) = result.outcome else {
            Issue.record("a refused WebView signed in")
            return
        }
        #expect(failure.code == .userAgentRefused)
        let observations = host.observations
        #expect(
            observations.contains { if case .response(let url?, 403) = $0 { url.path == "/authorize" } else { false } },
            "the engine saw the provider's 403")
        #expect(observations.contains(.closed))
    }

    @Test(
        "form_post auto-submit: the engine submits the provider's form (a provider answering by form_post unasked); the POST to the redirect URI is intercepted and the sign-in fails typed"
    )
    func formPostAutoSubmit() async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "generic", strategy: .webView, emulatorProfile: "apple-form-post"), host: host) { _ in
            try await Self.userSignsIn(host)
        }
        guard case .failure(let failure) = result.outcome else {
            Issue.record("a form_post answer in a WebView cannot sign in: its body is out of the app's reach")
            return
        }
        #expect(failure.code == .stateMissing)
        let submitted = host.observations.compactMap { observation -> (String, Bool)? in
            if case .decided(let url?, let kind, _, _, _, let allowed) = observation, url.scheme == "com.example.app" { return (kind, allowed) }
            return nil
        }
        #expect(
            submitted.count == 1 && submitted.allSatisfy { $0.0 == "form" && !$0.1 },
            "the page's script submitted the form, and the submission was cancelled: \(submitted.map(\.0))")
    }

    @Test(
        "a device name the name proxy cannot carry (not a DNS name, or a server off loopback) fails the sign-in typed, as userAgentFailed, in every user agent, and the engine loads nothing",
        arguments: [UserAgentStrategy.webView, .safariView, .systemBrowser])
    func nameProxyRefusal(strategy: UserAgentStrategy) async throws {
        for (name, server) in [("not a name", "http://127.0.0.1:1"), ("elsewhere.example", "https://example.org")] {
            let host = try Self.host()
            let result = try await ScenarioRunner.run(
                Scenario(provider: "generic", strategy: strategy), logger: Self.quiet,
                userAgent: { host.routeLinks(through: $0, resolving: $1.merging([name: URL(string: server)!]) { kept, _ in kept }) })
            guard case .failure(let failure) = result.outcome else {
                Issue.record("signed in with \(name) → \(server) in the device's names")
                continue
            }
            #expect(failure.code == .userAgentFailed, "\(name) → \(server)")
            let observations = host.observations
            #expect(observations.contains { if case .notShown = $0 { true } else { false } }, "\(observations.map(Self.describe))")
            #expect(!observations.contains { if case .finished = $0 { true } else { false } }, "the engine loaded a page")
        }
    }

    @Test("a provider that refuses embedded WebViews (MitID): the WebView strategy is refused with a typed error before the engine shows anything")
    func refusesEmbeddedWebViews() async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "mitid", strategy: .webView), host: host)
        guard case .failure(let failure) = result.outcome else {
            Issue.record("MitID in a WebView must be refused")
            return
        }
        #expect(failure.code == .strategyNotSupported)
        #expect(host.observations.isEmpty)
    }

    @Test("the user cancels while the provider's page is loading: userCancelled, the WebView is closed, nothing more is loaded")
    func cancelWhileLoading() async throws {
        let host = try Self.host()
        let result = try await Self.run(Scenario(provider: "uaepass", strategy: .webView, environment: .production), host: host) { _ in
            for _ in 0..<2000 where !host.observations.contains(where: { if case .presented = $0 { true } else { false } }) {
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            await host.userCancels()
        }
        guard case .failure(let failure) = result.outcome else {
            Issue.record("a cancelled sign-in succeeded")
            return
        }
        #expect(failure.code == .userCancelled)
        let observations = host.observations
        let closed = try #require(observations.firstIndex(of: .closed))
        #expect(!observations[closed...].contains { if case .loaded = $0 { true } else { false } })
        #expect(!result.transcript.contains { $0.text.contains("opens UAE Pass") }, "the authenticator never opened")
    }
}
