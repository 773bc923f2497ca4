public import Foundation
public import Logging

/// What one sign-in should do: the user agent, the authorization options, and how the authenticator
/// returns. ``ProviderPreset/request(strategy:environment:links:)`` builds one for a known provider.
public struct SignInRequest: Sendable {
    /// The provider's name, kept in the journal.
    public var provider: String
    public var strategy: UserAgentStrategy
    public var options: AuthorizationOptions
    /// The WebView rewrite of authenticator links.
    public var rewrite: SignInFlow.Plan.Rewrite?
    /// A return URL given to the provider (for example `app_callback_uri`); it only brings the app forward.
    public var appReturnURL: URL?
    /// The authenticator returns to an https page of the provider (pattern A).
    public var returnsThroughProviderPage = false
    public var withoutReturn: SignInFlow.Plan.WithoutReturn
    public var gracePeriod: TimeInterval
    /// The sign-in fails with ``SwitchbackError/Code/timedOut`` when not finished by then.
    public var timeout: TimeInterval
    /// Custom schemes whose apps also claim an https universal link, tried first (see ``AppLinkForm``).
    public var appLinks: [String: URL] = [:]

    public init(
        provider: String, strategy: UserAgentStrategy, options: AuthorizationOptions = AuthorizationOptions(), rewrite: SignInFlow.Plan.Rewrite? = nil,
        appReturnURL: URL? = nil, withoutReturn: SignInFlow.Plan.WithoutReturn = .wait, gracePeriod: TimeInterval = 2, timeout: TimeInterval = 600
    ) {
        self.provider = provider
        self.strategy = strategy
        self.options = options
        self.rewrite = rewrite
        self.appReturnURL = appReturnURL
        self.withoutReturn = withoutReturn
        self.gracePeriod = gracePeriod
        self.timeout = timeout
    }
}

/// Runs sign-ins: performs what each ``SignInFlow`` asks (show the user agent, open the authenticator,
/// start timers, save the journal, redeem the code) and routes everything the app receives — opened
/// URLs, universal links, lifecycle changes — to the flow it belongs to.
///
/// ```swift
/// let coordinator = SignInCoordinator(client: client, host: webViewHost, opener: application, journal: store)
/// // in the scene delegate: coordinator.handle(url:), coordinator.handle(userActivity:),
/// // coordinator.appDidBecomeActive(), coordinator.appDidEnterBackground()
/// let credential = try await coordinator.signIn(preset.request(strategy: .webView, environment: .staging, links: links))
/// ```
public actor SignInCoordinator {
    public nonisolated let client: OIDCClient
    private let host: any UserAgentHost
    private let opener: any URLOpener
    private let journal: any FlowJournalStore
    private let clock: any FlowClock
    private let entropy: any EntropySource
    private let logger: Logger
    private let codeExchange: CodeExchange

    private struct Entry {
        var flow: SignInFlow
        let session: AuthorizationSession
        let provider: String
        let expiresAt: Date
        var waiters: [CheckedContinuation<Credential, any Error>] = []
        var credential: Credential?
        var error: SwitchbackError?
        var tasks: [Task<Void, Never>] = []
    }

    private var entries: [String: Entry] = [:]
    /// Flows that ended, kept (without secrets) so that a late duplicate of their return is recognised
    /// as a replay rather than as an unknown link.
    private var finished: [(flow: SignInFlow, state: String)] = []
    /// Results of sign-ins that ended with nobody waiting (a restored flow can finish before the app
    /// asks for it), until ``result(of:)`` collects them.
    private var unclaimed: [String: Result<Credential, any Error>] = [:]
    private static let finishedKept = 16

    public init(
        client: OIDCClient, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore = InMemoryFlowJournalStore(),
        clock: any FlowClock = SystemClock(), entropy: any EntropySource = SystemEntropy(), logger: Logger = Logger(label: "switchback.flow"),
        exchange: CodeExchange = .client
    ) {
        self.codeExchange = exchange
        self.client = client
        self.host = host
        self.opener = opener
        self.journal = journal
        self.clock = clock
        self.entropy = entropy
        self.logger = logger
    }

    // MARK: Starting and resuming

    /// Signs the user in: prepares the authorization request, shows the user agent, and returns the
    /// validated credential. Cancelling the task dismisses the user agent and throws `CancellationError`.
    public func signIn(_ request: SignInRequest) async throws -> Credential {
        if request.options.responseMode == .formPost, request.strategy == .webView {
            // WKWebView does not expose a form submission's body to the app, so the response would be lost.
            throw SwitchbackError(.strategyNotSupported, "a WebView cannot hand a form_post response to the app; use the query response mode, or a backend that relays form_post")
        }
        if request.options.responseType != .code {
            // The tokens would arrive in a URL the app, the OS and the user agent all see.
            throw SwitchbackError(.strategyNotSupported, "an app receives authorization codes only; a provider that answers with implicit tokens needs the companion's bridge")
        }
        let session = try await client.prepareAuthorization(request.options)
        let plan = SignInFlow.Plan(
            flowID: entropy.token(bytes: 16), strategy: request.strategy, authorizationURL: session.authorizationURL,
            redirectURI: session.redirectURI, rewrite: request.rewrite, appReturnURL: request.appReturnURL,
            returnsThroughProviderPage: request.returnsThroughProviderPage, withoutReturn: request.withoutReturn, gracePeriod: request.gracePeriod,
            appLinks: request.appLinks.isEmpty ? nil : request.appLinks
        )
        let flowID = plan.flowID
        entries[flowID] = Entry(
            flow: SignInFlow(plan), session: session, provider: request.provider, expiresAt: clock.now().addingTimeInterval(request.timeout)
        )
        logger.info("sign-in started", metadata: ["flow": "\(flowID.prefix(6))", "provider": "\(request.provider)", "strategy": "\(request.strategy)"])
        startTimeout(flowID, after: request.timeout)
        await deliver(.start, to: flowID)
        return try await result(of: flowID)
    }

    /// Reads back the journals of sign-ins interrupted when the app was terminated, purges expired ones,
    /// and returns the IDs of those that continue; await each with ``result(of:)``.
    public func restore() async throws -> [String] {
        let now = clock.now()
        var restored: [String] = []
        for saved in try await journal.purge(now: now) where entries[saved.flowID] == nil {
            entries[saved.flowID] = Entry(flow: saved.flow, session: saved.session, provider: saved.provider, expiresAt: saved.expiresAt)
            startTimeout(saved.flowID, after: saved.expiresAt.timeIntervalSince(now))
            restored.append(saved.flowID)
            await deliver(.relaunched, to: saved.flowID)
        }
        return restored
    }

    /// Waits for the sign-in `flowID` to end. Cancelling the waiting task cancels the sign-in.
    public func result(of flowID: String) async throws -> Credential {
        if let result = unclaimed.removeValue(forKey: flowID) { return try result.get() }
        guard entries[flowID] != nil else {
            throw SwitchbackError(.flowNotFound, "no sign-in with this ID is running")
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard entries[flowID] != nil else {
                    continuation.resume(throwing: SwitchbackError(.flowNotFound, "the sign-in ended before it was awaited"))
                    return
                }
                entries[flowID]?.waiters.append(continuation)
            }
        } onCancel: {
            Task { await self.deliver(.cancel, to: flowID, cancelled: true) }
        }
    }

    /// The state of every running sign-in, by flow ID.
    public var states: [String: SignInFlow.State] { entries.mapValues(\.flow.state) }

    /// Cancels the sign-in `flowID`: it ends as ``SwitchbackError/Code/userCancelled``.
    public func cancel(_ flowID: String) async {
        await deliver(.cancel, to: flowID)
    }

    // MARK: What the app receives

    /// A URL the app was opened with (custom scheme). Returns false when it belongs to no sign-in (the
    /// app handles it as usual); throws when it does but is refused (a replayed return).
    @discardableResult
    public func handle(url: URL) async throws -> Bool {
        try await route(url)
    }

    /// A universal link the app was opened with (`NSUserActivityTypeBrowsingWeb`); as ``handle(url:)``.
    @discardableResult
    public func handle(userActivity url: URL) async throws -> Bool {
        try await route(url)
    }

    /// An authorization response the app received other than by URL (a form_post relayed by its backend).
    @discardableResult
    public func handle(callback: AuthorizationCallback) async throws -> Bool {
        guard let flowID = owner(ofCallback: callback.url, body: callback) else {
            if replayedCallback(callback) { throw SwitchbackError(.callbackReplayed, "this sign-in already ended; the response was not used again") }
            return false
        }
        await deliver(.callback(callback), to: flowID)
        return true
    }

    public func appDidBecomeActive() async {
        for flowID in entries.keys { await deliver(.becameActive, to: flowID) }
    }

    public func appDidEnterBackground() async {
        for flowID in entries.keys { await deliver(.enteredBackground, to: flowID) }
    }

    private func route(_ url: URL) async throws -> Bool {
        for (flowID, entry) in entries {
            switch entry.flow.recognise(url) {
            case .unrelated, .authenticatorReturn(.unrelated), .authenticatorReturn(.otherFlow):
                continue
            case .callback:
                // Several sign-ins share the redirect URI: the response's state says whose it is.
                guard owner(ofCallback: url, body: nil) == flowID else { continue }
            case .authenticatorReturn, .appReturn:
                break
            }
            let actions = await deliver(.openedURL(url), to: flowID)
            if let code = actions.lazy.compactMap(\.rejection).first {
                throw SwitchbackError(code, "the link belongs to a sign-in that already used it; it was ignored")
            }
            return true
        }
        for (flow, state) in finished {
            switch flow.recognise(url) {
            case .authenticatorReturn(.success), .authenticatorReturn(.failure):
                throw SwitchbackError(.callbackReplayed, "the link returns to a sign-in that already ended; it was ignored")
            case .callback where Self.state(in: .redirect(url)).map({ ConstantTime.equals($0, state) }) == true:
                throw SwitchbackError(.callbackReplayed, "the response belongs to a sign-in that already ended; it was not used again")
            default:
                continue
            }
        }
        return false
    }

    /// The running flow whose `state` the response carries.
    private func owner(ofCallback url: URL, body: AuthorizationCallback?) -> String? {
        guard let state = Self.state(in: body ?? .redirect(url)) else {
            // A response without state can only be the single flow's, which then fails it on its checks.
            let candidates = entries.filter { $0.value.flow.recognise(url) == .callback }
            return candidates.count == 1 ? candidates.first?.key : nil
        }
        return entries.first { ConstantTime.equals($0.value.session.state, state) && $0.value.flow.recognise(url) == .callback }?.key
    }

    private func replayedCallback(_ callback: AuthorizationCallback) -> Bool {
        guard let state = Self.state(in: callback) else { return false }
        return finished.contains { ConstantTime.equals($0.state, state) && $0.flow.recognise(callback.url) == .callback }
    }

    private static func state(in callback: AuthorizationCallback) -> String? {
        for mode in [ResponseMode.query, .fragment, .formPost] {
            if let response = try? AuthorizationResponse(callback, mode: mode), let state = response.parameters["state"] { return state }
        }
        return nil
    }

    // MARK: Performing the flow's actions

    /// Hands `event` to the flow and performs the actions it returns; returns them.
    @discardableResult
    func deliver(_ event: SignInFlow.Event, to flowID: String, cancelled: Bool = false) async -> [SignInFlow.Action] {
        guard var entry = entries[flowID] else { return [] }
        let actions = entry.flow.handle(event)
        entries[flowID] = entry
        if !actions.isEmpty {
            logger.debug("flow event", metadata: ["flow": "\(flowID.prefix(6))", "event": "\(event.logName)", "state": "\(entry.flow.state)"])
        }
        for action in actions {
            await perform(action, flowID: flowID, cancelled: cancelled)
        }
        return actions
    }

    private func perform(_ action: SignInFlow.Action, flowID: String, cancelled: Bool) async {
        guard let entry = entries[flowID] else { return }
        switch action {
        case .present(let url):
            do {
                try await host.present(url, strategy: entry.flow.plan.strategy, redirectURI: entry.flow.plan.redirectURI, events: UserAgentEvents(coordinator: self, flowID: flowID))
            } catch {
                logger.warning("the user agent could not be shown", metadata: ["flow": "\(flowID.prefix(6))"])
                await deliver(.userAgentFailed, to: flowID)
            }
        case .allowNavigation, .cancelNavigation, .reject:
            break
        case .openAuthenticator(let url):
            let opened = await openApp(url, plan: entry.flow.plan)
            await deliver(opened ? .authenticatorLaunched : .authenticatorLaunchFailed, to: flowID)
        case .openExternally(let url):
            _ = await openApp(url, plan: entry.flow.plan)
        case .load(let url):
            await host.load(url)
        case .startGraceTimer(let seconds):
            schedule(flowID, after: seconds, .graceElapsed)
        case .persist:
            do {
                try await journal.save(FlowJournal(flow: entry.flow, session: entry.session, provider: entry.provider, expiresAt: entry.expiresAt))
            } catch {
                // The sign-in goes on; only its survival of a termination is lost.
                logger.warning("the flow journal could not be saved", metadata: ["flow": "\(flowID.prefix(6))"])
            }
        case .dismissUserAgent:
            await host.dismiss()
        case .exchange(let callback):
            let task = Task {
                do {
                    let credential: Credential
                    switch codeExchange {
                    case .client:
                        credential = try await client.completeAuthorization(callback, session: entry.session)
                    case .companion(let companion):
                        let code = try await client.authorizationCode(from: callback, session: entry.session)
                        let tokens = try await companion.exchange(code: code, session: entry.session)
                        credential = try await client.credential(fromRedeemed: tokens, code: code, session: entry.session)
                    }
                    await exchanged(flowID, credential: credential, error: nil)
                } catch let error as SwitchbackError {
                    await exchanged(flowID, credential: nil, error: error)
                } catch {
                    await exchanged(flowID, credential: nil, error: SwitchbackError(.transportFailed, "the code exchange was interrupted", underlying: error))
                }
            }
            entries[flowID]?.tasks.append(task)
        case .complete(let outcome):
            complete(flowID, outcome: outcome, cancelled: cancelled)
            try? await journal.remove(flowID: flowID)
        }
    }

    private func exchanged(_ flowID: String, credential: Credential?, error: SwitchbackError?) async {
        entries[flowID]?.credential = credential
        entries[flowID]?.error = error
        await deliver(error.map { .exchangeFailed($0.code) } ?? .exchangeSucceeded, to: flowID)
    }

    private func complete(_ flowID: String, outcome: SignInFlow.Outcome, cancelled: Bool) {
        guard let entry = entries.removeValue(forKey: flowID) else { return }
        for task in entry.tasks { task.cancel() }
        finished.append((entry.flow, entry.session.state))
        if finished.count > Self.finishedKept { finished.removeFirst() }
        let result: Result<Credential, any Error>
        switch outcome {
        case .signedIn:
            result = entry.credential.map { .success($0) } ?? .failure(SwitchbackError(.invalidTokenResponse, "the exchange reported no credential"))
        case .cancelled where cancelled:
            result = .failure(CancellationError())
        case .cancelled:
            result = .failure(SwitchbackError(.userCancelled, "the user closed the sign-in"))
        case .failed(let code):
            result = .failure(entry.error.flatMap { $0.code == code ? $0 : nil } ?? SwitchbackError(code, Self.message(code)))
        }
        logger.info("sign-in ended", metadata: ["flow": "\(flowID.prefix(6))", "outcome": "\(outcome)"])
        if entry.waiters.isEmpty {
            unclaimed[flowID] = result
            if unclaimed.count > Self.finishedKept, let oldest = unclaimed.keys.first { unclaimed[oldest] = nil }
        }
        for waiter in entry.waiters { waiter.resume(with: result) }
    }

    /// Opens an app's link: its universal-link form first where the plan names one, then the link itself.
    private func openApp(_ url: URL, plan: SignInFlow.Plan) async -> Bool {
        if let universal = AppLinkForm.universalLink(for: url, appLinks: plan.appLinks ?? [:]) {
            if await opener.openUniversalLink(universal) { return true }
            logger.info("no app claims the universal link; opening the custom scheme", metadata: ["scheme": "\(url.scheme ?? "")"])
        }
        return await opener.open(url)
    }

    private static func message(_ code: SwitchbackError.Code) -> String {
        switch code {
        case .authenticatorUnavailable: "the authenticator app is not installed"
        case .authenticatorDidNotReturn: "the user came back from the authenticator app without an answer"
        case .timedOut: "the sign-in did not finish in time"
        case .flowInterrupted: "the app was terminated at a point this sign-in cannot continue from; start again"
        case .userAgentFailed: "the provider's page could not be shown"
        case .userAgentRefused: "the provider refused to show its sign-in page in this user agent (an HTTP error at its authorization endpoint); it may not allow embedded WebViews, use the system browser"
        case .authorizationError: "the user declined in the authenticator app"
        default: "the sign-in failed (\(code))"
        }
    }

    private func startTimeout(_ flowID: String, after seconds: TimeInterval) {
        schedule(flowID, after: max(seconds, 0), .timedOut)
    }

    private func schedule(_ flowID: String, after seconds: TimeInterval, _ event: SignInFlow.Event) {
        let clock = clock
        let task = Task {
            guard (try? await clock.sleep(for: seconds)) != nil else { return }
            await self.deliver(event, to: flowID)
        }
        entries[flowID]?.tasks.append(task)
    }
}

extension SignInFlow.Action {
    fileprivate var rejection: SwitchbackError.Code? {
        if case .reject(_, let code) = self { return code }
        return nil
    }
}

extension SignInFlow.Event {
    /// The event's name without its URL (which may carry a code).
    var logName: String {
        switch self {
        case .start: "start"
        case .navigation: "navigation"
        case .navigationFailed: "navigationFailed"
        case .pageResponse(_, let status): "pageResponse(\(status))"
        case .authenticatorLaunched: "authenticatorLaunched"
        case .authenticatorLaunchFailed: "authenticatorLaunchFailed"
        case .openedURL: "openedURL"
        case .callback: "callback"
        case .becameActive: "becameActive"
        case .enteredBackground: "enteredBackground"
        case .userAgentDismissed: "userAgentDismissed"
        case .userAgentFailed: "userAgentFailed"
        case .graceElapsed: "graceElapsed"
        case .timedOut: "timedOut"
        case .cancel: "cancel"
        case .exchangeSucceeded: "exchangeSucceeded"
        case .exchangeFailed(let code): "exchangeFailed(\(code))"
        case .relaunched: "relaunched"
        }
    }
}
