public import Foundation
@_spi(SwitchbackInternals) public import Switchback
public import SwitchbackTesting
import SwitchbackEmulator
import SwitchbackServer
import Crypto
public import Logging

/// One complete sign-in on the simulated device against the in-process emulator: which provider preset,
/// user agent, return pattern and environment, and what the user and the system do along the way.
public struct Scenario: Sendable {
    /// A preset name: uaepass, bankid-no, mitid, bankid-se, singpass, idme, generic.
    public var provider: String
    /// The user agent; nil takes the preset's first usable one.
    public var strategy: UserAgentStrategy?
    public var pattern: ReturnPattern?
    public var environment: AuthenticatorRule.Environment
    /// UAE Pass staging pages emit the production scheme (which integrators meet); on by default in staging.
    public var stagingSchemeBug: Bool
    /// Extra emulator profile variants (see `switchback emulator --help`).
    public var variants: [String]
    public var decision: AuthenticatorApp.Decision
    public var authenticatorInstalled: Bool
    /// The system terminates the app while the user is in the authenticator.
    public var killDuringHandOff: Bool
    /// How many times the authenticator delivers its return URL (2: a duplicate that must be refused).
    public var returnDeliveries: Int
    /// Another emulator profile than the preset's (a provider behaving unlike its preset expects).
    public var emulatorProfile: String?
    /// Whether authenticator apps with a universal-link domain (BankID's app.bankid.com) claim it.
    public var authenticatorUniversalLinks: Bool
    /// MitID only: the broker answers the companion, which completes the sign-in (MitID's backend
    /// completion) and links back to the app.
    public var backendCompletion: Bool
    /// The user's authenticator app is on another phone, not on this one: the user scans the page's QR
    /// code there (Swedish BankID, Singpass, MitID after the user ID) or picks the page's number in the
    /// request sent there (UAE Pass).
    public var otherPhone: Bool
    /// MitID only: the user has no app but a code display, whose code they type in the browser.
    public var codeDisplay: Bool
    /// After signing in, the app opens its web app signed in here (``SessionHandOff``); the generic preset only.
    public var handOff: HandOffDestination?
    /// After signing in with the app's own client, the app signs out through the same user agent
    /// (``SignInCoordinator/signOut(_:signedInWith:postLogoutRedirectURI:timeout:)``).
    public var signOut: Bool
    /// After signing in, this many API calls at once find the access token expired (``CredentialManager``,
    /// the emulator rotating refresh tokens strictly): one refresh, nobody signed out.
    public var concurrentRefresh: Int?
    /// After signing in, the app is relaunched before the device's first unlock (prewarming): the Keychain
    /// answers `errSecInteractionNotAllowed`, which is not a sign-out; the app waits for the unlock.
    public var lockedKeychain: Bool
    /// The wallet scenario only: what the wallet does wrong (``walletFaults``).
    public var walletFault: String?
    /// The wallet scenario only: `sd-jwt` (the default) or `mdoc`, the PID's format the companion asks for.
    public var walletFormat: String?
    /// The wallet scenario only: the companion's Client Identifier Prefix (`x509_hash`, the default, or
    /// `x509_san_dns`).
    public var walletClientID: String?
    /// The wallet scenario only: what the wallet holds (``walletHoldings``); the companion then asks for a PID
    /// or an mDL (`credential_sets`, OpenID4VP 1.0 §6.2).
    public var walletHolds: String?
    /// The wallet scenario only: while the wallet is in front, another app opens the app's return link with
    /// a code of its own; the sign-in must go on waiting for the wallet's.
    public var forgedReturn = false
    /// MitID through Signaturgruppen in a Safari view only: the app's redirect URI is its universal link
    /// with no page of its own there (``ProviderPreset/AppLinks/responseLink`` not given), as an app built for
    /// a broker page with a button would have it.
    public var withoutResponsePage = false

    public init(
        provider: String = "uaepass", strategy: UserAgentStrategy? = nil, pattern: ReturnPattern? = nil,
        environment: AuthenticatorRule.Environment? = nil,
        stagingSchemeBug: Bool = true, variants: [String] = [], decision: AuthenticatorApp.Decision = .approve(), authenticatorInstalled: Bool = true,
        killDuringHandOff: Bool = false, returnDeliveries: Int = 1, emulatorProfile: String? = nil, authenticatorUniversalLinks: Bool = true,
        backendCompletion: Bool = false, otherPhone: Bool = false, codeDisplay: Bool = false, handOff: HandOffDestination? = nil,
        signOut: Bool = false, concurrentRefresh: Int? = nil, lockedKeychain: Bool = false, walletFault: String? = nil,
        walletFormat: String? = nil, walletClientID: String? = nil, walletHolds: String? = nil
    ) {
        self.walletClientID = walletClientID
        self.walletHolds = walletHolds
        self.walletFault = walletFault
        self.walletFormat = walletFormat
        self.signOut = signOut
        self.concurrentRefresh = concurrentRefresh
        self.lockedKeychain = lockedKeychain
        self.handOff = handOff
        self.codeDisplay = codeDisplay
        self.otherPhone = otherPhone
        self.backendCompletion = backendCompletion
        self.authenticatorUniversalLinks = authenticatorUniversalLinks
        self.emulatorProfile = emulatorProfile
        self.returnDeliveries = returnDeliveries
        self.provider = provider
        self.strategy = strategy
        self.pattern = pattern
        self.environment = environment ?? (provider == "uaepass" ? .staging : .production)
        self.stagingSchemeBug = stagingSchemeBug
        self.variants = variants
        self.decision = decision
        self.authenticatorInstalled = authenticatorInstalled
        self.killDuringHandOff = killDuringHandOff
    }

    /// The preset names a scenario accepts, and ``wallet``.
    public static let providers = ProviderPreset.all.map(\.name) + [wallet]
    /// An identity wallet on the device, the companion its verifier (OpenID4VP): no provider, no user agent.
    public static let wallet = "wallet"
    /// The wallet faults a scenario accepts (`--wallet-fault`).
    public static var walletFaults: [String] { EmulatedWallet.Fault.allCases.map(\.rawValue) }
    /// The PID formats the wallet scenario can ask for.
    public static let walletFormats = ["sd-jwt", "mdoc"]
    /// The Client Identifier Prefixes the wallet scenario can use (`redirect_uri` needs a loopback companion URL).
    public static let walletClientIDs = ["x509_hash", "x509_san_dns"]
    /// What the wallet scenario's wallet can hold (`--wallet-holds`).
    public static var walletHoldings: [String] { EmulatedWallet.Holding.allCases.map(\.rawValue) }
}

/// Where a signed-in app opens its web app with a session hand-off.
public enum HandOffDestination: String, Sendable, CaseIterable {
    /// The system browser (Safari), through `UIApplication.open`.
    case systemBrowser = "system-browser"
    /// A WebView of the app's own.
    case webView = "webview"
}

/// What a scenario ended with.
public struct ScenarioResult: Sendable {
    public let scenario: Scenario
    public let strategy: UserAgentStrategy
    /// The credential the app validated, or what the companion handed back for a sign-in it ran.
    public let outcome: Result<SignInResult, SwitchbackError>
    /// The run, step by step, secrets redacted.
    public let transcript: [SimulatedDevice.Step]
    /// With ``Scenario/handOff``, after a sign-in: where the web app landed, or why it did not.
    public var handOff: Result<HandOffLanding, SwitchbackError>?
    /// With ``Scenario/signOut``, after a sign-in: what the sign-out did, or why it failed.
    public var signOut: Result<SignOut, SwitchbackError>?
    /// With ``Scenario/concurrentRefresh`` or ``Scenario/lockedKeychain``, after a sign-in: what each showed
    /// (a line for the narration), or why it failed.
    public var afterSignIn: [Result<String, SwitchbackError>] = []

    /// Whether what came after the sign-in (hand-off, sign-out, the session demos) went as it must.
    public var afterSignInSucceeded: Bool {
        if case .failure? = handOff { return false }
        if case .failure? = signOut { return false }
        return !afterSignIn.contains { if case .failure = $0 { true } else { false } }
    }
}

/// The page a session hand-off ended on, as its user agent shows it.
public struct HandOffLanding: Sendable {
    /// The page's address (the companion's `https://api.example.com/session`).
    public let url: URL
    /// The page's text; it names the signed-in account.
    public let text: String
}

/// The screens a real WebKit engine stands in for besides the app's sign-in user agent: Safari, the app's
/// own WebView outside a sign-in, and what the one in front shows.
public protocol EngineScreens: SafariScreen {
    /// The app loads `url` in a WebView of its own (`webView.load(URLRequest(url:))`).
    func appWebViewLoads(_ url: URL) async
    /// The page in front: its address and text; nil when nothing is shown.
    func frontPage() async -> (url: URL?, text: String)?
}

/// Runs scenarios: starts the emulator with the preset's profile, the app's companion serving its
/// association file, and a simulated device with the app and the authenticator installed.
public enum ScenarioRunner {
    public static let appID = "A1B2C3D4E5.com.example.app"
    public static let appDomain = "app.example.com"
    public static let links = ProviderPreset.AppLinks(
        scheme: URL(string: "com.example.app:/handoff"), universalLink: URL(string: "https://app.example.com/appswitch")
    )

    /// What a test can reach while a scenario runs.
    public struct Rig: Sendable {
        public let device: SimulatedDevice
        /// The first launch of the app.
        public let app: RunningApp

        /// Waits (up to 30 s of real time) until the narration has a step containing `text` and the
        /// device has nothing left to do by itself; false when it never comes.
        @discardableResult
        public func waitFor(_ text: String) async throws -> Bool {
            for _ in 0..<3000 {
                if await device.transcript.contains(where: { $0.text.contains(text) }), await device.isIdle { return true }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            return false
        }

        /// Waits (up to 30 s) until `count` timers are armed on the device clock; a timer is armed by a
        /// task of its own, shortly after the event that starts it.
        @discardableResult
        public func waitForTimers(_ count: Int) async throws -> Bool {
            for _ in 0..<3000 {
                if device.clock.sleeperCount >= count { return true }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            return false
        }
    }

    /// Makes a real user agent for one launch of the app, given the system it routes other apps' links
    /// through and the names the device resolves to loopback servers (the app's domain, the companion's
    /// public name), as a real phone's DNS would resolve them.
    public typealias UserAgentFactory = @Sendable (_ system: any URLOpener, _ hosts: [String: URL]) -> any UserAgentHost

    /// Runs `scenario`; `during`, when given, runs alongside the sign-in once it has started. `userAgent`
    /// replaces the device's simulated user agents with a real one (a WebKit engine's views): it is made for
    /// each launch of the app with the system it hands other apps' links to (the app's `URLOpener`); the
    /// device still routes links, runs the authenticator and the app's lifecycle.
    public static func run(
        _ scenario: Scenario, logger: Logger = Logger(label: "switchback.demo"), userAgent: UserAgentFactory? = nil,
        during: (@Sendable (Rig) async throws -> Void)? = nil
    ) async throws -> ScenarioResult {
        if scenario.provider == Scenario.wallet { return try await WalletScenario.run(scenario, logger: logger, during: during) }
        let setup = try await Setup(scenario)
        let emulator = try await Emulator.start(profile: setup.profile, configuration: setup.configuration, logger: quiet)
        // The sign-in's return paths, and one of the app's other universal links.
        let associations = [AppAssociation(appIDs: [appID], paths: ["/appswitch*", "/oauth/callback*", "/signed-in*", "/signed-out*", "/news/*"])]
        let keys = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-scenario-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: keys) }
        let companion: Companion
        do {
            var configuration = try setup.companionConfiguration(issuer: emulator.issuer, associations: associations, directory: keys)
            if scenario.handOff != nil { try setup.allowHandOff(&configuration, issuer: emulator.issuer) }
            companion = try await Companion.start(configuration, logger: quiet)
        } catch {
            await emulator.stop()
            throw error
        }
        do {
            let result = try await run(
                scenario, setup: setup, emulator: emulator, companion: companion, logger: logger, userAgent: userAgent, during: during)
            await emulator.stop()
            await companion.stop()
            return result
        } catch {
            await emulator.stop()
            await companion.stop()
            throw error
        }
    }

    static var quiet: Logger {
        var logger = Logger(label: "switchback.demo.servers")
        logger.logLevel = .error
        return logger
    }

    private static func run(
        _ scenario: Scenario, setup: Setup, emulator: Emulator, companion: Companion, logger: Logger, userAgent: UserAgentFactory?,
        during: (@Sendable (Rig) async throws -> Void)?
    ) async throws -> ScenarioResult {
        guard let issuer = URL(string: emulator.issuer) else { throw SwitchbackError(.invalidURL, "the emulator's issuer is not a URL") }
        // The companion answers for the app's domain (its association file) and for its own public name.
        let loopback = URL(string: "http://127.0.0.1:\(companion.port)")!
        let hosts = [appDomain: loopback, "api.example.com": loopback]
        let device = SimulatedDevice(hosts: hosts)
        if scenario.codeDisplay {
            let user = setup.configuration.users.first
            await device.setCodeDisplay(
                CodeDisplay(
                    username: user?.username ?? "alice", password: user?.password ?? "",
                    secret: MitID.codeDisplaySecret(for: user?.username ?? "alice"))
            )
        } else if scenario.otherPhone {
            let user = setup.configuration.users.first?.username ?? "alice"
            await device.setOtherPhone(OtherPhone(app: AuthenticatorApp(issuer: issuer), username: user, decision: scenario.decision))
        } else if scenario.authenticatorInstalled {
            for (scheme, isProduction) in setup.authenticatorSchemes {
                // In staging, the production app talks to production, which knows nothing of staging's requests.
                let backend = isProduction && scenario.environment == .staging ? URL(string: "http://127.0.0.1:9")! : issuer
                await device.installAuthenticator(
                    scheme: scheme, name: setup.authenticatorName(scheme), backend: backend,
                    behaviour: .init(scenario.decision, deliveries: scenario.returnDeliveries),
                    universalLinkHost: scenario.authenticatorUniversalLinks ? Setup.universalLinkHosts[scheme] : nil
                )
            }
        }
        await device.setKillAppOnHandOff(scenario.killDuringHandOff)
        let configuration = setup.client
        // A confidential client's code is redeemed by the app's companion, which also asks for permissions;
        // with a companion route the companion runs the whole sign-in and the app has no client.
        let backend =
            setup.backendClient == nil && setup.companionRoute == nil
            ? nil : CompanionClient(companion.baseURL, transport: device.network, logger: logger)
        let route = setup.companionRoute
        // A real engine's screens, when the user agent is one: Safari and the app's own WebView are then its too.
        let engine = LockedValue<(any EngineScreens)?>(nil)
        let app = await device.install(
            SimulatedApp(appID: appID, schemes: ["com.example.app"], associatedDomains: [appDomain]) { context in
                let host = userAgent?(device.browserSystem, hosts) ?? context.host
                if let screens = host as? any EngineScreens {
                    engine.withLock { $0 = screens }
                    await device.setSafari(screens)
                }
                if let route, let backend {
                    return SignInCoordinator(
                        .companion(backend, route: route), host: host, opener: context.opener,
                        journal: context.journal,
                        clock: context.clock,
                        logger: logger
                    )
                }
                let client = OIDCClient(configuration: configuration, provider: setup.providerSource(issuer: emulator.issuer), logger: logger)
                let authorizer: Authorizer = backend.map { .app(client, redeemingCodesAt: $0) } ?? .app(client)
                return SignInCoordinator(
                    authorizer, host: host, opener: context.opener, journal: context.journal,
                    clock: context.clock,
                    logger: logger)
            })
        // The shop's backend registers the order's statement with the companion, server to server.
        let companionURL = companion.baseURL
        let preset = setup.preset(issuer: issuer, companion: backend) {
            try await RegisteredStatement.register(
                Setup.payment, at: companionURL, backendToken: Setup.backendToken, transport: URLSessionTransport()
            ).statementID
        }
        var installed = true
        if let scheme = preset.authenticator?.schemes[scenario.environment] { installed = await device.canOpen(scheme: scheme) }
        let request: SignInRequest
        do {
            var links = links
            links.responseLink = setup.responseLink
            request = try await preset.request(
                strategy: scenario.strategy, pattern: scenario.pattern, environment: scenario.environment, links: links,
                authenticatorInstalled: installed
            )
        } catch let error as SwitchbackError {
            let transcript = await device.transcript
            await device.shutDown()
            return ScenarioResult(scenario: scenario, strategy: scenario.strategy ?? .systemBrowser, outcome: .failure(error), transcript: transcript)
        }
        let coordinator = app.coordinator
        let first = FirstLaunch()
        Task {
            do {
                await first.finish(.success(try await coordinator.signIn(request)))
            } catch {
                await first.finish(.failure(error))
            }
        }
        let hook = Task { try await during?(Rig(device: device, app: app)) }
        let outcome: Result<SignInResult, SwitchbackError>
        do {
            outcome = .success(try await finish(first, device: device, firstApp: app))
        } catch let error as SwitchbackError {
            outcome = .failure(error)
        }
        try await hook.value
        var handOff: Result<HandOffLanding, SwitchbackError>?
        if let destination = scenario.handOff, case .success(.credential(let credential)) = outcome {
            handOff = await Self.handOff(
                credential, to: destination, device: device, companion: companion, engine: engine.withLock { $0 }, logger: logger)
        }
        var afterSignIn: [Result<String, SwitchbackError>] = []
        if case .success(.credential(let credential)) = outcome, let client = await device.app?.coordinator.authorizer.client {
            if scenario.concurrentRefresh != nil, let reason = DemoOptions.appCannotRefresh(scenario.provider) {
                afterSignIn.append(.success("Concurrent refresh not run: \(reason)."))
            } else if let callers = scenario.concurrentRefresh {
                afterSignIn.append(await SessionDemos.concurrentRefresh(callers, credential, client: client, emulator: emulator, device: device))
            }
            if scenario.lockedKeychain {
                afterSignIn.append(await SessionDemos.lockedKeychain(credential, client: client, device: device))
            }
        } else if scenario.concurrentRefresh != nil || scenario.lockedKeychain {
            afterSignIn.append(
                .failure(
                    SwitchbackError(.invalidConfiguration, "the app holds no credential of its own to keep fresh (a companion sign-in, or none)")))
        }
        var signOut: Result<SignOut, SwitchbackError>?
        if scenario.signOut, case .success(.credential(let credential)) = outcome {
            signOut = await Self.signOut(credential, strategy: request.strategy, device: device)
        }
        var result = ScenarioResult(
            scenario: scenario, strategy: request.strategy, outcome: outcome, transcript: await device.transcript, handOff: handOff,
            signOut: signOut)
        result.afterSignIn = afterSignIn
        await device.shutDown()
        return result
    }

    /// Where the provider sends a sign-out back: the app's universal link when the sign-in returned by one
    /// and the user agent can catch it (not a Safari view: the provider redirects, and iOS opens no universal
    /// link from a redirect), else its custom scheme; both are registered at the emulator (`defaultPostLogoutRedirectURIs`).
    public static func postLogoutRedirectURI(after redirectURI: URL, strategy: UserAgentStrategy) -> URL {
        redirectURI.scheme == "https" && strategy != .safariView
            ? URL(string: "https://\(appDomain)/signed-out")! : URL(string: "com.example.app:/oauth/signed-out")!
    }

    /// The signed-in app keeps the credential with a ``CredentialManager`` and signs out through the
    /// coordinator, in the user agent the sign-in used.
    private static func signOut(_ credential: Credential, strategy: UserAgentStrategy, device: SimulatedDevice) async -> Result<
        SignOut, SwitchbackError
    > {
        do {
            guard let app = await device.app, let client = app.coordinator.authorizer.client else {
                throw SwitchbackError(.flowInterrupted, "the app is not running, or its sign-in was the companion's")
            }
            await device.narrate(.app, .app, "signs out")
            guard credential.userAgent == strategy else {
                throw SwitchbackError(.invalidConfiguration, "the credential does not record the user agent it was signed in with")
            }
            let manager = CredentialManager(client: client, store: InMemoryCredentialStore(), key: "main")
            try await manager.save(credential)
            // Without the strategy: the sign-out shows its page where the credential says the sign-in ran.
            let done = try await app.coordinator.signOut(
                manager,
                postLogoutRedirectURI: postLogoutRedirectURI(after: client.configuration.redirectURI, strategy: strategy), timeout: 60)
            guard try await manager.credential() == nil else { throw SwitchbackError(.invalidConfiguration, "the credential outlived the sign-out") }
            await device.narrate(
                .app, .app,
                "signed out: revoked \(done.revoked.isEmpty ? "nothing" : done.revoked.joined(separator: ", ")); provider page "
                    + (done.userAgent.map { "\($0)" } ?? "not shown"))
            return .success(done)
        } catch let error as SwitchbackError {
            return .failure(error)
        } catch {
            return .failure(SwitchbackError(.transportFailed, "the sign-out was interrupted (\(type(of: error)))"))
        }
    }

    /// The signed-in app opens the companion's `/session` page signed in, as an app opens its web app
    /// (`SessionHandOff`), and waits (up to 20 s) until the page in front names the signed-in account.
    private static func handOff(
        _ credential: Credential, to destination: HandOffDestination, device: SimulatedDevice, companion: Companion,
        engine: (any EngineScreens)?, logger: Logger
    ) async -> Result<HandOffLanding, SwitchbackError> {
        let handOff = SessionHandOff(companion: CompanionClient(companion.baseURL, transport: device.network, logger: logger), logger: logger)
        let webApp = companion.baseURL.appendingPathComponent("session")
        guard webApp.scheme == "https" else { return .failure(SwitchbackError(.invalidConfiguration, "the companion has no https name")) }
        do {
            guard let app = await device.app else { throw SwitchbackError(.flowInterrupted, "the app is not running") }
            switch destination {
            case .systemBrowser:
                try await handOff.open(webApp, accessToken: credential.accessToken, in: .systemBrowser(app.opener))
            case .webView:
                try await handOff.open(
                    webApp, accessToken: credential.accessToken,
                    in: .webView { url in
                        if let engine { await engine.appWebViewLoads(url) } else { await device.loadInAppScreen(url) }
                    })
            }
        } catch {
            return .failure(error as? SwitchbackError ?? SwitchbackError(.transportFailed, "\(type(of: error))"))
        }
        var front: (url: URL?, text: String)?
        for _ in 0..<400 {
            if let engine {
                front = await engine.frontPage()
            } else {
                front = await device.frontPage.map { ($0.url, $0.html) }
            }
            if let front, let url = front.url, url.path == webApp.path, let subject = credential.subject, front.text.contains(subject) {
                return .success(HandOffLanding(url: url, text: front.text))
            }
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        let shown = front.map { "\($0.url.map(Redaction.describe) ?? "nothing"): \($0.text.prefix(160))" } ?? "nothing"
        return .failure(SwitchbackError(.timedOut, "the web app did not open signed in within 20 s; in front: \(shown)"))
    }

    /// The credential, from the first launch or — when the app was terminated — from the launch that
    /// restored the sign-in from its journal.
    static func finish(_ first: FirstLaunch, device: SimulatedDevice, firstApp: RunningApp) async throws -> SignInResult {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let result = await first.result { return try result.get() }
            if let app = await device.app, app !== firstApp, let restored = app.restored {
                guard let flowID = restored.first else {
                    throw SwitchbackError(.flowInterrupted, "the app was relaunched but found no sign-in to continue")
                }
                return try await app.coordinator.result(of: flowID)
            }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        throw SwitchbackError(.timedOut, "the scenario did not finish within 60 s")
    }
}

/// The result of the sign-in started by the first launch, once it ends (it never does when the app is
/// terminated first).
actor FirstLaunch {
    var result: Result<SignInResult, any Error>?
    func finish(_ result: Result<SignInResult, any Error>) { self.result = result }
}
