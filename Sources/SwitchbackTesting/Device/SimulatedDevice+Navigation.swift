public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// How the simulated user agents load pages: each navigation is first put to the user agent's own rules
/// (the WebView asks the app; the authentication session watches for its callback; browsers hand other
/// schemes and universal links to the system), then fetched with the user agent's cookies; redirects are
/// followed, and the page's own moves (script, meta refresh, auto-submitting forms) and the user's
/// (signing in, tapping a return link) continue the navigation.
extension SimulatedDevice {
    func present(_ strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents, at url: URL) {
        let kind: Tab.Kind
        let jar: String
        switch strategy {
        case .systemBrowser:
            // Shares Safari's persistent cookies, not its session cookies (see fetch).
            (kind, jar) = (.authenticationSession(redirectURI: redirectURI, events: events), Self.sessionJar())
        case .ephemeralBrowser:
            (kind, jar) = (.authenticationSession(redirectURI: redirectURI, events: events), "ephemeral-\(UUID().uuidString)")
        case .safariView:
            (kind, jar) = (.safariView(events: events), "app-safari-view")
        case .webView:
            // WKWebsiteDataStore.default(): the WebView's cookies persist across launches of the app.
            (kind, jar) = (.webView(events: events), "app-webview")
        }
        record(.app, .userAgent, "shows a \(strategy) at \(Redaction.describe(url))")
        _ = presentTab(kind, jar: jar, at: url)
    }

    func loadInWebView(_ url: URL) {
        guard let id = webViewTab() else { return }
        record(.app, .userAgent, "loads the saved provider page \(Redaction.describe(url))")
        background { await $0.navigate(id, to: url) }
    }

    /// The running app loads `url` in its own WebView (`webView.load(URLRequest(url:))`): a hybrid app's
    /// screen, or a WebView it opens for the page.
    public func loadInAppScreen(_ url: URL) {
        guard let running else { return }
        loadInAppScreen(url, launch: running.id)
    }

    /// Loads `url` in the app's own WebView (a hybrid app's bridge return, or a hand-off); an app whose
    /// screen is not a WebView opens one, which loads everything and tells the app nothing.
    func loadInAppScreen(_ url: URL, launch: UUID) {
        guard isAlive(launch) else { return }
        let id: Int
        if let screen = appScreen() {
            id = screen
            record(.app, .userAgent, "loads \(Redaction.describe(url)) in its web app")
        } else {
            id = newTab(Tab(kind: .webView(events: PlainWebView()), owner: launch, jar: "app-webview", isAppScreen: true))
            record(.app, .userAgent, "opens a WebView of its own at \(Redaction.describe(url))")
        }
        background { await $0.navigate(id, to: url) }
    }

    /// Shows a hybrid app's sign-in in the secure browser its shell names, over the app's screen.
    func presentBridgeBrowser(_ url: URL, returnScheme: String, launch: UUID, kind: HybridShell.Browser) throws {
        guard isAlive(launch), let bridge = running?.bridge else { throw CancellationError() }
        let callback = try HybridBridge.callbackURL(returnScheme: returnScheme)
        let events = BridgeEvents(bridge: bridge)
        switch kind {
        case .authenticationSession:
            record(.app, .userAgent, "shows the sign-in in an authentication session at \(Redaction.describe(url))")
            _ = presentTab(.authenticationSession(redirectURI: callback, events: events), jar: Self.sessionJar(), at: url)
        case .safariView:
            record(.app, .userAgent, "shows the sign-in in a Safari view at \(Redaction.describe(url))")
            _ = presentTab(.safariView(events: events), jar: "app-safari-view", at: url)
        }
    }

    /// The user taps the link with `id` on the page in front (the app's screen or sheet, or Safari).
    /// Returns false when no such link is there.
    @discardableResult
    public func userTaps(linkWithID id: String) async -> Bool {
        guard let tabID = visibleTabs.last(where: { tab($0)?.page?.link(id: id) != nil }), let tab = tab(tabID), let link = tab.page?.link(id: id)
        else { return false }
        record(.user, tab.participant, "taps \"\(id)\"")
        await navigate(tabID, to: link, userGesture: true)
        return true
    }

    /// What the page in front shows: a hybrid app's screen, the sheet over it, or Safari's tab.
    public var frontPage: WebPage? {
        visibleTabs.last.flatMap { tab($0)?.page }
    }

    /// The page a hybrid app's own WebView shows.
    public var appScreenPage: WebPage? { appScreen().flatMap { tab($0)?.page } }

    /// The cookies a browser profile keeps for `host`: `safari` (shared with authentication sessions) or
    /// `app-webview` (the app's WebViews).
    public func cookies(in profile: String, host: String) -> [StoredCookie] {
        jars[profile]?.all(host: host) ?? []
    }

    func dismissUserAgent() {
        guard !tabs(ownedByApp: true).isEmpty else { return }
        record(.app, .userAgent, "closes the user agent")
        closeAppTabs()
    }

    /// The user closes the app's user agent (the Cancel button of the sheet).
    public func userClosesUserAgent() async {
        for id in tabs(ownedByApp: true) {
            guard let tab = tab(id) else { continue }
            record(.user, .userAgent, "closes the sign-in sheet")
            closeAppTabs()
            switch tab.kind {
            case .authenticationSession(_, let events), .safariView(let events), .webView(let events): await events.dismissed()
            case .safari: break
            }
        }
    }

    func navigate(_ id: Int, to url: URL, post fields: [(String, String)]? = nil, userGesture: Bool = false) async {
        await load(id, to: url, post: fields, userGesture: userGesture)
        await offerToOtherPhone(id)
    }

    private func load(_ id: Int, to url: URL, post fields: [(String, String)]?, userGesture: Bool) async {
        var request = fields.map { HTTPRequest.form(url, $0) } ?? HTTPRequest(method: .get, url: url)
        var gesture = userGesture
        // The page whose form is being sent: its CSP form-action holds the action and every redirect after it.
        var formPage = fields == nil ? nil : tab(id)?.page
        for _ in 0..<25 {
            guard let tab = tab(id) else { return }
            if let formPage, !formPage.formActionAllows(request.url) {
                record(tab.participant, tab.participant, "stops: the form's page does not allow \(Redaction.describe(request.url)) (CSP form-action)")
                if case .webView(let events) = tab.kind { await events.loadFailed(request.url, cancelledByPolicy: false) }
                return
            }
            let navigation: IOSUserAgentRules.Navigation = gesture ? (request.method == .post ? .submittedForm : .tappedLink) : .other
            guard await shouldLoad(id, tab, request.url, navigation) else { return }
            let response: HTTPResponse
            do {
                response = try await fetch(id, request)
            } catch {
                record(tab.participant, tab.participant, "cannot load \(Redaction.describe(request.url))")
                if case .webView(let events) = tab.kind { await events.loadFailed(request.url, cancelledByPolicy: false) }
                return
            }
            guard self.tab(id) != nil else { return }
            if (300..<400).contains(response.status), let location = response.headers["location"],
                let next = URL(string: location, relativeTo: request.url)?.absoluteURL
            {
                record(.provider, tab.participant, "redirects to \(Redaction.describe(next))")
                request = HTTPRequest(method: .get, url: next)
                gesture = false
                continue
            }
            if case .webView(let events) = tab.kind {
                await events.pageResponse(request.url, status: response.status)
                guard self.tab(id) != nil else { return }
            }
            let page = WebPage(
                url: request.url, status: response.status, html: String(decoding: response.body, as: UTF8.self),
                referrerPolicy: response.headers["referrer-policy"], contentSecurityPolicy: response.headers["content-security-policy"])
            setPage(page, of: id)
            record(.provider, tab.participant, "shows \"\(page.heading)\" (HTTP \(response.status))")
            if let move = page.automaticMove {
                switch move {
                case .navigate(let target):
                    request = HTTPRequest(method: .get, url: target)
                case .post(let action, let fields):
                    request = .form(action, fields)
                }
                gesture = false
            } else if let display = codeDisplay, let form = page.codeDisplayForm {
                record(.user, tab.participant, "types their user ID, the code the code display shows, and their password")
                request = .form(
                    form.action, form.fields + [("identifier", display.username), ("code", display.code()), ("password", display.password)])
                gesture = true
            } else if let phone = otherPhone, let form = page.otherDeviceForm {
                record(.user, tab.participant, "types their user ID, to answer on their other phone")
                request = .form(form.action, form.fields + [("identifier", phone.username)])
                gesture = true
            } else if let login = page.loginForm {
                record(.user, tab.participant, "signs in with username and password")
                request = .form(login.action, login.fields + [("username", user.username), ("password", user.password)])
                gesture = true
            } else if let confirm = page.confirmForm {
                record(.user, tab.participant, "taps \"\(confirm.label)\"")
                request = .form(confirm.action, confirm.fields)
                gesture = true
            } else if let link = page.returnLink, !tappedHandOffs.contains(link) {
                // Once per link: a page that shows the same link again after the tap (a universal link to
                // its own domain, which iOS does not hand to the app) leaves the user there.
                tappedHandOffs.insert(link)
                record(.user, tab.participant, "taps \"Return to the app\"")
                request = HTTPRequest(method: .get, url: link)
                gesture = true
            } else if let handOff = page.tapHandOff, !tappedHandOffs.contains(handOff.url) {
                // The user taps the page's "Open …" button once; a universal link opens its app only so.
                tappedHandOffs.insert(handOff.url)
                record(.user, tab.participant, "taps \"\(handOff.label)\"")
                request = HTTPRequest(method: .get, url: handOff.url)
                gesture = true
            } else {
                return
            }
            formPage = request.method == .post ? page : nil
        }
    }

    /// When the page in tab `id` waits for an app the user has on another phone: the QR code it shows is
    /// scanned there, or the number it shows is picked there; then the page sees the answer.
    private func offerToOtherPhone(_ id: Int) async {
        guard let phone = otherPhone, let page = tab(id)?.page, let poll = page.poll, !otherPhoneAnswered.contains(poll.status) else { return }
        if let source = page.qrCodeSource {
            // The page's script fetches the code it shows (Swedish BankID's changes every second).
            guard let content = try? await qrCode(id, source) else { return }
            otherPhoneAnswered.insert(poll.status)
            record(.user, .otherPhone, "scans the QR code with the app on the other phone")
            background { device in
                await device.answerOnOtherPhone(phone) {
                    try await phone.scan(content, rereading: { try await device.qrCode(id, source) })
                }
            }
        } else if let match = page.matchCode {
            otherPhoneAnswered.insert(poll.status)
            record(.user, .otherPhone, "opens the app's request on the other phone and picks the number the page shows")
            background { device in
                await device.answerOnOtherPhone(phone) { try await phone.answerRequest(matching: match) }
            }
        }
    }

    /// The QR code the page in tab `id` shows now, fetched from where its script fetches it.
    private func qrCode(_ id: Int, _ source: URL) async throws -> String {
        let response = try await fetch(id, HTTPRequest(method: .get, url: source))
        guard case .object(let answer) = try JSONDecoder().decode(JSONValue.self, from: response.body), case .string(let content)? = answer["qr"]
        else { throw AuthenticatorAppError.providerRefused(status: response.status) }
        return content
    }

    private func answerOnOtherPhone(_ phone: OtherPhone, _ answer: @Sendable () async throws -> Void) async {
        do {
            try await answer()
            record(.otherPhone, .provider, Self.decisionText(phone.decision))
        } catch {
            record(.otherPhone, .otherPhone, "cannot answer the request (\(error))")
        }
        await pollVisibleTabs()
    }

    /// The user agent's rule for one navigation: true to fetch it.
    private func shouldLoad(_ id: Int, _ tab: Tab, _ url: URL, _ navigation: IOSUserAgentRules.Navigation) async -> Bool {
        navigationLog.append(url)
        let web = IOSUserAgentRules.browserLoads(url)
        // What this simulated browser can fetch: http and https; `about:`, `data:` and `blob:` stay in the
        // browser but show nothing here.
        let fetchable = ["http", "https"].contains(url.scheme?.lowercased() ?? "")
        let from = tab.page?.url ?? url
        switch tab.kind {
        case .webView(let events):
            if !web { record(.userAgent, .app, "asks whether to load \(Redaction.describe(url))") }
            guard await events.shouldLoad(url) else {
                if self.tab(id) != nil {
                    record(.app, .userAgent, web ? "cancels the navigation to \(Redaction.describe(url))" : "cancels that navigation")
                }
                return false
            }
            return fetchable
        case .authenticationSession(let redirectURI, let events):
            if IOSUserAgentRules.authenticationSessionCatches(url, redirectURI: redirectURI) {
                record(.userAgent, .app, "the authentication session catches its callback \(Redaction.describe(url))")
                closeTab(id)
                await events.callback(.redirect(url))
                return false
            }
            if !web {
                _ = await open(url, from: .page(from, navigation))
                return false
            }
            // A tapped universal link of an authenticator app (MitID's) leaves the session for that app.
            guard fetchable else { return false }
            return !(await openAuthenticatorUniversalLink(url, from: .page(from, navigation)))
        case .safariView, .safari:
            if !web {
                _ = await open(url, from: .page(from, navigation))
                return false
            }
            // A universal link the user tapped on another domain leaves for its app.
            guard fetchable else { return false }
            return !(await open(url, from: .page(from, navigation)))
        }
    }

    /// An authentication session's own cookie store: Apple documents that it shares persistent cookies
    /// with Safari, so session cookies set in it stay in it, and Safari's session cookies do not reach it.
    static let sessionJarPrefix = "authentication-session-"
    static func sessionJar() -> String { sessionJarPrefix + UUID().uuidString }

    /// Sends `request` with the tab's cookies and User-Agent, resolving names through ``hosts``.
    func fetch(_ id: Int, _ request: HTTPRequest) async throws -> HTTPResponse {
        guard let tab = tab(id) else { throw CancellationError() }
        var request = request
        let original = request.url
        request.url = resolve(original)
        if case .webView = tab.kind {
            request.headers["User-Agent"] = IOSUserAgentRules.webViewUserAgent
        } else {
            request.headers["User-Agent"] = IOSUserAgentRules.safariUserAgent
        }
        let shared = tab.jar.hasPrefix(Self.sessionJarPrefix)
        let cookie =
            shared
            ? CookieJar.sessionHeader(own: jars[tab.jar], safari: jars["safari"], for: original, now: clock.now())
            : jars[tab.jar]?.header(for: original, now: clock.now())
        if let cookie { request.headers["Cookie"] = cookie }
        // A browser names the origin of the page that sent a form, unless the page's referrer policy hides it.
        if request.method == .post, let page = tab.page {
            request.headers["Origin"] = page.originHeader(to: original)
        }
        let response = try await transport.send(request)
        jars[tab.jar, default: CookieJar()].store(response.headers["set-cookie"], from: original, now: clock.now())
        if shared {
            jars["safari", default: CookieJar()].store(response.headers["set-cookie"], from: original, now: clock.now(), onlyPersistent: true)
        }
        return response
    }

    /// The loopback address a name stands for, when ``hosts`` maps it; loopback URLs go unchanged.
    func resolve(_ url: URL) -> URL { Self.resolve(url, hosts: hosts) }

    static func resolve(_ url: URL, hosts: [String: URL]) -> URL {
        IOSUserAgentRules.loopbackAddress(of: url, in: hosts) ?? url
    }
}

/// What a user agent tells the app that shows it: the engine's events for a native sign-in, or a hybrid
/// bridge's calls.
protocol TabEvents: Sendable {
    func shouldLoad(_ url: URL?) async -> Bool
    func loadFailed(_ url: URL?, cancelledByPolicy: Bool) async
    func pageResponse(_ url: URL?, status: Int) async
    func callback(_ callback: AuthorizationCallback) async
    func dismissed() async
}

extension UserAgentEvents: TabEvents {}

/// A hybrid app's WebView and sign-in browser, wired to its bridge as the Apple adapter wires them.
struct BridgeEvents: TabEvents {
    let bridge: HybridBridge

    func shouldLoad(_ url: URL?) async -> Bool { await bridge.decide(url) == .allow }
    func loadFailed(_ url: URL?, cancelledByPolicy: Bool) async {}
    func pageResponse(_ url: URL?, status: Int) async {}
    func callback(_ callback: AuthorizationCallback) async {
        if case .redirect(let url) = callback { _ = await bridge.browserCompleted(with: url) }
    }
    func dismissed() async { await bridge.browserDismissed() }
}

/// A WebView the app shows a web page in, outside any sign-in: it loads every navigation.
struct PlainWebView: TabEvents {
    func shouldLoad(_ url: URL?) async -> Bool { true }
    func loadFailed(_ url: URL?, cancelledByPolicy: Bool) async {}
    func pageResponse(_ url: URL?, status: Int) async {}
    func callback(_ callback: AuthorizationCallback) async {}
    func dismissed() async {}
}

/// The secure browser a hybrid app's bridge shows sign-ins in.
struct DeviceBridgeBrowser: HybridBridge.Browser {
    weak let device: SimulatedDevice?
    let launch: UUID
    let kind: HybridShell.Browser

    func show(_ url: URL, returnScheme: String) async throws {
        guard let device else { throw CancellationError() }
        try await device.presentBridgeBrowser(url, returnScheme: returnScheme, launch: launch, kind: kind)
    }

    func close() async {
        guard let device, await device.isAlive(launch) else { return }
        await device.dismissUserAgent()
    }
}

/// The apps' network: names in the device's hosts map go to their loopback servers.
struct ResolvingTransport: HTTPTransport {
    let hosts: [String: URL]
    let base: any HTTPTransport

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.url = SimulatedDevice.resolve(request.url, hosts: hosts)
        return try await base.send(request)
    }
}

extension SimulatedDevice.Tab {
    /// Who the tab is in the narration.
    var participant: SimulatedDevice.Participant {
        if case .safari = kind { return .safari }
        return .userAgent
    }
}
