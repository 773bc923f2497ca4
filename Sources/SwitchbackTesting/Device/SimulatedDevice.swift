public import Foundation
public import Switchback

/// A phone, simulated over real HTTP: the operating system's URL routing (custom schemes per installed
/// app, universal links from real `apple-app-site-association` files, user-gesture rules), Safari with
/// its cookies, the app's user agents (authentication session, Safari view, WebView), authenticator apps
/// that answer a provider's authenticator endpoints, and the app lifecycle (background, foreground, kill,
/// cold launch). Time moves only through ``clock``.
///
/// ```swift
/// let device = SimulatedDevice(hosts: ["app.example.com": appSite])
/// await device.installAuthenticator(scheme: "uaepassstg", backend: emulatorURL)
/// let app = await device.install(SimulatedApp(appID: "TEAMID.com.example.app", schemes: ["com.example.app"]) { context in
///     SignInCoordinator(client: client, host: context.host, opener: context.opener, journal: store, clock: context.clock)
/// })
/// let credential = try await app.coordinator.signIn(request)
/// ```
public actor SimulatedDevice {
    public nonisolated let clock: ManualClock
    /// The user's answers to login forms.
    public nonisolated let user: (username: String, password: String)
    let transport: any HTTPTransport
    /// Where names resolve: a universal-link domain served on loopback (`app.example.com` → `http://127.0.0.1:8081`).
    let hosts: [String: URL]
    private var authenticators: [String: Authenticator] = [:]
    private var signInApp: SimulatedApp?
    private var running: RunningApp?
    private var associations: [String: Association] = [:]
    var jars: [String: CookieJar] = [:]
    private var tabs: [Int: Tab] = [:]
    private var nextTab = 0
    /// Which app is in front: an app ID, `safari`, or an authenticator's scheme.
    public private(set) var foreground = "springboard"
    private var previous = "springboard"
    /// Work the device is doing on its own (page loads, an authenticator answering).
    private var backgroundWork = 0
    /// Whether the device is doing nothing by itself: what happens next waits on the user or a timer.
    public var isIdle: Bool { backgroundWork == 0 }
    /// The step-by-step story of what happened, secrets redacted.
    public private(set) var transcript: [Step] = []

    /// The app's persistent storage: flow journals written here survive a kill.
    public nonisolated let storage: FileFlowJournalStore
    /// When set, the system terminates the app as soon as it opens an authenticator app.
    public var killAppOnHandOff = false

    public init(
        hosts: [String: URL] = [:], user: (username: String, password: String) = ("alice", "Secret-123"), clock: ManualClock = ManualClock(Date()),
        transport: any HTTPTransport = URLSessionTransport(),
        storage: URL = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-device-\(UUID().uuidString)")
    ) {
        self.storage = FileFlowJournalStore(directory: storage)
        self.hosts = Dictionary(uniqueKeysWithValues: hosts.map { ($0.key.lowercased(), $0.value) })
        self.user = user
        self.clock = clock
        self.transport = transport
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

    private struct Authenticator {
        let name: String
        let backend: URL
        var behaviour: AuthenticatorBehaviour
    }

    /// Installs an authenticator app for `scheme` whose backend is the provider at `backend`.
    public func installAuthenticator(scheme: String, name: String? = nil, backend: URL, behaviour: AuthenticatorBehaviour = AuthenticatorBehaviour()) {
        authenticators[scheme.lowercased()] = Authenticator(name: name ?? "\(scheme) app", backend: backend, behaviour: behaviour)
    }

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

    private func launch() async -> RunningApp {
        let app = signInApp!
        let id = UUID()
        let context = SimulatedApp.Context(
            host: DeviceUserAgentHost(device: self, launch: id), opener: DeviceURLOpener(device: self, appID: app.appID, launch: id), clock: clock,
            journal: LaunchJournal(device: self, launch: id)
        )
        let coordinator = await app.makeCoordinator(context)
        let runningApp = RunningApp(id: id, coordinator: coordinator)
        running = runningApp
        record(.device, .app, "launches the app")
        let restored = (try? await coordinator.restore()) ?? []
        runningApp.restoredFlows.withLock { $0 = restored }
        if !restored.isEmpty {
            record(.app, .app, "reads back \(restored.count) interrupted sign-in\(restored.count == 1 ? "" : "s") from its journal")
        }
        return runningApp
    }

    /// Puts `appID` in front, delivering `link` to it, and tells the app under test when it leaves or
    /// enters the foreground. Returns false when the link was refused by the app.
    private func bringForward(_ appID: String, with link: Delivery?) async -> Bool {
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
        switch link {
        case .url(let url)?:
            do { accepted = try await running.coordinator.handle(url: url) } catch {
                accepted = false
                refused = true
                record(.app, .app, "refuses the link: \(Self.describe(error))")
            }
        case .userActivity(let url)?:
            do { accepted = try await running.coordinator.handle(userActivity: url) } catch {
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

    // MARK: Operating-system URL routing

    /// Where a URL is being opened from: an app (`UIApplication.open`), or a page in a browser (with or
    /// without the user's tap).
    enum Source {
        case app(String)
        case page(URL, userGesture: Bool)
    }

    /// Opens `url` as the system would. Returns false when nothing handles it.
    func open(_ url: URL, from source: Source) async -> Bool {
        let scheme = url.scheme?.lowercased() ?? ""
        if scheme == "http" || scheme == "https" {
            if let app = signInApp, Self.universalLinkAllowed(url, from: source), await claims(app, url) {
                record(.device, .app, "routes the universal link \(Redaction.describe(url)) to the app")
                return await bringForward(app.appID, with: .userActivity(url))
            }
            if case .page = source { return false }
            record(.device, .safari, "opens \(Redaction.describe(url)) in Safari")
            previous = foreground
            if foreground == signInApp?.appID, let running { await running.coordinator.appDidEnterBackground() }
            foreground = "safari"
            let tab = newTab(Tab(kind: .safari, owner: nil, jar: "safari"))
            background { await $0.navigate(tab, to: url) }
            return true
        }
        if let app = signInApp, app.schemes.contains(scheme) {
            record(.device, .app, "routes \(Redaction.describe(url)) to the app")
            return await bringForward(app.appID, with: .url(url))
        }
        guard let authenticator = authenticators[scheme] else {
            record(.device, .device, "finds no app for \(scheme):")
            return false
        }
        record(.device, .authenticator, "opens \(authenticator.name)")
        _ = await bringForward(scheme, with: nil)
        if killAppOnHandOff { killApp() }
        background { await $0.runAuthenticator(scheme, link: url) }
        return true
    }

    /// iOS opens a universal link in its app when another app opens it, or when the user taps it on a
    /// page of another domain; never for a script or redirect navigation.
    static func universalLinkAllowed(_ url: URL, from source: Source) -> Bool {
        switch source {
        case .app: true
        case .page(let page, let gesture): gesture && page.host?.lowercased() != url.host?.lowercased()
        }
    }

    private func runAuthenticator(_ scheme: String, link: URL) async {
        guard let authenticator = authenticators[scheme] else { return }
        let app = AuthenticatorApp(issuer: authenticator.backend, transport: transport)
        let next: URL?
        do {
            next = try await app.respond(to: link, with: authenticator.behaviour.decision)
            record(.authenticator, .provider, Self.decisionText(authenticator.behaviour.decision))
        } catch {
            record(.authenticator, .authenticator, "cannot find the request (\(error)); the user gives up")
            await switchBack()
            return
        }
        if let next, authenticator.behaviour.opensReturnURL {
            var opened = false
            for _ in 0..<max(authenticator.behaviour.deliveries, 1) {
                record(.authenticator, .device, "opens \(Redaction.describe(next))")
                opened = await open(next, from: .app(scheme)) || opened
            }
            if opened { return }
        }
        await switchBack()
    }

    private func switchBack() async {
        record(.user, .device, "switches back by hand")
        _ = await bringForward(previous, with: nil)
    }

    static func decisionText(_ decision: AuthenticatorApp.Decision) -> String {
        switch decision {
        case .approve: "the user approves with biometrics"
        case .decline: "the user declines"
        case .ignore: "the user leaves without answering"
        }
    }

    // MARK: Universal links

    private struct Association {
        let appIDs: [String]
        let paths: [String]
    }

    private func claims(_ app: SimulatedApp, _ url: URL) async -> Bool {
        guard let host = url.host?.lowercased(), app.associatedDomains.contains(host), let association = await association(for: host) else { return false }
        guard association.appIDs.contains(app.appID) else { return false }
        return association.paths.contains { Self.pathMatches(url.path, pattern: $0) }
    }

    /// Reads `https://host/.well-known/apple-app-site-association` (through ``hosts``), as the system does
    /// when the app is installed.
    private func association(for host: String) async -> Association? {
        if let cached = associations[host] { return cached }
        guard let base = hosts[host], let url = URL(string: "/.well-known/apple-app-site-association", relativeTo: base)?.absoluteURL,
            let response = try? await transport.send(HTTPRequest(method: .get, url: url)), response.status == 200,
            case .object(let root)? = try? JSONDecoder().decode(JSONValue.self, from: response.body),
            case .object(let applinks)? = root["applinks"], case .array(let details)? = applinks["details"]
        else { return nil }
        var appIDs: [String] = []
        var paths: [String] = []
        for case .object(let detail) in details {
            if case .array(let ids)? = detail["appIDs"] { appIDs += ids.compactMap { if case .string(let id) = $0 { id } else { nil } } }
            if case .string(let id)? = detail["appID"] { appIDs.append(id) }
            if case .array(let components)? = detail["components"] {
                for case .object(let component) in components { if case .string(let path)? = component["/"] { paths.append(path) } }
            }
            if case .array(let list)? = detail["paths"] { paths += list.compactMap { if case .string(let path) = $0 { path } else { nil } } }
        }
        let association = Association(appIDs: appIDs, paths: paths)
        associations[host] = association
        record(.device, .device, "reads the apple-app-site-association file of \(host)")
        return association
    }

    /// AASA path patterns: `*` matches any run of characters, `?` one character.
    static func pathMatches(_ path: String, pattern: String) -> Bool {
        let regex = "^" + pattern.map { character -> String in
            switch character {
            case "*": ".*"
            case "?": "."
            default: NSRegularExpression.escapedPattern(for: String(character))
            }
        }.joined() + "$"
        return path.range(of: regex, options: .regularExpression) != nil
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

    /// Who did something, for the narration and the sequence diagram.
    public enum Actor: String, Sendable, CaseIterable {
        case user = "User"
        case app = "App"
        case userAgent = "UserAgent"
        case safari = "Safari"
        case provider = "Provider"
        case authenticator = "Authenticator"
        case device = "iOS"
    }

    public struct Step: Sendable, Equatable {
        public let from: Actor
        public let to: Actor
        /// What happened; URLs are redacted.
        public let text: String
    }

    func record(_ from: Actor, _ to: Actor, _ text: String) {
        transcript.append(Step(from: from, to: to, text: text))
    }

    // MARK: Tabs (user agents)

    struct Tab {
        enum Kind {
            case safari
            case authenticationSession(redirectURI: URL, events: UserAgentEvents)
            case safariView(events: UserAgentEvents)
            case webView(events: UserAgentEvents)
        }

        var kind: Kind
        /// The running app instance that shows it; nil for Safari.
        var owner: UUID?
        var jar: String
        var page: WebPage?
        var generation = 0
    }

    func newTab(_ tab: Tab) -> Int {
        nextTab += 1
        tabs[nextTab] = tab
        return nextTab
    }

    func tab(_ id: Int) -> Tab? { tabs[id] }

    /// The user agents the running app shows.
    func tabs(ownedByApp: Bool) -> [Int] {
        tabs.filter { $0.value.owner != nil && $0.value.owner == running?.id }.map(\.key).sorted()
    }

    func closeAppTabs() {
        for id in tabs(ownedByApp: true) { tabs[id] = nil }
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
            if case .webView = tab.kind, tab.owner == running?.id { return true }
            return false
        }?.key
    }

    private var visibleTabs: [Int] {
        tabs.filter { _, tab in tab.owner == nil ? foreground == "safari" : (foreground == signInApp?.appID && tab.owner == running?.id) }.map(\.key).sorted()
    }

    /// Pages waiting for an app's answer check it once when they are seen again (and on each
    /// ``advance(by:)``), and move on when it has come.
    private func pollVisibleTabs() async {
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

/// The app under test: its identity on the device and how it builds its coordinator at each launch.
public struct SimulatedApp: Sendable {
    /// `TEAMID.bundle.id`, as association files name it.
    public let appID: String
    /// Custom schemes it registers (lowercase).
    public let schemes: Set<String>
    /// Domains of its associated-domains entitlement (`applinks:`).
    public let associatedDomains: Set<String>
    let makeCoordinator: @Sendable (Context) async -> SignInCoordinator

    /// What the device gives the app at launch.
    public struct Context: Sendable {
        public let host: any UserAgentHost
        public let opener: any URLOpener
        public let clock: ManualClock
        /// The journal store on the device's storage; a terminated launch can no longer write to it.
        public let journal: any FlowJournalStore
    }

    public init(appID: String, schemes: Set<String>, associatedDomains: Set<String> = [], makeCoordinator: @escaping @Sendable (Context) async -> SignInCoordinator) {
        self.appID = appID
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.associatedDomains = Set(associatedDomains.map { $0.lowercased() })
        self.makeCoordinator = makeCoordinator
    }
}

/// One launch of the app under test.
public final class RunningApp: Sendable {
    let id: UUID
    public let coordinator: SignInCoordinator
    let restoredFlows = LockedValue<[String]?>(nil)

    init(id: UUID, coordinator: SignInCoordinator) {
        self.id = id
        self.coordinator = coordinator
    }

    /// The sign-ins this launch read back from the journal; nil until it has looked.
    public var restored: [String]? { restoredFlows.withLock { $0 } }
}
