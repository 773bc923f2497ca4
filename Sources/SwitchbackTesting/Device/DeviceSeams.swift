import Foundation
@_spi(SwitchbackInternals) import Switchback

/// The app's user agents on the simulated device; a terminated launch's calls do nothing. The seams hold
/// the device weakly: the device holds the running app, which holds them.
struct DeviceUserAgentHost: UserAgentHost {
    weak let device: SimulatedDevice?
    let launch: UUID

    func present(_ url: URL, strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents) async throws {
        guard let device, await device.isAlive(launch) else { throw CancellationError() }
        await device.present(strategy, redirectURI: redirectURI, events: events, at: url)
    }

    func load(_ url: URL) async {
        guard let device, await device.isAlive(launch) else { return }
        await device.loadInWebView(url)
    }

    func dismiss() async {
        guard let device, await device.isAlive(launch) else { return }
        await device.dismissUserAgent()
    }
}

/// `UIApplication.open` on the simulated device.
struct DeviceURLOpener: URLOpener {
    weak let device: SimulatedDevice?
    let appID: String
    let launch: UUID

    func open(_ url: URL) async -> Bool {
        guard let device, await device.isAlive(launch) else { return false }
        await device.record(.app, .device, "opens \(Redaction.describe(url))")
        return await device.open(url, from: .app(appID))
    }

    func openUniversalLink(_ url: URL) async -> Bool {
        guard let device, await device.isAlive(launch) else { return false }
        await device.record(.app, .device, "opens \(Redaction.describe(url)) if an app claims it")
        return await device.openUniversalLinkOnly(url)
    }
}

/// The system as a browser outside the device hands links to it (``SimulatedDevice/browserSystem``): a
/// link of another scheme, or an https link the browser found the user tapped across domains. The browser
/// has applied the universal-link rule with its engine's own gesture flag, so an https link is offered
/// only to the apps that claim it; when none does, the browser loads it itself.
struct BrowserHandOver: URLOpener {
    weak let device: SimulatedDevice?

    func open(_ url: URL) async -> Bool {
        guard let device else { return false }
        await device.record(.userAgent, .device, "hands over \(Redaction.describe(url))")
        return await device.open(url, from: .browser)
    }

    func openUniversalLink(_ url: URL) async -> Bool {
        guard let device else { return false }
        await device.record(.userAgent, .device, "hands over \(Redaction.describe(url)), the user's tap to another domain")
        return await device.openUniversalLinkOnly(url)
    }
}

/// The journal on the device's storage, as one launch of the app sees it: once that launch is
/// terminated its writes are lost, as a killed process's would be.
struct LaunchJournal: FlowJournalStore {
    weak let device: SimulatedDevice?
    let launch: UUID

    func save(_ journal: FlowJournal) async throws {
        guard let device, await device.isAlive(launch) else { return }
        try device.storage.save(journal)
    }

    func journals() async throws -> [FlowJournal] {
        try device?.storage.journals() ?? []
    }

    func remove(flowID: String) async throws {
        guard let device, await device.isAlive(launch) else { return }
        try device.storage.remove(flowID: flowID)
    }
}
