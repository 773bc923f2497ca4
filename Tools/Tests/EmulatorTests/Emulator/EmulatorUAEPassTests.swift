import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The uaepass profile: the WebView rewrite provider of pattern A, with its variants, driven by the
/// core client, a cookie-keeping browser and the simulated authenticator app. The tests do the
/// integrator's part (keep the https successurl, load it again in the same browser) by hand here.
@Suite("Emulator: uaepass profile")
struct EmulatorUAEPassTests {
    /// These tests drive the hand-off pages with the emulator's public OpenID client, so they switch on
    /// what UAE Pass itself does not offer (a public client, an ID token, discovery);
    /// ``documentedShape()`` tests the provider as documented.
    static let openIDShape: [UAEPassOptions.Variant] = [.publicClient, .idToken, .discovery]

    static func withEmulator(_ variants: [UAEPassOptions.Variant] = [], _ body: (Emulator) async throws -> Void) async throws {
        try await EmulatorHarness.withEmulator(
            profile: try Profile.named("uaepass", variants: (openIDShape + variants).map(\.rawValue)).get(), body)
    }

    static func onDevice(faults: [Fault] = []) -> AuthorizationOptions {
        var options = AuthorizationOptions(scopes: [UAEPassOptions.profileScope], acrValues: [UAEPassOptions.onDeviceACR])
        if !faults.isEmpty { options.extraParameters = [("emulator_fault", faults.map(\.rawValue).joined(separator: ","))] }
        return options
    }

    static func app(_ emulator: Emulator) throws -> AuthenticatorApp {
        AuthenticatorApp(issuer: try #require(URL(string: emulator.issuer)))
    }

    @Test("on-device sign-in: hand-off to uaepass://digitalid, approve in the app, the https successurl in the same browser returns the code")
    func approve() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.onDevice())
            let browser = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let link = try await browser.handOff(session.authorizationURL).link
            #expect(link.absoluteString.hasPrefix("uaepass://digitalid?txn="))
            let launch = try AuthenticatorApp.parse(link)
            let successURL = try #require(launch.successURL)
            #expect(successURL.absoluteString.hasPrefix(emulator.issuer + "/uaepass/resume?txn="))
            #expect(launch.failureURL?.absoluteString.hasPrefix(emulator.issuer + "/uaepass/cancel?txn=") == true)
            #expect(launch.closeOnDone)

            let app = try Self.app(emulator)
            let next = try await app.respond(to: link, with: .approve())
            #expect(next == successURL)
            // Decided once: the app cannot change its answer.
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 409)) { try await app.respond(to: link, with: .decline) }
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(successURL)), session: session)
            #expect(credential.idTokenClaims?.acr == UAEPassOptions.onDeviceACR)
            #expect(credential.subject == "UAEPASS/9b1f7c2e-alice")
            // The transaction is over: the app no longer finds it.
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 404)) { try await app.respond(to: link, with: .decline) }
        }
    }

    @Test("pattern A: the successurl opened in another browser (Safari, without the session cookie) is a dead end")
    func resumeWithoutSessionCookie() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.onDevice())
            let link = try await EmulatorBrowser(userAgent: EmulatorBrowser.webView).handOff(session.authorizationURL).link
            let successURL = try #require(try await Self.app(emulator).respond(to: link, with: .approve()))
            guard case .page(403, let html) = try await EmulatorBrowser().open(successURL) else {
                Issue.record("the resume URL must not complete without the original session")
                return
            }
            #expect(html.contains("Session expired"))
        }
    }

    @Test("the app not answering leaves a waiting page that polls; a later approval still completes")
    func ignoredThenApproved() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.onDevice())
            let browser = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let link = try await browser.handOff(session.authorizationURL).link
            let app = try Self.app(emulator)
            #expect(try await app.respond(to: link, with: .ignore) == nil)
            let successURL = try #require(try AuthenticatorApp.parse(link).successURL)
            guard case .page(200, let html) = try await browser.open(successURL) else {
                Issue.record("expected the waiting page")
                return
            }
            #expect(html.contains("http-equiv=\"refresh\" content=\"2\""))
            _ = try await app.respond(to: link, with: .approve())
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(successURL)), session: session)
            #expect(credential.subject == "UAEPASS/9b1f7c2e-alice")
        }
    }

    @Test(
        "decline variants: failureurl leads to error=access_denied or error=cancelled",
        arguments: [
            ([UAEPassOptions.Variant](), "access_denied"), ([.declineCancelled], "cancelled"),
        ])
    func decline(variants: [UAEPassOptions.Variant], error: String) async throws {
        try await Self.withEmulator(variants) { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.onDevice())
            let browser = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let link = try await browser.handOff(session.authorizationURL).link
            let failureURL = try #require(try await Self.app(emulator).respond(to: link, with: .decline))
            let failure = await expectFailure("a declined sign-in must not complete") {
                try await client.completeAuthorization(try EmulatorBrowser.callback(try await browser.open(failureURL)), session: session)
            }
            #expect(failure?.code == .authorizationError)
            #expect(failure?.oauthError?.error == error)
        }
    }

    @Test("decline variant never: the failure page spins and never reaches the app")
    func declineNever() async throws {
        try await Self.withEmulator([.declineNever]) { emulator in
            let session = try await EmulatorHarness.client(emulator).prepareAuthorization(Self.onDevice())
            let browser = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let link = try await browser.handOff(session.authorizationURL).link
            let failureURL = try #require(try await Self.app(emulator).respond(to: link, with: .decline))
            for _ in 0..<2 {
                guard case .page(200, let html) = try await browser.open(failureURL) else {
                    Issue.record("expected the never-ending page")
                    return
                }
                #expect(html.contains("Processing your request"))
                #expect(!html.contains("http-equiv=\"refresh\""))
            }
        }
    }

    @Test(
        "environments: production uaepass://, staging uaepassstg://, and staging emitting the production scheme",
        arguments: [
            ([UAEPassOptions.Variant](), "uaepass"), ([.staging], "uaepassstg"), ([.stagingBug], "uaepass"),
        ])
    func schemes(variants: [UAEPassOptions.Variant], scheme: String) async throws {
        try await Self.withEmulator(variants) { emulator in
            let session = try await EmulatorHarness.client(emulator).prepareAuthorization(Self.onDevice())
            let link = try await EmulatorBrowser(userAgent: EmulatorBrowser.webView).handOff(session.authorizationURL).link
            #expect(link.scheme == scheme)
        }
    }

    @Test("parameter shapes: successURL spelling, double encoding, trailing parameters, no closeondone — the app still finds its way back")
    func parameterShapes() async throws {
        try await Self.withEmulator([.camelCase, .doubleEncoded, .trailingParameters, .noCloseOnDone]) { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.onDevice())
            let browser = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let link = try await browser.handOff(session.authorizationURL).link
            let raw = link.absoluteString
            #expect(raw.contains("&successURL=https%253A%252F%252F") || raw.contains("&successURL=http%253A%252F%252F"))
            #expect(raw.contains("&failureURL="))
            #expect(!raw.contains("closeondone"))
            #expect(raw.hasSuffix("&lang=en&browserpackage=com.android.chrome&flow=mobileondevice"))
            let launch = try AuthenticatorApp.parse(link)
            #expect(!launch.closeOnDone)
            let successURL = try #require(try await Self.app(emulator).respond(to: link, with: .approve()))
            #expect(successURL.absoluteString.hasPrefix(emulator.issuer + "/uaepass/resume?txn="))
            let credential = try await client.completeAuthorization(
                try EmulatorBrowser.callback(try await browser.open(successURL)), session: session)
            #expect(credential.subject == "UAEPASS/9b1f7c2e-alice")
        }
    }

    @Test(
        "as documented: no discovery, client_secret_basic (a public client is refused), no ID token, the identity from userinfo; SOP1 refused when verified accounts are required"
    )
    func documentedShape() async throws {
        for accountType in [[UAEPassOptions.Variant](), [.basicAccount]] {
            let emulator = try await Emulator.start(profile: try Profile.named("uaepass", variants: accountType.map(\.rawValue)).get())
            let base = try #require(URL(string: emulator.issuer))
            func client(
                _ clientID: String, _ authentication: ClientAuthentication, identity: IdentitySource, required: [String: Set<String>] = [:]
            ) -> OIDCClient {
                OIDCClient(
                    configuration: ClientConfiguration(
                        clientID: clientID, redirectURI: URL(string: "com.example.app:/oauth/callback")!, authentication: authentication,
                        pushedAuthorization: .never,
                        identitySource: identity, requiredClaims: required
                    ),
                    provider: .static(.uaePass(base: base))
                )
            }
            await expectCode(.discoveryFailed) {
                try await OIDCClient(
                    configuration: ClientConfiguration(clientID: "backend", redirectURI: URL(string: "com.example.app:/oauth/callback")!),
                    provider: .discovery(issuer: emulator.issuer)
                ).metadata()
            }
            let secret = ClientAuthentication.clientSecretBasic(secret: "backend-secret")
            let verified = ["userType": Set(["SOP2", "SOP3"])]
            // A public client cannot redeem; one expecting an ID token is refused, not silently downgraded.
            for (candidate, code) in [
                (client("native-rs", .none, identity: .userInfo), SwitchbackError.Code.tokenEndpointError),
                (client("backend", secret, identity: .idToken), .idTokenMissing),
            ] {
                let error = await expectFailure("\(code)") { try await Self.signInOnDevice(emulator, client: candidate) }
                #expect(error?.code == code)
            }
            let candidate = client("backend", secret, identity: .userInfo, required: verified)
            if accountType.isEmpty {
                let credential = try await Self.signInOnDevice(emulator, client: candidate)
                #expect(credential.identitySource == .userInfo && credential.idToken == nil)
                #expect(credential.subject == "UAEPASS/9b1f7c2e-alice")
                #expect(credential.acr == nil, "UAE Pass's userinfo carries no acr (its contract)")
                #expect(credential.userInfoClaims?["userType"] == .string("SOP3"))
                #expect(credential.userInfoClaims?["uuid"] == .string("9b1f7c2e-alice"))
            } else {
                let error = await expectFailure("an unverified SOP1 account must be refused") {
                    try await Self.signInOnDevice(emulator, client: candidate)
                }
                #expect(error?.code == .identityRequirementNotMet)
                #expect(error?.message.contains("SOP1") == true)
            }
            await emulator.stop()
        }
    }

    /// The backend's client as UAE Pass documents it: the documented endpoints, client_secret_basic, no PAR,
    /// the identity from userinfo.
    static func documentedClient(
        _ emulator: Emulator, requiredACRValues: Set<String> = [], requiredClaims: [String: Set<String>] = [:]
    ) throws -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "backend", redirectURI: try #require(URL(string: "com.example.app:/oauth/callback")),
                authentication: .clientSecretBasic(secret: "backend-secret"), requiredACRValues: requiredACRValues, pushedAuthorization: .never,
                identitySource: .userInfo, requiredClaims: requiredClaims
            ),
            provider: .static(.uaePass(base: try #require(URL(string: emulator.issuer))))
        )
    }

    @Test(
        "an acr requirement holds for a userinfo identity too, and UAE Pass's userinfo carries no acr: an app that requires one is refused on every sign-in"
    )
    func userInfoACRRequirement() async throws {
        let emulator = try await Emulator.start(profile: .uaePass())
        let client = try Self.documentedClient(emulator, requiredACRValues: [UAEPassOptions.onDeviceACR])
        // Passed here before the contract said what UAE Pass's samples show; against UAE Pass it would fail.
        await expectCode(.acrNotSatisfied) { _ = try await Self.signInOnDevice(emulator, client: client) }
        let session = try await client.prepareAuthorization(
            AuthorizationOptions(scopes: [UAEPassOptions.profileScope], acrValues: [UAEPassOptions.webACR]))
        let landing = try await EmulatorBrowser().signIn(session.authorizationURL)
        await expectCode(.acrNotSatisfied) { try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session) }
        await emulator.stop()
    }

    @Test(
        "scopes as documented: the preset asks for urn:uae:digitalid:profile:general without openid; openid alone gets no profile claims, so a verified-account requirement fails"
    )
    func documentedScopes() async throws {
        let emulator = try await Emulator.start(profile: .uaePass())
        let client = try Self.documentedClient(emulator, requiredClaims: ["userType": ["SOP2", "SOP3"]])
        let request = try await ProviderPreset.uaePass.request(strategy: .systemBrowser)
        let session = try await client.prepareAuthorization(request.options)
        let scope = URLComponents(url: session.authorizationURL, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "scope" }?.value
        #expect(scope == "urn:uae:digitalid:profile:general", "no openid: the identity comes from userinfo")
        let credential = try await Self.finishOnDevice(emulator, client: client, session: session)
        #expect(credential.userInfoClaims?["userType"] == .string("SOP3"))
        // The request the guides used to send: openid alone. Nothing but sub comes back, so the requirement fails.
        var old = Self.onDevice()
        old.scopes = ["openid"]
        let error = await expectFailure("without the profile scope there is no userType") {
            try await Self.signInOnDevice(emulator, client: client, options: old)
        }
        #expect(error?.code == .identityRequirementNotMet)
        await emulator.stop()
    }

    /// The on-device sign-in in one browser: hand-off, approval, the saved success URL, redemption.
    static func signInOnDevice(_ emulator: Emulator, client: OIDCClient, options: AuthorizationOptions = onDevice()) async throws -> Credential {
        try await finishOnDevice(emulator, client: client, session: try await client.prepareAuthorization(options))
    }

    /// The on-device sign-in of a prepared `session`.
    static func finishOnDevice(_ emulator: Emulator, client: OIDCClient, session: AuthorizationSession) async throws -> Credential {
        let browser = EmulatorBrowser()
        let (link, _) = try await browser.handOff(session.authorizationURL)
        let back = try #require(try await Self.app(emulator).respond(to: link, with: .approve()))
        return try await client.completeAuthorization(try EmulatorBrowser.callback(try await browser.open(back)), session: session)
    }

    @Test(
        "hand-off delivery: script only, meta refresh, or 302 — what a user agent without script can follow",
        arguments: [
            (Profile.HandOffDelivery.script, false), (.metaRefresh, true), (.redirect, true),
        ])
    func delivery(delivery: Profile.HandOffDelivery, reachableWithoutScript: Bool) async throws {
        var profile = try Profile.named("uaepass", variants: Self.openIDShape.map(\.rawValue)).get()
        profile.handOffDelivery = delivery
        let emulator = try await Emulator.start(profile: profile)
        let session = try await EmulatorHarness.client(emulator).prepareAuthorization(Self.onDevice())
        let withoutScript = try await EmulatorBrowser(runsScript: false).open(session.authorizationURL)
        let withScript = try await EmulatorBrowser().open(session.authorizationURL)
        func reachesDeepLink(_ landing: EmulatorBrowser.Landing) -> Bool {
            switch landing {
            case .handOff(let link, _): link.scheme == "uaepass"
            case .redirect(let location): location.hasPrefix("uaepass://digitalid?txn=")
            case .page: false
            }
        }
        #expect(reachesDeepLink(withScript))
        #expect(reachesDeepLink(withoutScript) == reachableWithoutScript)
        await emulator.stop()
    }

    @Test("without the on-device acr, the web sign-in: password page, acr level low")
    func webSignIn() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let credential = try await EmulatorFaultTests.signIn(client)
            #expect(credential.idTokenClaims?.acr == UAEPassOptions.webACR)
        }
    }

    @Test("faults combine with the profile: a forged iss response parameter after the hand-off is refused before redeeming")
    func withFault() async throws {
        try await Self.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(Self.onDevice(faults: [.wrongIssuerParameter]))
            let browser = EmulatorBrowser(userAgent: EmulatorBrowser.webView)
            let link = try await browser.handOff(session.authorizationURL).link
            let successURL = try #require(try await Self.app(emulator).respond(to: link, with: .approve()))
            let callback = try EmulatorBrowser.callback(try await browser.open(successURL))
            await expectCode(.issuerParameterMismatch) { try await client.completeAuthorization(callback, session: session) }
        }
    }

    @Test("the authenticator endpoints refuse unknown transactions and bad bodies with typed JSON errors")
    func authenticatorBadInput() async throws {
        try await Self.withEmulator { emulator in
            let app = try Self.app(emulator)
            let forged = try #require(URL(string: "uaepass://digitalid?txn=forged&successurl=https%3A%2F%2Fevil.example"))
            await #expect(throws: AuthenticatorAppError.providerRefused(status: 404)) { try await app.respond(to: forged, with: .approve()) }
            #expect(throws: AuthenticatorAppError.notALaunchLink) {
                try AuthenticatorApp.parse(try #require(URL(string: "uaepass://digitalid?successurl=x")))
            }
            let transport = URLSessionTransport()
            let garbage = try await transport.send(
                HTTPRequest(
                    method: .post, url: try #require(URL(string: emulator.issuer + "/authenticator/approve")), body: Data([0xff, 0xfe, 0x25])
                ))
            #expect(garbage.status == 400)
            let lookup = try await transport.send(
                HTTPRequest(method: .get, url: try #require(URL(string: emulator.issuer + "/authenticator/transaction?txn=nope"))))
            #expect(lookup.status == 404)
        }
    }
}
