import AuthenticationServices
import Foundation
import SafariServices
import CryptoKit
import DeviceCheck
import PassKit
import Security
import Switchback
@testable import SwitchbackApple
import Testing
import UIKit
import WebKit

/// The adapters' glue run on the model of Apple's API: what the platform reports reaches the core
/// unchanged, and what the core decides reaches the platform exactly once. What only a device proves
/// (the real sheet, the real engine, the real Keychain) is not claimed here.
@MainActor
enum Rig {
    static let redirectURI = URL(string: "com.example.app:/oauth/callback")!
    static let issuer = "https://id.example.test"

    /// A window whose root view controller presents the user agents.
    static func window() -> UIWindow {
        let window = UIWindow()
        window.rootViewController = UIViewController(nibName: nil, bundle: nil)
        return window
    }

    /// A coordinator whose client has static metadata (no discovery request) and a token endpoint that refuses.
    static func coordinator(host: any UserAgentHost) -> SignInCoordinator {
        let metadata = ProviderMetadata(
            issuer: issuer, authorizationEndpoint: URL(string: issuer + "/authorize")!, tokenEndpoint: URL(string: issuer + "/token")!,
            jwksURI: URL(string: issuer + "/jwks")!
        )
        let client = OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: redirectURI), provider: .static(metadata), transport: RefusingTransport()
        )
        return SignInCoordinator(.app(client), host: host, opener: NoOpener())
    }

    /// Waits (up to 5 s) until `condition` holds.
    static func until(_ condition: @MainActor () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(condition(), "the condition did not hold within 5 s")
    }
}

struct RefusingTransport: HTTPTransport {
    func send(_ request: Switchback.HTTPRequest) async throws -> Switchback.HTTPResponse {
        Switchback.HTTPResponse(status: 400, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"invalid_grant"}"#.utf8))
    }
}

struct NoOpener: URLOpener {
    func open(_ url: URL) async -> Bool { false }
}

/// What a decision handler was called with.
@MainActor final class Decisions {
    var actions: [WKNavigationActionPolicy] = []
    var responses: [WKNavigationResponsePolicy] = []
}

@Suite("Authentication session glue") @MainActor
struct AuthenticationSessionGlueTests {
    @Test("the session's completion reaches PlatformOutcome unchanged: callback URL, canceledLogin, presentationContextNotProvided")
    func completions() throws {
        let callback = URL(string: "com.example.app:/oauth/callback?code=c&state=s")!
        let cases: [(URL?, (any Error)?, PlatformOutcome.SessionCompletion)] = [
            (callback, nil, .callback(callback)),
            (nil, ASWebAuthenticationSessionError(.canceledLogin), .cancelledByUser),
            (nil, ASWebAuthenticationSessionError(.presentationContextNotProvided), .failed),
        ]
        for (url, error, expected) in cases {
            let window = Rig.window()
            let presenter = AuthenticationSessionPresenter(anchor: { window })
            let reports = Reports()
            try presenter.start(URL(string: "https://id.example.test/authorize")!, ephemeral: true, redirectURI: Rig.redirectURI) {
                url, domain, code in
                reports.add(url, domain, code)
            }
            let session = try #require(ASWebAuthenticationSession.takeStarted().last)
            #expect(session.prefersEphemeralWebBrowserSession)
            #expect(session.callback.scheme == "com.example.app")
            #expect(session.presentationContextProvider?.presentationAnchor(for: session) === window)
            session.complete(callbackURL: url, error: error)
            let report = try #require(reports.all.first)
            #expect(reports.all.count == 1)
            #expect(report.url == url)
            #expect(report.domain == (error == nil ? nil : ASWebAuthenticationSessionErrorDomain))
            #expect(PlatformOutcome.sessionCompletion(callbackURL: report.url, errorDomain: report.domain, errorCode: report.code) == expected)
        }
    }

    @Test("an https redirect URI is caught by host and path (iOS 17.4); dismissing cancels the session once")
    func httpsCallbackAndDismiss() throws {
        let core = try #require(AuthenticationSessionCallback(redirectURI: URL(string: "https://app.example.com/oauth/callback")!))
        let callback = AuthenticationSessionPresenter.sessionCallback(core)
        #expect(callback.scheme == "https" && callback.host == "app.example.com" && callback.path == "/oauth/callback")
        let presenter = AuthenticationSessionPresenter(anchor: { Rig.window() })
        let reports = Reports()
        try presenter.start(URL(string: "https://id.example.test/authorize")!, ephemeral: false, redirectURI: Rig.redirectURI) {
            reports.add($0, $1, $2)
        }
        let session = try #require(ASWebAuthenticationSession.takeStarted().last)
        presenter.dismiss()
        presenter.dismiss()
        #expect(reports.all.count == 1)
        #expect(reports.all.first?.code == ASWebAuthenticationSessionError.Code.canceledLogin.rawValue)
        #expect(!session.isRunning)
    }
}

@Suite("WebView glue") @MainActor
struct WebViewGlueTests {
    /// Starts a WebView sign-in through ApplePresenter; returns the coordinator's task and the WebView.
    static func start() async throws -> (Task<SignInResult, any Error>, WKWebView, WebViewController) {
        let window = Rig.window()
        let presenter = ApplePresenter(window: { window })
        let coordinator = Rig.coordinator(host: presenter)
        let task = Task { try await coordinator.signIn(SignInRequest(provider: "generic", strategy: .webView)) }
        try await Rig.until { window.rootViewController?.presentedViewController != nil }
        let navigation = try #require(window.rootViewController?.presentedViewController as? UINavigationController)
        let controller = try #require(navigation.viewControllers.first as? WebViewController)
        #expect(controller.webView.navigationDelegate === controller)
        #expect(controller.webView.configuration.websiteDataStore.isPersistent == false, "non-persistent by default")
        return (task, controller.webView, controller)
    }

    static func decide(_ webView: WKWebView, _ url: URL, into decisions: Decisions) {
        webView.navigationDelegate?.webView(
            webView, decidePolicyFor: WKNavigationAction(request: URLRequest(url: url)), decisionHandler: { decisions.actions.append($0) })
    }

    @Test("the provider's page is allowed, the redirect URI cancelled and redeemed, each decision handler called exactly once")
    func allowThenCancel() async throws {
        // The controller is kept: the WebView holds its delegate weakly, and the presenter lets go of it at the end.
        let (task, webView, controller) = try await Self.start()
        let authorization = try #require(webView.loadedRequests.first?.url)
        #expect(authorization.host == "id.example.test" && authorization.path == "/authorize")
        let decisions = Decisions()
        Self.decide(webView, authorization, into: decisions)
        try await Rig.until { decisions.actions.count == 1 }
        #expect(decisions.actions == [.allow])
        let state = try #require(URLComponents(url: authorization, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
        Self.decide(webView, URL(string: "com.example.app:/oauth/callback?code=abc&state=\(state)")!, into: decisions)
        try await Rig.until { decisions.actions.count == 2 }
        // The core took the callback: the code went to the token endpoint, which refused it.
        await #expect(throws: SwitchbackError.self) { _ = try await task.value }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(decisions.actions == [.allow, .cancel])
        // The response decision is always allow, once.
        webView.navigationDelegate?.webView(
            webView,
            decidePolicyFor: WKNavigationResponse(
                response: URLResponse(url: authorization, mimeType: "text/html", expectedContentLength: 0, textEncodingName: nil),
                isForMainFrame: true),
            decisionHandler: { decisions.responses.append($0) }
        )
        #expect(decisions.responses == [.allow])
        withExtendedLifetime(controller) {}
    }

    @Test(
        "a failed load is reported with its domain and code; a question after the sign-in ended, or asked while it is cancelled, is answered once with cancel"
    )
    func errorAndCancellation() async throws {
        let (task, webView, controller) = try await Self.start()
        // The engine's "frame load interrupted" after a cancelled navigation: the core ignores it.
        webView.navigationDelegate?.webView(
            webView, didFailProvisionalNavigation: WKNavigation(), withError: NSError(domain: "WebKitErrorDomain", code: 102))
        // The page itself failed: the sign-in ends.
        let failure = NSError(
            domain: NSURLErrorDomain, code: NSURLErrorCannotConnectToHost,
            userInfo: [NSURLErrorFailingURLErrorKey: URL(string: "https://id.example.test/authorize")!])
        webView.navigationDelegate?.webView(webView, didFailProvisionalNavigation: WKNavigation(), withError: failure)
        await #expect(throws: SwitchbackError.self) { _ = try await task.value }
        let decisions = Decisions()
        Self.decide(webView, URL(string: "https://id.example.test/next")!, into: decisions)
        try await Rig.until { decisions.actions.count == 1 }
        #expect(decisions.actions == [.cancel])

        // Cancelled while a decision is pending: still exactly one answer.
        let (second, secondView, secondController) = try await Self.start()
        let pending = Decisions()
        Self.decide(secondView, URL(string: "https://id.example.test/other")!, into: pending)
        second.cancel()
        _ = await second.result
        try await Rig.until { pending.actions.count == 1 }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(pending.actions.count == 1)
        withExtendedLifetime((controller, secondController)) {}
    }

    @Test("the Cancel button reports a dismissal: the sign-in ends as userCancelled")
    func cancelButton() async throws {
        let (task, _, controller) = try await Self.start()
        let cancel = try #require(controller.navigationItem.leftBarButtonItem?.primaryAction)
        cancel.perform()
        do {
            _ = try await task.value
            Issue.record("the sign-in went on")
        } catch let error as SwitchbackError {
            #expect(error.code == .userCancelled)
        }
    }
}

@Suite("Safari view glue") @MainActor
struct SafariViewGlueTests {
    @Test("the user's Done ends the sign-in as userCancelled; a dismissal by the flow is not reported back")
    func done() async throws {
        let window = Rig.window()
        let coordinator = Rig.coordinator(host: ApplePresenter(window: { window }))
        let task = Task { try await coordinator.signIn(SignInRequest(provider: "generic", strategy: .safariView)) }
        try await Rig.until { window.rootViewController?.presentedViewController is SFSafariViewController }
        let safari = try #require(window.rootViewController?.presentedViewController as? SFSafariViewController)
        #expect(safari.url.path == "/authorize")
        #expect(safari.dismissButtonStyle == .cancel)
        safari.delegate?.safariViewControllerDidFinish(safari)
        do {
            _ = try await task.value
            Issue.record("the sign-in went on")
        } catch let error as SwitchbackError {
            #expect(error.code == .userCancelled)
        }
    }
}

@Suite("App routing glue") @MainActor
struct AppRoutingGlueTests {
    /// Links only: a notification posted here from the main actor to an observer on the main queue would wait
    /// for itself in swift-corelibs-foundation, so lifecycle notifications are not posted in this test.
    @Test("links reach the coordinator one at a time in the order delivered; links of no sign-in go to unhandled in that order")
    func order() async throws {
        let center = NotificationCenter()
        let routing = AppRouting(coordinator: Rig.coordinator(host: ApplePresenter(window: { Rig.window() })), notificationCenter: center)
        var unhandled: [URL] = []
        routing.unhandled = { unhandled.append($0) }
        let links = (1...6).map { URL(string: "https://app.example.com/link/\($0)")! }
        routing.open([links[0]])
        let activity = NSUserActivity(activityType: NSUserActivityTypeBrowsingWeb)
        activity.webpageURL = links[1]
        routing.continue(activity)
        routing.open(Array(links[2...4]))
        routing.open([links[5]])
        let other = NSUserActivity(activityType: "com.example.handoff")
        other.webpageURL = URL(string: "https://app.example.com/not-a-link")
        routing.continue(other)
        try await Rig.until { unhandled.count == links.count }
        #expect(unhandled == links)
    }
}

@Suite("Keychain store glue", .serialized)
struct KeychainGlueTests {
    static func journal(_ id: String) throws -> FlowJournal {
        let json = #"{"flowID":"\#(id)"}"#
        return try JSONDecoder().decode(FlowJournal.self, from: Data(json.utf8))
    }

    @Test(
        "errSecItemNotFound reads as nothing; a write adds, a second write updates; a locked device is credentialUnavailable (not signed out), a missing entitlement entitlementMissing, anything else storeFailed"
    )
    func statuses() throws {
        Keychain.shared.removeAll()
        Keychain.shared.failing = nil
        let credentials = KeychainCredentialStore(service: "glue.credentials")
        #expect(try credentials.load(key: "main") == nil, "errSecItemNotFound is no credential")
        let journals = KeychainFlowJournalStore(service: "glue.journals")
        #expect(try journals.journals().isEmpty)
        try journals.remove(flowID: "absent")  // errSecItemNotFound on delete is fine
        try credentials.probe()
        let expected: [(OSStatus, SwitchbackError.Code)] = [
            (errSecInteractionNotAllowed, .credentialUnavailable), (errSecMissingEntitlement, .entitlementMissing), (errSecDuplicateItem, .storeFailed),
        ]
        for (status, code) in expected {
            Keychain.shared.failing = status
            do {
                _ = try credentials.load(key: "main")
                Issue.record("status \(status) was not reported")
            } catch let error as SwitchbackError {
                #expect(error.code == code, "OSStatus \(status)")
                #expect(error.message.contains("\(status)"))
            }
            #expect(throws: SwitchbackError.self) { try journals.remove(flowID: "x") }
            #expect(throws: SwitchbackError.self) { try credentials.probe() }
        }
        Keychain.shared.failing = nil
    }
}

@Suite("Protected data glue", .serialized) @MainActor
struct ProtectedDataGlueTests {
    @Test("available: returns at once; unavailable: waits for UIApplication's notification; cancelled: throws CancellationError")
    func waits() async throws {
        UIApplication.protectedDataAvailableInModel = true
        try await ProtectedDataAvailability().waitUntilAvailable()
        UIApplication.protectedDataAvailableInModel = false
        let waiting = Task { try await ProtectedDataAvailability().waitUntilAvailable() }
        try await Task.sleep(nanoseconds: 50_000_000)
        UIApplication.protectedDataAvailableInModel = true
        NotificationCenter.default.post(name: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil)
        try await waiting.value
        UIApplication.protectedDataAvailableInModel = false
        let cancelled = Task { try await ProtectedDataAvailability().waitUntilAvailable() }
        try await Task.sleep(nanoseconds: 50_000_000)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        UIApplication.protectedDataAvailableInModel = true
    }
}

/// The completion reports a test collects.
final class Reports: @unchecked Sendable {  // @unchecked: `items` is guarded by `lock`.
    struct Report {
        let url: URL?
        let domain: String?
        let code: Int?
    }

    private let lock = NSLock()
    private var items: [Report] = []
    func add(_ url: URL?, _ domain: String?, _ code: Int?) { lock.withLock { items.append(Report(url: url, domain: domain, code: code)) } }
    var all: [Report] { lock.withLock { items } }
}

@Suite("Background work glue", .serialized)
struct BackgroundWorkGlueTests {
    @Test("the work runs inside a named background task that ends when it returns, and when it throws")
    func endsTask() async throws {
        let before = UIApplication.backgroundTasksInModel.withLock { $0.begun.count }
        let value = try await BackgroundTaskWork().finish("switchback.refresh") { 42 }
        #expect(value == 42)
        await #expect(throws: CancellationError.self) { try await BackgroundTaskWork().finish("switchback.refresh") { () async throws -> Int in throw CancellationError() } }
        let record = UIApplication.backgroundTasksInModel.withLock { $0 }
        #expect(record.begun.dropFirst(before) == ["switchback.refresh", "switchback.refresh"])
        #expect(record.open.isEmpty, "every task begun was ended")
    }
}

/// Secure Enclave DPoP keys, in the Keychain suite: they share its model Keychain, which that suite's
/// tests make fail on purpose, one test at a time.
extension KeychainGlueTests {
    static let credential = Credential(
        issuer: "https://id.example.test", clientID: "app", accessToken: "at", tokenType: "DPoP", refreshToken: "rt", idToken: nil, idTokenClaims: nil,
        expiresAt: nil, scopes: ["openid"], identitySource: .idToken, userInfoClaims: nil, dpopKey: nil)

    @Test("with a Secure Enclave a sign-in's key is made in it; the Keychain keeps its handle; the credential reads back bound to it")
    func enclaveKey() throws {
        SecureEnclave._setAvailable(true)
        Keychain.shared.removeAll()
        Keychain.shared.failing = nil
        let key = try DPoPKeySource.secureEnclave.makeKey()
        #expect(key.kind == "secure-enclave")
        #expect(key.privateKeyPEM == nil)
        var credential = Self.credential
        credential.dpopKey = key
        let store = KeychainCredentialStore(service: "glue.dpop")
        try store.save(credential, key: "main")
        let loaded = try #require(try store.load(key: "main"))
        #expect(loaded.dpopKey == key)
        #expect(loaded.dpopKey?.thumbprint == key.thumbprint)
        // The enclave that made it is gone (another device, or reset): typed, not "signed out".
        SecureEnclave._forgetAllKeys()
        #expect(throws: SwitchbackError.self) { _ = try store.load(key: "main") }
        do {
            _ = try store.load(key: "main")
        } catch let error as SwitchbackError {
            #expect(error.code == .dpopKeyUnavailable)
        }
    }

    @Test("without a Secure Enclave (the simulator) the key is a software one")
    func noEnclave() throws {
        SecureEnclave._setAvailable(false)
        defer { SecureEnclave._setAvailable(true) }
        #expect(try DPoPKeySource.secureEnclave.makeKey().kind == "software")
    }
}

/// The refresh token behind Face ID / the passcode, in the Keychain suite (same model Keychain).
extension KeychainGlueTests {
    @Test("writing asks nothing; a read shows one prompt; Cancel and a failed Face ID are authenticationDeclined; a removed token is nil")
    func userPresence() async throws {
        Keychain.shared.removeAll()
        Keychain.shared.failing = nil
        Keychain.shared.userAnswer = nil
        defer { Keychain.shared.userAnswer = nil }
        let secrets = UserPresenceSecrets(service: "glue.protected")
        try await secrets.save("rt-1", key: "main")
        try await secrets.save("rt-2", key: "main")
        try await secrets.save("rt-3", key: "main")
        #expect(Keychain.shared.prompts == 0, "saving, even over an existing item, asks nothing")
        #expect(try await secrets.read(key: "main", reason: "Unlock") == "rt-3")
        #expect(Keychain.shared.prompts == 1, "finding the newest item reads attributes only: one prompt, for the token")
        // The phone locks mid-refresh: the new item cannot be added, and the old one is still there.
        Keychain.shared.failing = errSecInteractionNotAllowed
        do {
            try await secrets.save("rt-4", key: "main")
            Issue.record("a refused write succeeded")
        } catch let error as SwitchbackError {
            #expect(error.code == .credentialUnavailable)
        }
        Keychain.shared.failing = nil
        #expect(try await secrets.read(key: "main", reason: "Unlock") == "rt-3")
        for answer in [errSecUserCanceled, errSecAuthFailed] {
            Keychain.shared.userAnswer = answer
            do {
                _ = try await secrets.read(key: "main", reason: "Unlock")
                Issue.record("a declined prompt returned the token")
            } catch let error as SwitchbackError {
                #expect(error.code == .authenticationDeclined)
            }
        }
        Keychain.shared.userAnswer = nil
        try await secrets.remove(key: "main")
        #expect(try await secrets.read(key: "main", reason: "Unlock") == nil)
    }
}

extension KeychainGlueTests {
    @Test("the current account in the Keychain: saved, read back by another value (a relaunch), cleared")
    func accountSelection() throws {
        Keychain.shared.removeAll()
        Keychain.shared.failing = nil
        try KeychainAccountSelection(accessGroup: "ABCDE12345.group").save("account-abc")
        #expect(try KeychainAccountSelection(accessGroup: "ABCDE12345.group").load() == "account-abc")
        try KeychainAccountSelection(accessGroup: "ABCDE12345.group").save(nil)
        #expect(try KeychainAccountSelection(accessGroup: "ABCDE12345.group").load() == nil)
    }
}

/// A device's App Attest, as the model lets a test stand in for it.
final class TestAppAttestService: DCAppAttestService, @unchecked Sendable {
    var refuseKey = false
    override var isSupported: Bool { true }
    override func generateKey() async throws -> String { "a2V5" }
    override func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data { Data(keyId.utf8) + clientDataHash }
    override func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        if refuseKey { throw DCError(.invalidKey) }
        return clientDataHash
    }
}

@Suite("App Attest glue")
struct AppAttestGlueTests {
    @Test("DeviceCheck's answers reach the core unchanged; invalidKey becomes appAttestKeyInvalid, other errors pass as they are")
    func deviceCheck() async throws {
        let device = TestAppAttestService()
        let adapter = DeviceCheckAppAttest(service: { device })
        #expect(adapter.isSupported)
        #expect(try await adapter.generateKey() == "a2V5")
        #expect(try await adapter.attestKey("k", clientDataHash: Data([1, 2])) == Data("k".utf8) + Data([1, 2]))
        #expect(try await adapter.generateAssertion("k", clientDataHash: Data([3])) == Data([3]))
        device.refuseKey = true
        do {
            _ = try await adapter.generateAssertion("k", clientDataHash: Data([3]))
            Issue.record("a refused key produced an assertion")
        } catch let error as SwitchbackError {
            #expect(error.code == .appAttestKeyInvalid)
        }
        let unsupported = DeviceCheckAppAttest(service: { DCAppAttestService() })
        #expect(!unsupported.isSupported)
        await #expect(throws: DCError.self) { _ = try await unsupported.generateKey() }
    }
}

/// A controller standing in for Wallet: it records the request and answers as told.
final class WalletController: PKIdentityAuthorizationController, @unchecked Sendable {
    let available: Bool
    let answer: Result<Data, PKIdentityError>
    nonisolated(unsafe) var request: PKIdentityRequest?
    nonisolated(unsafe) var cancelled = false

    init(available: Bool = true, answer: Result<Data, PKIdentityError>) {
        self.available = available
        self.answer = answer
    }

    override func canRequestDocument(_ descriptor: any PKIdentityDocumentDescriptor) async -> Bool { available }

    override func requestDocument(_ request: PKIdentityRequest) async throws -> PKIdentityDocument {
        self.request = request
        return PKIdentityDocument(_modelEncryptedData: try answer.get())
    }

    override func cancelRequest() { cancelled = true }
}

@Suite("Verify with Wallet glue")
struct PassKitIdentityGlueTests {
    static let request = IdentityDocumentRequest(fields: [.init(.givenName), .init(.ageAtLeast(21), intentToStore: .mayStoreForDays(30))])

    @Test("the request reaches PassKit with its merchant, nonce, elements and intents; Wallet's encryptedData comes back unchanged")
    func passesThrough() async throws {
        let controller = WalletController(answer: .success(Data([1, 2, 3])))
        let documents = PassKitIdentityDocuments(controller: { controller })
        let nonce = Data(repeating: 7, count: 32)
        #expect(try await documents.requestDocument(Self.request, merchantIdentifier: "merchant.example", nonce: nonce) == Data([1, 2, 3]))
        let sent = try #require(controller.request)
        #expect(sent.merchantIdentifier == "merchant.example" && sent.nonce == nonce)
        let descriptor = try #require(sent.descriptor as? PKIdentityDriversLicenseDescriptor)
        #expect(descriptor.elements.map(\._modelName) == ["givenName", "age_over_21"])
        #expect(descriptor.intentToStore(element: descriptor.elements[1])?._modelDays == 30)
        #expect(descriptor.intentToStore(element: descriptor.elements[0])?._modelDays == 0)
    }

    @Test("PassKit's errors become the core's: cancelled is userCancelled, notSupported or no such ID is authenticatorUnavailable")
    func failures() async throws {
        for (controller, code) in [
            (WalletController(answer: .failure(PKIdentityError(.cancelled))), SwitchbackError.Code.userCancelled),
            (WalletController(answer: .failure(PKIdentityError(.notSupported))), .authenticatorUnavailable),
            (WalletController(answer: .failure(PKIdentityError(.invalidNonce))), .invalidConfiguration),
            (WalletController(available: false, answer: .success(Data())), .authenticatorUnavailable),
        ] {
            let documents = PassKitIdentityDocuments(controller: { controller })
            let error = await #expect(throws: SwitchbackError.self) {
                _ = try await documents.requestDocument(Self.request, merchantIdentifier: "m", nonce: Data(count: 32))
            }
            #expect(error?.code == code)
        }
        let invalid = IdentityDocumentRequest(fields: [])
        let controller = WalletController(answer: .success(Data()))
        await #expect(throws: SwitchbackError.self) {
            _ = try await PassKitIdentityDocuments(controller: { controller }).requestDocument(invalid, merchantIdentifier: "m", nonce: Data())
        }
        #expect(controller.request == nil, "nothing reaches Wallet")
    }
}
