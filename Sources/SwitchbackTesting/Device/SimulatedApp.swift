public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// The app under test: its identity on the device and how it builds its coordinator at each launch.
public struct SimulatedApp: Sendable {
    /// `TEAMID.bundle.id`, as association files name it.
    public let appID: String
    /// Custom schemes it registers (lowercase).
    public let schemes: Set<String>
    /// Domains of its associated-domains entitlement (`applinks:`).
    public let associatedDomains: Set<String>
    /// Set for a hybrid app, whose screen is a WebView showing a web app.
    public let hybrid: HybridShell?
    let makeCoordinator: @Sendable (Context) async -> SignInCoordinator

    /// What the device gives the app at launch.
    public struct Context: Sendable {
        public let host: any UserAgentHost
        public let opener: any URLOpener
        public let clock: ManualClock
        /// The journal store on the device's storage; a terminated launch can no longer write to it.
        public let journal: any FlowJournalStore
        /// The network as the app sees it (``SimulatedDevice/network``): the device's host names resolve.
        public let network: any HTTPTransport
    }

    public init(
        appID: String, schemes: Set<String>, associatedDomains: Set<String> = [], hybrid: HybridShell? = nil,
        makeCoordinator: @escaping @Sendable (Context) async -> SignInCoordinator
    ) {
        self.appID = appID
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.associatedDomains = Set(associatedDomains.map { $0.lowercased() })
        self.hybrid = hybrid
        self.makeCoordinator = makeCoordinator
    }
}

/// A hybrid app's shell (Capacitor and the like): at launch its WebView opens ``start``; every navigation
/// of that WebView is put to a ``HybridBridge`` made for the launch, which shows sign-ins in ``browser``;
/// links the system delivers go to the bridge before the app's coordinator. The device does what the
/// Apple adapter does: translate the WebView's and the browser's callbacks into the bridge's calls.
public struct HybridShell: Sendable {
    /// The secure browser the bridge shows sign-ins in.
    public enum Browser: Sendable {
        /// `ASWebAuthenticationSession` with the return scheme as its callback scheme: it catches the
        /// return link itself, which never goes through the system.
        case authenticationSession
        /// `SFSafariViewController`: the return link goes through the system's URL routing to the app.
        case safariView
    }

    public let configuration: HybridBridge.Configuration
    /// The backend companion the bridge asks.
    public let companion: CompanionClient
    public let browser: Browser
    /// The web app's page the WebView opens at launch.
    public let start: URL
    /// A WebView the device does not simulate (a real engine's); nil for the device's own.
    public let screen: (any HybridScreen)?
    /// A secure browser the device does not simulate (a real engine's authentication session), made at
    /// each launch; nil for the device's own ``browser``.
    public let signInBrowser: ExternalBridgeBrowser?

    public init(
        _ configuration: HybridBridge.Configuration, companion: CompanionClient, browser: Browser = .authenticationSession, start: URL? = nil,
        screen: (any HybridScreen)? = nil, signInBrowser: ExternalBridgeBrowser? = nil
    ) {
        self.configuration = configuration
        self.companion = companion
        self.browser = browser
        self.start = start ?? configuration.webOrigin
        self.screen = screen
        self.signInBrowser = signInBrowser
    }
}

/// Makes a hybrid app's secure browser from outside the device (a real engine's authentication session)
/// for one launch. It reports to the launch's bridge as the Apple adapter does, through
/// `HybridBridge.browserSessionCompleted(callbackURL:errorDomain:errorCode:)`; `bridge` gives that
/// bridge once the launch has made it.
public typealias ExternalBridgeBrowser = @Sendable (_ bridge: @escaping @Sendable () -> HybridBridge?) -> any HybridBridge.Browser

/// A hybrid app's WebView from outside the device (a real WebKit engine): the device opens it at launch
/// with the bridge's navigation rule and loads the bridge's returns into it.
public protocol HybridScreen: Sendable {
    /// Shows `start`; every navigation is put to `decide` first (true to load it).
    func open(_ start: URL, decide: @escaping @Sendable (URL?) async -> Bool) async
    func load(_ url: URL) async
}

/// Safari from outside the device (a real WebKit engine's view): the device opens in it the https links
/// it would open in its own model of Safari (``SimulatedDevice/setSafari(_:)``).
public protocol SafariScreen: Sendable {
    /// Brings Safari forward with `url` loading in a tab.
    func safariOpens(_ url: URL) async
}

/// One launch of the app under test.
public final class RunningApp: Sendable {
    let id: UUID
    public let coordinator: SignInCoordinator
    /// A hybrid app's bridge for this launch.
    public let bridge: HybridBridge?
    /// `UIApplication.open` for this launch.
    public let opener: any URLOpener
    let restoredFlows = LockedValue<[String]?>(nil)

    init(id: UUID, coordinator: SignInCoordinator, bridge: HybridBridge?, opener: any URLOpener) {
        self.id = id
        self.coordinator = coordinator
        self.bridge = bridge
        self.opener = opener
    }

    /// The sign-ins this launch read back from the journal; nil until it has looked.
    public var restored: [String]? { restoredFlows.withLock { $0 } }
}
