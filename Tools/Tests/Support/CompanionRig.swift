package import Foundation
import Logging
@_spi(SwitchbackInternals) package import Switchback
package import SwitchbackEmulator
package import SwitchbackServer
package import SwitchbackTesting

/// An emulator and a companion configured against it, with every route on and a captured log.
package struct CompanionRig {
    package static let appRedirect = "com.example.app:/oauth/callback"
    package static let webApp = "https://web.example.com/app"
    package static let appLink = "https://app.example.com/signed-in"
    /// The app's secret for the exchanges the tests start (a real app makes a random one per sign-in).
    package static let binding = "app-binding-0123456789abcdefghij"
    /// The scope the provider grants for session hand-off, which `/handoff` requires.
    package static let handOffScope = "web-session"

    package let emulator: Emulator
    package let companion: Companion
    package let log: CapturingLogHandler.Sink
    package let clock: ManualClock
    package let transport = URLSessionTransport()

    /// The configuration the tests start from; `change` adjusts it.
    /// The permission proxy's backend token (Norwegian BankID): the shop's backend registers statements with it.
    package static let backendToken = "shop-backend-token-0123456789abcdef0123"

    /// One order's payment statement, as a shop's backend registers it.
    package static let payment: JSONValue = .object([
        "payments": .array([
            .object([
                "paymentId": .string("order-1"), "amount": .string("100.00"), "currency": .string("NOK"), "creditorName": .string("Example"),
            ])
        ])
    ])

    package static func configuration(issuer: String, returns: ServerConfiguration.ExchangeResult = .session) -> ServerConfiguration {
        ServerConfiguration(
            port: 0,
            provider: .init(issuer: issuer, clientID: "backend", clientSecret: "backend-secret", scopes: ["openid", handOffScope]),
            exchange: .init(redirectURIs: [appRedirect], returns: returns),
            permission: .init(
                server: issuer + "/biometrics", appCallbackURIs: ["https://app.example.com/appswitch"], type: "payment.v1",
                backendToken: backendToken),
            bridge: .init(schemes: ["myapp"], returns: returns),
            handOff: .init(requiredScope: handOffScope, allowedRedirects: [webApp, "https://shop.example.com/"]),
            completion: .init(appLink: appLink, returns: returns, maximumWait: 30),
            associations: [AppAssociation(appIDs: ["A1B2C3D4E5.com.example.app"], paths: ["/signed-in*"])]
        )
    }

    package static func start(
        profile: Profile = .generic, store: (any CompanionStore)? = nil, returns: ServerConfiguration.ExchangeResult = .session,
        emulator changeEmulator: (inout EmulatorConfiguration) -> Void = { _ in }, change: (inout ServerConfiguration) -> Void = { _ in },
        transport: (any HTTPTransport)? = nil
    ) async throws -> CompanionRig {
        var emulatorConfiguration = EmulatorConfiguration.defaults
        for index in emulatorConfiguration.clients.indices where emulatorConfiguration.clients[index].clientID == "backend" {
            emulatorConfiguration.clients[index].redirectURIs += ["http://127.0.0.1/bridge/callback", "http://127.0.0.1/complete"]
            emulatorConfiguration.clients[index].appReturnURLs = ["https://app.example.com/appswitch"]
        }
        emulatorConfiguration.signingKeys = .perProcess
        changeEmulator(&emulatorConfiguration)
        let emulator = try await Emulator.start(
            profile: profile, configuration: emulatorConfiguration, logger: Logger(label: "emulator") { _ in SwiftLogNoOpLogHandler() })
        var configuration = configuration(issuer: emulator.issuer, returns: returns)
        change(&configuration)
        let log = CapturingLogHandler.Sink()
        let clock = ManualClock(Date())
        do {
            let companion = try await Companion.start(
                configuration, store: store, transport: transport, clock: clock, logger: CapturingLogHandler.logger(log, label: "companion"))
            return CompanionRig(emulator: emulator, companion: companion, log: log, clock: clock)
        } catch {
            await emulator.stop()
            throw error
        }
    }

    /// Runs `body` with a started rig and stops the rig when `body` returns or throws: the teardown is
    /// awaited before the test ends, as Hummingbird's `app.test` does.
    package static func with<Result>(
        profile: Profile = .generic, store: (any CompanionStore)? = nil, returns: ServerConfiguration.ExchangeResult = .session,
        emulator changeEmulator: (inout EmulatorConfiguration) -> Void = { _ in }, change: (inout ServerConfiguration) -> Void = { _ in },
        transport: (any HTTPTransport)? = nil, _ body: (CompanionRig) async throws -> Result
    ) async throws -> Result {
        try await withStopping(
            try await start(profile: profile, store: store, returns: returns, emulator: changeEmulator, change: change, transport: transport),
            stop: { await $0.stop() }, body)
    }

    package func stop() async {
        await companion.stop()
        await emulator.stop()
    }

    package func url(_ path: String) -> URL {
        URL(string: companion.baseURL.absoluteString + path)!
    }

    /// POSTs a JSON object; returns the status, headers and the decoded JSON object (empty when not JSON).
    package func post(_ path: String, _ object: [String: Any], headers: [String: String] = [:]) async throws -> (
        response: HTTPResponse, json: [String: Any]
    ) {
        try await post(path, body: JSONSerialization.data(withJSONObject: object), headers: headers)
    }

    package func post(_ path: String, body: Data, headers: [String: String] = [:], contentType: String = "application/json") async throws -> (
        response: HTTPResponse, json: [String: Any]
    ) {
        var all = headers
        all["Content-Type"] = contentType
        let response = try await transport.send(HTTPRequest(method: .post, url: url(path), headers: all, body: body))
        return (response, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    package func get(_ url: URL, headers: [String: String] = [:]) async throws -> HTTPResponse {
        try await transport.send(HTTPRequest(method: .get, url: url, headers: headers))
    }

    /// The companion's origin, as a browser sends it in `Origin`.
    package var origin: String { Self.origin(of: companion) }

    package static func origin(of companion: Companion) -> String { "http://127.0.0.1:\(companion.port)" }

    /// What a browser does with a hand-off redeem URL: it loads the page that names the account, and the
    /// user taps Continue (a same-origin form POST). The POST's answer, or the page's when it has no form.
    package func followRedeem(_ url: URL, cookie: String? = nil) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let cookie { headers["Cookie"] = cookie }
        let page = try await get(url, headers: headers)
        let shown = WebPage(url: url, html: page.text, referrerPolicy: page.headers["referrer-policy"])
        guard page.status == 200, let form = shown.confirmForm else { return page }
        // The Origin a browser sends with the page's form: the page's referrer policy decides whether it is named.
        headers["Origin"] = shown.originHeader(to: form.action)
        return try await transport.send(.form(form.action, form.fields, headers: headers))
    }

    /// Signs alice in at the provider through `authorizationURL`; returns where the provider sent the browser.
    package func signIn(_ authorizationURL: String, browser: EmulatorBrowser = EmulatorBrowser()) async throws -> EmulatorBrowser.Landing {
        try await browser.signIn(URL(string: authorizationURL)!)
    }

    /// Signs in through the backend exchange with `returns: tokens` and returns the provider's access token.
    package func accessToken() async throws -> String {
        let started = try await post("/exchange/start", ["redirect_uri": Self.appRedirect, "binding": Self.binding])
        guard case .redirect(let callback) = try await signIn(started.json["authorization_url"] as? String ?? "") else {
            throw RigFailure("no redirect")
        }
        let exchanged = try await post("/exchange", ["callback_url": callback, "binding": CompanionRig.binding])
        guard let token = exchanged.json["access_token"] as? String else { throw RigFailure("no access token: \(exchanged.response.status)") }
        return token
    }
}

extension HTTPResponse {
    package var text: String { String(decoding: body, as: UTF8.self) }
}
