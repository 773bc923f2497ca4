import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// Provider presets: which user agents and return patterns each allows, and the requests they build.
@Suite("ProviderPreset")
struct ProviderPresetTests {
    static let links = ProviderPreset.AppLinks(
        scheme: URL(string: "com.example.app:/handoff"), universalLink: URL(string: "https://app.example.com/appswitch")
    )

    /// The typed error `body` throws (recorded as an issue when it throws none, or another).
    static func thrown(_ body: () async throws -> Void) async -> SwitchbackError? {
        do {
            try await body()
            Issue.record("the preset or the check let through what it should have refused")
            return nil
        } catch let error as SwitchbackError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    static func refusal(_ build: () async throws -> SignInRequest) async -> SwitchbackError? {
        await thrown { _ = try await build() }
    }

    @Test(
        "UAE Pass: the WebView first (the vendor's guidance), the system browser in production too, only the WebView in staging and QA (the scheme bug), never a Safari view"
    )
    func uaePassStrategies() async throws {
        #expect(ProviderPreset.uaePass.usableStrategies(in: .production) == [.webView, .systemBrowser])
        #expect(ProviderPreset.uaePass.usableStrategies(in: .staging) == [.webView])
        #expect(ProviderPreset.uaePass.usableStrategies(in: .qa) == [.webView])
        let qa = try await ProviderPreset.uaePass.request(environment: .qa, links: Self.links)
        #expect(qa.rewrite?.environment == .qa && qa.rewrite?.rule.schemes[.qa] == "uaepassqa")
        let staging = await Self.refusal {
            try await ProviderPreset.uaePass.request(strategy: .systemBrowser, environment: .staging, links: Self.links)
        }
        #expect(staging?.code == .strategyNotSupported)
        #expect(staging?.message.contains("production authenticator") == true)
        let safariView = await Self.refusal { try await ProviderPreset.uaePass.request(strategy: .safariView, links: Self.links) }
        #expect(safariView?.code == .strategyNotSupported)
        let defaultRequest = try await ProviderPreset.uaePass.request(environment: .staging, links: Self.links)
        #expect(defaultRequest.strategy == .webView, "the first usable strategy")
    }

    @Test("the WebView rewrite returns to the app's scheme or universal link; the system browser through the provider's page")
    func uaePassPatterns() async throws {
        let scheme = try await ProviderPreset.uaePass.request(strategy: .webView, links: Self.links)
        #expect(scheme.rewrite?.returnTo == Self.links.scheme)
        #expect(scheme.rewrite?.environment == .production)
        let universal = try await ProviderPreset.uaePass.request(strategy: .webView, pattern: .universalLink, links: Self.links)
        #expect(universal.rewrite?.returnTo == Self.links.universalLink)
        let browser = try await ProviderPreset.uaePass.request(strategy: .systemBrowser, links: Self.links)
        #expect(browser.rewrite == nil)
        #expect(browser.returnsThroughProviderPage)
        let noLink = await Self.refusal { try await ProviderPreset.uaePass.request(strategy: .webView, links: .init()) }
        #expect(noLink?.code == .strategyNotSupported)
    }

    @Test("authenticator installed or not: the on-device acr, or the web sign-in's")
    func authenticatorACR() async throws {
        let installed = try await ProviderPreset.uaePass.request(strategy: .webView, links: Self.links)
        #expect(installed.options.acrValues == ["urn:digitalid:authentication:flow:mobileondevice"])
        let missing = try await ProviderPreset.uaePass.request(strategy: .webView, links: Self.links, authenticatorInstalled: false)
        #expect(missing.options.acrValues == ["urn:safelayer:tws:policies:authentication:level:low"])
    }

    @Test("Norwegian BankID: app_callback_uri with the permission the backend hook fetched for that URL")
    func bankIDNorwayPermission() async throws {
        let asked = LockedURLs()
        let preset = ProviderPreset.bankIDNorway { url in
            asked.append(url)
            return [("permission_token", "P-1")]
        }
        let request = try await preset.request(strategy: .systemBrowser, links: Self.links)
        #expect(request.appReturnURL == Self.links.universalLink)
        #expect(request.options.extraParameters.map(\.0) == ["app_callback_uri", "permission_token"])
        #expect(request.options.extraParameters.first?.1 == "https://app.example.com/appswitch")
        #expect(asked.urls == [Self.links.universalLink])
        let webView = await Self.refusal { try await preset.request(strategy: .webView, links: Self.links) }
        #expect(webView?.code == .strategyNotSupported)
        let manual = try await preset.request(strategy: .systemBrowser, pattern: .providerPage, links: Self.links)
        #expect(manual.options.extraParameters.isEmpty, "no return URL, no permission asked")
    }

    @Test("MitID through Idura: the app switch URL travels in login_hint, after any hint the app gave; only ASWebAuthenticationSession")
    func mitIDIdura() async throws {
        let idura = ProviderPreset.mitID(.idura)
        let request = try await idura.request(links: Self.links, options: AuthorizationOptions(loginHint: "cpr"))
        #expect(request.strategy == .ephemeralBrowser)
        #expect(request.options.loginHint == "cpr appswitch:ios appswitch:resumeUrl:https://app.example.com/appswitch")
        #expect(!request.options.extraParameters.contains { $0.0 == "idp_params" })
        for strategy in [UserAgentStrategy.webView, .safariView] {
            let refusal = await Self.refusal { try await idura.request(strategy: strategy, links: Self.links) }
            #expect(refusal?.code == .strategyNotSupported, "\(strategy)")
        }
    }

    @Test("MitID through Signaturgruppen: idp_values=mitid and the app switch in idp_params' JSON; the Safari view first; no login_hint")
    func mitIDSignaturgruppen() async throws {
        let request = try await ProviderPreset.mitID(.signaturgruppen).request(links: Self.links)
        #expect(request.strategy == .safariView)
        #expect(request.options.loginHint == nil)
        #expect(request.options.extraParameters.contains { $0 == ("idp_values", "mitid") })
        let params = try #require(request.options.extraParameters.first { $0.0 == "idp_params" }?.1)
        #expect(
            try JSONDecoder().decode(JSONValue.self, from: Data(params.utf8))
                == .object([
                    "mitid": .object([
                        "enable_app_switch": .bool(true), "app_switch_os": .string("ios"),
                        "app_switch_url": .string("https://app.example.com/appswitch"),
                    ])
                ]))
        let webView = await Self.refusal { try await ProviderPreset.mitID(.signaturgruppen).request(strategy: .webView, links: Self.links) }
        #expect(webView?.message.contains("refuses embedded WebViews") == true)
    }

    @Test(
        "MitID through Signaturgruppen ends with a plain redirect: a Safari view needs the app's page at the redirect URI (a response link on another host); a session does not"
    )
    func mitIDResponsePage() async throws {
        let preset = ProviderPreset.mitID(.signaturgruppen)
        let universal = try #require(URL(string: "https://app.example.com/oauth/callback"))
        let page = try #require(URL(string: "https://api.example.com/response"))
        let bare = try await preset.request(strategy: .safariView, links: Self.links)
        #expect(bare.needsResponsePage && bare.responseLink == nil)
        let refused = await Self.thrown { try SignInCoordinator.requireResponsePage(bare, redirectURI: universal) }
        #expect(refused?.code == .strategyNotSupported)
        #expect(refused?.message.contains("AppLinks.responseLink") == true)
        var links = Self.links
        links.responseLink = universal
        let withPage = try await preset.request(strategy: .safariView, links: links)
        #expect(withPage.responseLink == universal)
        try SignInCoordinator.requireResponsePage(withPage, redirectURI: page)
        // A button on the page to its own host stays in the Safari view; an http link is no universal link.
        let sameHost = await Self.thrown {
            try SignInCoordinator.requireResponsePage(withPage, redirectURI: try #require(URL(string: "https://APP.example.com/response")))
        }
        #expect(sameHost?.code == .invalidConfiguration)
        links.responseLink = URL(string: "http://app.example.com/oauth/callback")
        let plain = await Self.thrown {
            try SignInCoordinator.requireResponsePage(try await preset.request(strategy: .safariView, links: links), redirectURI: page)
        }
        #expect(plain?.code == .invalidConfiguration)
        // The app switch's own link as the response link: its bare return would read as a response.
        for link in ["https://app.example.com/appswitch", "https://app.example.com/oauth/callback?x=1"] {
            links.responseLink = URL(string: link)
            let clash = await Self.thrown {
                try SignInCoordinator.requireResponsePage(try await preset.request(strategy: .safariView, links: links), redirectURI: page)
            }
            #expect(clash?.code == .invalidConfiguration, "\(link)")
        }
        // An authentication session catches the https redirect URI itself; Idura's preset never needs the page.
        for request in [
            try await preset.request(strategy: .systemBrowser, links: Self.links), try await ProviderPreset.mitID(.idura).request(links: Self.links),
        ] {
            #expect(!request.needsResponsePage)
            try SignInCoordinator.requireResponsePage(request, redirectURI: universal)
        }
        // A custom-scheme redirect URI is handed to the app even from a redirect: no page is needed.
        try SignInCoordinator.requireResponsePage(bare, redirectURI: try #require(URL(string: "com.example.app:/oauth/callback")))
        // The entitlement the check names is the response link's host, not the web page's.
        let check = SetupCheck(queriedSchemes: [], urlSchemes: [])
        #expect(check.problems(for: withPage, preset: preset, redirectURI: page) == [.associatedDomainNeeded("app.example.com")])
    }

    @Test("the presets read their contracts: Singpass asks for openid alone and refuses a scope it does not allow; refresh tokens as documented")
    func contracts() async throws {
        #expect(try await ProviderPreset.singpass.request(links: Self.links).options.scopes == ["openid"])
        let asked = try await ProviderPreset.singpass.request(
            links: Self.links, options: AuthorizationOptions(scopes: ["openid", "name", "user.identity"]))
        #expect(asked.options.scopes == ["openid", "name", "user.identity"])
        for scopes in [["openid", "profile"], ["name"]] {
            let refused = await Self.refusal {
                try await ProviderPreset.singpass.request(links: Self.links, options: AuthorizationOptions(scopes: scopes))
            }
            #expect(refused?.code == .invalidConfiguration, "\(scopes)")
        }
        #expect(!ProviderPreset.singpass.issuesRefreshTokens && !ProviderPreset.uaePass.issuesRefreshTokens)
        #expect(ProviderPreset.generic.issuesRefreshTokens && ProviderPreset.idMe.issuesRefreshTokens)
        #expect(ProviderPreset.mitID(.signaturgruppen).contract == .mitID && ProviderPreset.mitID(.idura).contract == .mitIDIdura)
        // The brokers' plain redirects, from their contracts: MitID's and Swedish BankID's (assumed for the latter).
        #expect(ProviderPreset.mitID(.signaturgruppen).redirectsWithoutTap && ProviderPreset.bankIDSweden.redirectsWithoutTap)
        #expect(!ProviderPreset.singpass.redirectsWithoutTap && !ProviderPreset.generic.redirectsWithoutTap)
        var own = ProviderPreset.generic
        own.redirectsWithoutTap = true
        #expect(own.redirectsWithoutTap)
    }

    @Test("serving(from:) moves the provider's hosts (a staging deployment, the emulator on loopback)")
    func serving() {
        let moved = ProviderPreset.uaePass.serving(from: ["127.0.0.1"])
        #expect(moved.authenticator?.providerHosts == ["127.0.0.1"])
        #expect(moved.authenticator?.schemes == ProviderPreset.uaePass.authenticator?.schemes)
    }
}

/// URLs collected from a `@Sendable` hook.
private struct LockedURLs: Sendable {
    private let stored = LockedValue<[URL]>([])
    func append(_ url: URL) { stored.withLock { $0.append(url) } }
    var urls: [URL] { stored.withLock { $0 } }
}
