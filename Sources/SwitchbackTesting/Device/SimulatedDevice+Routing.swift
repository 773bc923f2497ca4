import Foundation
@_spi(SwitchbackInternals) import Switchback

/// The operating system's URL routing: custom schemes go to the app that registered them, https links
/// to the app whose association file claims them (when the rules allow), anything else to Safari.
extension SimulatedDevice {
    // MARK: Operating-system URL routing

    /// Where a URL is being opened from: an app (`UIApplication.open`), a page in a browser (and how its
    /// navigation started), or a browser outside the device that has applied the universal-link rule itself.
    enum Source {
        case app(String)
        case page(URL, IOSUserAgentRules.Navigation)
        case browser

        /// Who opens the URL, for ``IOSUserAgentRules/universalLinkOpensApp(_:from:)``.
        var opener: IOSUserAgentRules.Opener {
            switch self {
            case .app, .browser: .app
            case .page(let page, let navigation): .page(page, navigation)
            }
        }
    }

    /// Opens `url` as the system would. Returns false when nothing handles it.
    func open(_ url: URL, from source: Source) async -> Bool {
        navigationLog.append(url)
        let scheme = url.scheme?.lowercased() ?? ""
        if scheme == "http" || scheme == "https" {
            if let app = signInApp, IOSUserAgentRules.universalLinkOpensApp(url, from: source.opener), await claims(app, url) {
                record(.device, .app, "routes the universal link \(Redaction.describe(url)) to the app")
                return await bringForward(app.appID, with: .userActivity(url))
            }
            if await openAuthenticatorUniversalLink(url, from: source) { return true }
            // A page's link that no app claims stays in its browser.
            guard case .app = source else { return false }
            record(.device, .safari, "opens \(Redaction.describe(url)) in Safari")
            previous = foreground
            if foreground == signInApp?.appID, let running { await running.coordinator.appDidEnterBackground() }
            foreground = "safari"
            if let safari = externalSafari {
                background { _ in await safari.safariOpens(url) }
                return true
            }
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
        return await launchAuthenticator(scheme, with: url)
    }

    /// An authenticator app that claims the https link's host gets it, under the universal-link rule
    /// (``IOSUserAgentRules/universalLinkOpensApp(_:from:)``); false when none does or the rule keeps it in the browser.
    func openAuthenticatorUniversalLink(_ url: URL, from source: Source) async -> Bool {
        guard IOSUserAgentRules.universalLinkOpensApp(url, from: source.opener), let host = url.host?.lowercased(),
            let (scheme, authenticator) = authenticators.first(where: { $0.value.universalLinkHost == host })
        else { return false }
        record(.device, .authenticator, "opens \(authenticator.name) by its universal link")
        return await launchAuthenticator(scheme, with: url)
    }

    /// `UIApplication.open` with `universalLinksOnly`: an app that claims the https link gets it; otherwise
    /// nothing opens (no Safari).
    func openUniversalLinkOnly(_ url: URL) async -> Bool {
        navigationLog.append(url)
        guard IOSUserAgentRules.universalLinkOpensApp(url, from: .app), let host = url.host?.lowercased() else { return false }
        if let app = signInApp, await claims(app, url) {
            record(.device, .app, "routes the universal link \(Redaction.describe(url)) to the app")
            return await bringForward(app.appID, with: .userActivity(url))
        }
        guard let (scheme, authenticator) = authenticators.first(where: { $0.value.universalLinkHost == host }) else {
            record(.device, .device, "finds no app claiming \(host)")
            return false
        }
        record(.device, .authenticator, "opens \(authenticator.name) by its universal link")
        return await launchAuthenticator(scheme, with: url)
    }

    /// Brings the authenticator app forward with `link` (the system may terminate the app under test).
    private func launchAuthenticator(_ scheme: String, with link: URL) async -> Bool {
        _ = await bringForward(scheme, with: nil)
        if killAppOnHandOff { killApp() }
        background { await $0.runAuthenticator(scheme, link: link) }
        return true
    }

    private func runAuthenticator(_ scheme: String, link: URL) async {
        guard let authenticator = authenticators[scheme] else { return }
        if let app = authenticator.linkApp {
            let answer = await app.answer(link, network: network)
            for step in answer.steps { record(.authenticator, .provider, step) }
            if let next = answer.next {
                record(.authenticator, .device, "opens \(Redaction.describe(next))")
                if await open(next, from: .app(scheme)) { return }
            }
            await switchBack()
            return
        }
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
        case .fail(let hintCode): "the app fails (\(hintCode))"
        }
    }

    // MARK: Universal links

    struct Association {
        let appIDs: [String]
        let paths: [String]
    }

    private func claims(_ app: SimulatedApp, _ url: URL) async -> Bool {
        guard let host = url.host?.lowercased(), app.associatedDomains.contains(host), let association = await association(for: host) else {
            return false
        }
        guard association.appIDs.contains(app.appID) else { return false }
        return association.paths.contains { AssociationPattern.matches(url.path, pattern: $0) }
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
}
