public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// A phone, simulated over real HTTP: the operating system's URL routing (custom schemes per installed
/// app, universal links from real `apple-app-site-association` files, user-gesture rules), Safari with
/// its cookies, the app's user agents (authentication session, Safari view, WebView), authenticator apps
/// that answer a provider's authenticator endpoints, and the app lifecycle (background, foreground, kill,
/// cold launch). Time moves only through ``clock``.
///
/// ```swift
/// let device = SimulatedDevice(hosts: ["app.example.com": appSite])
/// await device.installAuthenticator(scheme: "uaepassstg", backend: emulatorURL)
/// let app = await device.install(SimulatedApp(appID: "A1B2C3D4E5.com.example.app", schemes: ["com.example.app"]) { context in
///     SignInCoordinator(.app(client), host: context.host, opener: context.opener, journal: store, clock: context.clock)
/// })
/// let credential = try await app.coordinator.signIn(request)
/// ```
public actor SimulatedDevice {
    public nonisolated let clock: ManualClock
    /// The user's answers to login forms.
    public nonisolated let user: (username: String, password: String)
    let transport: any HTTPTransport
    /// The network as the device's apps see it: names resolve through the same hosts map as the browsers'.
    public nonisolated let network: any HTTPTransport
    /// Where names resolve: a universal-link domain served on loopback (`app.example.com` → `http://127.0.0.1:8081`).
    let hosts: [String: URL]
    var authenticators: [String: Authenticator] = [:]
    var signInApp: SimulatedApp?
    var running: RunningApp?
    var associations: [String: Association] = [:]
    var jars: [String: CookieJar] = [:]
    private var tabs: [Int: Tab] = [:]
    private var nextTab = 0
    /// Which app is in front: an app ID, `safari`, or an authenticator's scheme.
    public internal(set) var foreground = "springboard"
    var previous = "springboard"
    /// Work the device is doing on its own (page loads, an authenticator answering).
    private var backgroundWork = 0
    /// Whether the device is doing nothing by itself: what happens next waits on the user or a timer.
    public var isIdle: Bool { backgroundWork == 0 }
    /// The step-by-step story of what happened, secrets redacted.
    public private(set) var transcript: [Step] = []
    /// Every URL a user agent was asked to load, the system was asked to open, or an app was handed,
    /// in order and unredacted: what a test searches for leaked secrets.
    public internal(set) var navigationLog: [URL] = []
    /// Hand-off buttons the user has tapped: each once, as a person would not keep tapping.
    var tappedHandOffs: Set<URL> = []
    /// The user's authenticator app on another phone, when it is there rather than on this one.
    public private(set) var otherPhone: OtherPhone?
    /// The user's code display (MitID), used on pages that offer one.
    public private(set) var codeDisplay: CodeDisplay?
    /// The requests the other phone has answered (by the status URL their page polls), each once.
    var otherPhoneAnswered: Set<URL> = []
    /// Safari from outside the device (a real engine's view), when set: https links no app claims open there.
    var externalSafari: (any SafariScreen)?

    /// The app's persistent storage: flow journals written here survive a kill.
    public nonisolated let storage: FileFlowJournalStore
    private let ownsStorage: Bool
    /// When set, the system terminates the app as soon as it opens an authenticator app.
    public var killAppOnHandOff = false

    public init(
        hosts: [String: URL] = [:], user: (username: String, password: String) = ("alice", "Secret-123"), clock: ManualClock = ManualClock(Date()),
        transport: any HTTPTransport = URLSessionTransport(), storage: URL? = nil
    ) {
        // Without a directory of its own choosing, the device's storage is a temporary one it removes when it goes.
        ownsStorage = storage == nil
        self.storage = FileFlowJournalStore(
            directory: storage ?? FileManager.default.temporaryDirectory.appendingPathComponent("switchback-device-\(UUID().uuidString)")
        )
        self.hosts = IOSUserAgentRules.names(hosts)
        self.user = user
        self.clock = clock
        self.transport = transport
        self.network = ResolvingTransport(hosts: self.hosts, base: transport)
    }

    deinit {
        if ownsStorage { try? FileManager.default.removeItem(at: storage.directory) }
    }

    // MARK: Installed apps

    /// How an authenticator app behaves when opened.
    public struct AuthenticatorBehaviour: Sendable {
        public var decision: AuthenticatorApp.Decision
        /// Whether the app opens the return URL from the link; otherwise the user switches back by hand.
        public var opensReturnURL: Bool
        /// How many times the return URL is delivered (a duplicate delivery must be refused, not redeemed).
        public var deliveries: Int

        public init(_ decision: AuthenticatorApp.Decision = .approve(), opensReturnURL: Bool = true, deliveries: Int = 1) {
            self.decision = decision
            self.opensReturnURL = opensReturnURL
            self.deliveries = deliveries
        }
    }

    struct Authenticator {
        let name: String
        let backend: URL
        var behaviour: AuthenticatorBehaviour
        /// The host whose https links the app claims as universal links (`app.bankid.com`).
        var universalLinkHost: String?
        /// An app that answers its links by itself (a wallet), in place of a provider's authenticator.
        var linkApp: (any LinkAnsweringApp)?
    }

    /// Installs an app for `scheme` that answers the links it is opened with by itself (an identity wallet):
    /// it works over the device's network and says which link it opens next.
    public func installApp(scheme: String, name: String, app: any LinkAnsweringApp, universalLinkHost: String? = nil) {
        authenticators[scheme.lowercased()] = Authenticator(
            name: name, backend: URL(string: "http://127.0.0.1:9")!, behaviour: AuthenticatorBehaviour(),
            universalLinkHost: universalLinkHost?.lowercased(), linkApp: app)
    }

    /// Installs an authenticator app for `scheme` whose backend is the provider at `backend`; with
    /// `universalLinkHost` it also claims that host's https links.
    public func installAuthenticator(
        scheme: String, name: String? = nil, backend: URL, behaviour: AuthenticatorBehaviour = AuthenticatorBehaviour(),
        universalLinkHost: String? = nil
    ) {
        authenticators[scheme.lowercased()] = Authenticator(
            name: name ?? "\(scheme) app", backend: backend, behaviour: behaviour, universalLinkHost: universalLinkHost?.lowercased()
        )
    }

    /// Puts the user's authenticator app on another phone: pages that offer a QR code or ask for the
    /// user's identifier are then answered from there.
    public func setOtherPhone(_ phone: OtherPhone?) {
        otherPhone = phone
    }

    /// Gives the user a code display: pages that offer one are answered with its current code.
    public func setCodeDisplay(_ display: CodeDisplay?) {
        codeDisplay = display
    }

    /// Makes `safari` (a real engine's view) the device's Safari: the https links the system opens in Safari
    /// (those no app claims, a session hand-off to the system browser) open there instead of in the
    /// device's own model of Safari; nil goes back to that model.
    public func setSafari(_ safari: (any SafariScreen)?) {
        externalSafari = safari
    }

    /// The system as a browser outside the device sees it (a real engine standing in for the app's user
    /// agents or for Safari): what it hands over is routed as links from a page are, and the narration shows
    /// the browser handing it over, not the app.
    public nonisolated var browserSystem: any URLOpener { BrowserHandOver(device: self) }

    public func setKillAppOnHandOff(_ kill: Bool) {
        killAppOnHandOff = kill
    }

    public func setBehaviour(_ behaviour: AuthenticatorBehaviour, forScheme scheme: String) {
        authenticators[scheme.lowercased()]?.behaviour = behaviour
    }

    public func uninstall(scheme: String) {
        authenticators[scheme.lowercased()] = nil
    }

    /// Whether an installed app handles `scheme` (`canOpenURL` with the scheme declared as queried).
    public func canOpen(scheme: String) -> Bool {
        authenticators[scheme.lowercased()] != nil || signInApp?.schemes.contains(scheme.lowercased()) == true
    }

    /// Installs the app under test and launches it.
    @discardableResult
    public func install(_ app: SimulatedApp) async -> RunningApp {
        signInApp = app
        let running = await launch()
        // The user opened it from the home screen.
        previous = foreground
        foreground = app.appID
        return running
    }

    /// The app under test, when it is running.
    public var app: RunningApp? { running }

    /// Whether `launch` is the app's current process (calls from a terminated one are dropped).
    func isAlive(_ launch: UUID) -> Bool { running?.id == launch }

    // MARK: Lifecycle

    /// Terminates the app under test (the system killing it in the background): its user agents close
    /// with it; what it persisted — journal files, the WebView's website data — stays.
    public func killApp() {
        guard let running else { return }
        record(.device, .device, "the system terminates the app")
        self.running = nil
        for (id, tab) in tabs where tab.owner == running.id { tabs[id] = nil }
        if foreground == signInApp?.appID { foreground = "springboard" }
    }

    /// Ends the device once a run is over: the app, its user agents and the installed apps go, and storage
    /// the device made is removed. The app's coordinator refers back to the device (its opener and host),
    /// so without this the device, and its storage folder, would outlive the run.
    public func shutDown() {
        running = nil
        signInApp = nil
        tabs = [:]
        authenticators = [:]
        if ownsStorage { try? FileManager.default.removeItem(at: storage.directory) }
    }

    /// The user switches back to the app from wherever they are, without a link.
    public func switchToApp() async {
        guard let signInApp else { return }
        record(.user, .app, "switches back to the app")
        _ = await bringForward(signInApp.appID, with: nil)
    }

    /// Opens `url` as if another app (a notification, Messages) did, while the sign-in runs; returns
    /// whether anything handled it.
    @discardableResult
    public func openFromAnotherApp(_ url: URL) async -> Bool {
        record(.user, .device, "taps a link in another app: \(Redaction.describe(url))")
        return await open(url, from: .app("com.apple.MobileSMS"))
    }

    /// Moves the clock on and lets pages that wait on a timer act (polls, refreshes).
    public func advance(by seconds: TimeInterval) async {
        clock.advance(by: seconds)
        await pollVisibleTabs()
    }

    func launch() async -> RunningApp {
        let app = signInApp!
        let id = UUID()
        let context = SimulatedApp.Context(
            host: DeviceUserAgentHost(device: self, launch: id), opener: DeviceURLOpener(device: self, appID: app.appID, launch: id), clock: clock,
            journal: LaunchJournal(device: self, launch: id), network: network
        )
        let coordinator = await app.makeCoordinator(context)
        let made = LockedValue<HybridBridge?>(nil)
        let bridge = app.hybrid.map { shell in
            HybridBridge(
                shell.configuration, companion: shell.companion,
                browser: shell.signInBrowser?({ made.withLock { $0 } }) ?? DeviceBridgeBrowser(device: self, launch: id, kind: shell.browser),
                loadInWebView: { [weak self] url in
                    if let screen = shell.screen { await screen.load(url) } else { await self?.loadInAppScreen(url, launch: id) }
                }
            )
        }
        made.withLock { $0 = bridge }
        let runningApp = RunningApp(id: id, coordinator: coordinator, bridge: bridge, opener: context.opener)
        running = runningApp
        record(.device, .app, "launches the app")
        if let shell = app.hybrid, let bridge, let screen = shell.screen {
            record(.app, .userAgent, "shows its web app \(Redaction.describe(shell.start)) in its own engine")
            await screen.open(shell.start) { await bridge.decide($0) == .allow }
        } else if let shell = app.hybrid, let bridge {
            let screen = newTab(Tab(kind: .webView(events: BridgeEvents(bridge: bridge)), owner: id, jar: "app-webview", isAppScreen: true))
            record(.app, .userAgent, "shows its web app \(Redaction.describe(shell.start))")
            background { await $0.navigate(screen, to: shell.start) }
        }
        let restored = (try? await coordinator.restore()) ?? []
        runningApp.restoredFlows.withLock { $0 = restored }
        if !restored.isEmpty {
            record(.app, .app, "reads back \(restored.count) interrupted sign-in\(restored.count == 1 ? "" : "s") from its journal")
        }
        return runningApp
    }

    /// Puts `appID` in front, delivering `link` to it, and tells the app under test when it leaves or
    /// enters the foreground. Returns false when the link was refused by the app.
    func bringForward(_ appID: String, with link: Delivery?) async -> Bool {
        let leaving = foreground
        if leaving != appID {
            previous = leaving
            foreground = appID
            if leaving == signInApp?.appID, let running { await running.coordinator.appDidEnterBackground() }
        }
        guard appID == signInApp?.appID else { return true }
        let running: RunningApp
        if let current = self.running { running = current } else { running = await launch() }
        var accepted = true
        var refused = false
        if case .url(let url)? = link, let bridge = running.bridge {
            switch await bridge.handleReturn(url) {
            case .notBridge:
                break
            case .loaded:
                record(.app, .app, "the hybrid bridge takes the link back to its web app")
                if leaving != appID { await running.coordinator.appDidBecomeActive() }
                return true
            case .rejected(let code):
                record(.app, .app, "the hybrid bridge refuses the link: \(code)")
                if leaving != appID { await running.coordinator.appDidBecomeActive() }
                return false
            }
        }
        switch link {
        case .url(let url)?:
            do { accepted = try await running.coordinator.handle(url: url) } catch {
                accepted = false
                refused = true
                record(.app, .app, "refuses the link: \(Self.describe(error))")
            }
        case .userActivity(let url)?:
            do { accepted = try await running.coordinator.handle(url: url) } catch {
                accepted = false
                refused = true
                record(.app, .app, "refuses the link: \(Self.describe(error))")
            }
        case nil:
            break
        }
        if link != nil, !accepted, !refused { record(.app, .app, "handles the link itself: it belongs to no sign-in") }
        if leaving != appID { await running.coordinator.appDidBecomeActive() }
        await pollVisibleTabs()
        return accepted
    }

    enum Delivery {
        case url(URL)
        case userActivity(URL)
    }

    static func describe(_ error: any Error) -> String {
        (error as? SwitchbackError).map { "\($0.code)" } ?? "\(type(of: error))"
    }

    /// Runs `work` in the background, counted in ``isIdle``.
    func background(_ work: @escaping @Sendable (SimulatedDevice) async -> Void) {
        backgroundWork += 1
        Task {
            await work(self)
            self.finishedWork()
        }
    }

    private func finishedWork() { backgroundWork -= 1 }

    // MARK: Transcript

    /// Who did something, for the narration and the sequence diagram (named so as not to hide Swift's `Actor`).
    public enum Participant: String, Sendable, CaseIterable {
        case user = "User"
        case app = "App"
        case userAgent = "UserAgent"
        case safari = "Safari"
        case provider = "Provider"
        case authenticator = "Authenticator"
        case otherPhone = "OtherPhone"
        case device = "iOS"
    }

    public struct Step: Sendable, Equatable {
        public let from: Participant
        public let to: Participant
        /// What happened; URLs are redacted.
        public let text: String
    }

    func record(_ from: Participant, _ to: Participant, _ text: String) {
        transcript.append(Step(from: from, to: to, text: text))
    }

    /// Adds a step the device did not see itself (what the app decided), to the narration.
    public func narrate(_ from: Participant, _ to: Participant, _ text: String) {
        record(from, to, text)
    }

    // MARK: Tabs (user agents)

    struct Tab {
        enum Kind {
            case safari
            case authenticationSession(redirectURI: URL, events: any TabEvents)
            case safariView(events: any TabEvents)
            case webView(events: any TabEvents)
        }

        var kind: Kind
        /// The running app instance that shows it; nil for Safari.
        var owner: UUID?
        var jar: String
        /// A hybrid app's own screen, not a sheet over it: closing the sign-in leaves it.
        var isAppScreen = false
        var page: WebPage?
        var generation = 0
    }

    func newTab(_ tab: Tab) -> Int {
        nextTab += 1
        tabs[nextTab] = tab
        return nextTab
    }

    func tab(_ id: Int) -> Tab? { tabs[id] }

    /// The user agents (sheets) the running app shows, not its own screen.
    func tabs(ownedByApp: Bool) -> [Int] {
        tabs.filter { $0.value.owner != nil && $0.value.owner == running?.id && !$0.value.isAppScreen }.map(\.key).sorted()
    }

    func closeAppTabs() {
        for id in tabs(ownedByApp: true) { tabs[id] = nil }
    }

    /// A hybrid app's own WebView.
    func appScreen() -> Int? {
        tabs.first { $0.value.isAppScreen && $0.value.owner == running?.id }?.key
    }

    func closeTab(_ id: Int) { tabs[id] = nil }

    func setPage(_ page: WebPage, of id: Int) { tabs[id]?.page = page }

    func presentTab(_ kind: Tab.Kind, jar: String, at url: URL) -> Int {
        closeAppTabs()
        let id = newTab(Tab(kind: kind, owner: running?.id, jar: jar))
        background { await $0.navigate(id, to: url) }
        return id
    }

    func webViewTab() -> Int? {
        tabs.first { id, tab in
            if case .webView = tab.kind, tab.owner == running?.id, !tab.isAppScreen { return true }
            return false
        }?.key
    }

    var visibleTabs: [Int] {
        tabs.filter { _, tab in tab.owner == nil ? foreground == "safari" : (foreground == signInApp?.appID && tab.owner == running?.id) }.map(\.key)
            .sorted()
    }

    /// Pages waiting for an app's answer check it once when they are seen again (and on each
    /// ``advance(by:)``), and move on when it has come.
    func pollVisibleTabs() async {
        for id in visibleTabs {
            guard let page = tabs[id]?.page else { continue }
            if let poll = page.poll {
                guard let response = try? await fetch(id, HTTPRequest(method: .get, url: poll.status)),
                    case .object(let answer)? = try? JSONDecoder().decode(JSONValue.self, from: response.body),
                    case .string(let status)? = answer["status"], status != "pending", status != "ignored"
                else { continue }
                record(.userAgent, .provider, "the waiting page sees the app has answered and continues")
                await navigate(id, to: poll.next)
            } else if page.refreshDelay != nil {
                await navigate(id, to: page.url)
            }
        }
    }
}
