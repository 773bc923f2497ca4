public import Foundation
public import Switchback
import SwitchbackTesting
import CWebKitGTK
import CWebKitShim

/// Where a view's navigations go: the system for other schemes and universal links, the loopback servers
/// for the device's names, and what a browser loads itself, by `IOSUserAgentRules`.
extension WebKitGTKHost {
    /// Where the browsers send what they do not load (other schemes, universal links): the device's
    /// operating system, which opens the app that handles it. Without one such links open nothing.
    /// `hosts` names servers that run on loopback (`api.example.com` → `http://127.0.0.1:8080`): every view
    /// reaches their https under those names through a loopback proxy with a certificate made for them
    /// (``NameProxy``), so pages keep their real origins; an http navigation to one of the names loads the
    /// loopback address instead.
    @discardableResult
    public func routeLinks(through system: any URLOpener, resolving hosts: [String: URL] = [:]) -> Self {
        lock.withLock {
            self.system = system
            self.hosts = IOSUserAgentRules.names(hosts)
        }
        return self
    }

    /// The name proxy, started on first use when names were given.
    func nameProxy() async throws -> NameProxy? {
        let task = lock.withLock { () -> Task<NameProxy, any Error>? in
            if names == nil, !hosts.isEmpty {
                let hosts = hosts
                names = Task { try await NameProxy.start(hosts: hosts) }
            }
            return names
        }
        return try await task?.value
    }

    /// `url` on the loopback server its host name stands for, if ``routeLinks(through:resolving:)`` named it
    /// and the name proxy does not carry it (an http URL, or no proxy).
    func resolved(_ url: URL) -> URL? {
        if url.scheme?.lowercased() == "https", lock.withLock({ names != nil }) { return nil }
        return IOSUserAgentRules.loopbackAddress(of: url, in: lock.withLock { hosts })
    }

    /// What a browser (the Safari view, the authentication session) does with a navigation, by
    /// `IOSUserAgentRules`: the authentication session catches its callback and closes; a scheme other than
    /// the web's goes to the system; a universal link the rule lets open goes to the app that claims it, if
    /// one does; the rest the browser loads.
    func browserLoads(_ navigation: Presentation.Navigation, catching callback: (redirectURI: URL, caught: @Sendable (URL) async -> Void)?) async
        -> Bool
    {
        // A view already closed or replaced does nothing more: it neither catches nor routes anything.
        guard lock.withLock({ current === navigation.source }), let url = navigation.url else {
            return false
        }
        if let callback, IOSUserAgentRules.authenticationSessionCatches(url, redirectURI: callback.redirectURI) {
            observe(.caught(url))
            guard await closeCurrent(if: navigation.source) != nil else { return false }
            await callback.caught(url)
            return false
        }
        let system = lock.withLock { self.system }
        if !IOSUserAgentRules.browserLoads(url) {
            let opened = await system?.open(url) ?? false
            observe(.routed(url, opened: opened))
            return false
        }
        if let from = navigation.from, IOSUserAgentRules.universalLinkOpensApp(url, from: .page(from, navigation.rule)), let system,
            await system.openUniversalLink(url)
        {
            observe(.routed(url, opened: true))
            return false
        }
        if let loopback = resolved(url) {
            observe(.resolved(url, to: loopback))
            await loop.run { navigation.source.load(loopback) }
            return false
        }
        return true
    }
}
