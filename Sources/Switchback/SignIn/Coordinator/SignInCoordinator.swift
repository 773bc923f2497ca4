import Foundation
public import Logging

/// Runs sign-ins: performs what each sign-in's state machine asks (<doc:TheSignInFlow>) (show the user agent, open the authenticator,
/// start timers, save the journal, redeem the code) and routes everything the app receives — opened
/// URLs, universal links, lifecycle changes — to the flow it belongs to.
///
/// ```swift
/// let coordinator = SignInCoordinator(.app(client), host: webViewHost, opener: application, journal: store)
/// // in the scene delegate: coordinator.handle(url:) (custom schemes and universal links),
/// // coordinator.appDidBecomeActive(), coordinator.appDidEnterBackground()
/// let result = try await coordinator.signIn(preset.request(strategy: .webView, environment: .staging, links: links))
/// ```
public actor SignInCoordinator {
    /// Who runs this coordinator's authorizations.
    public nonisolated let authorizer: Authorizer
    private let host: any UserAgentHost
    private let opener: any URLOpener
    private let journal: any FlowJournalStore
    let clock: any FlowClock
    let entropy: any EntropySource
    let logger: Logger

    struct Entry {
        var flow: SignInFlow
        let authorization: StartedAuthorization
        let provider: String
        let expiresAt: Date
        var waiters: [CheckedContinuation<FlowEnding, any Error>] = []
        var result: FlowEnding?
        var error: SwitchbackError?
        /// The backend completion's answer, once the companion gave it (it gives it once).
        var completion: Result<CompanionSignIn, SwitchbackError>?
        var tasks: [Task<Void, Never>] = []
    }

    var entries: [String: Entry] = [:]
    /// Flows that ended, kept (without secrets) so that a late duplicate of their return is recognised
    /// as a replay rather than as an unknown link.
    var finished: [(flow: SignInFlow, state: String?)] = []
    /// Results of sign-ins that ended with nobody waiting (a restored flow can finish before the app
    /// asks for it), until ``result(of:)`` collects them.
    private var unclaimed: [String: Result<FlowEnding, any Error>] = [:]
    /// The flow IDs of ``unclaimed``, oldest first: a dictionary's own order is arbitrary.
    private var unclaimedOrder: [String] = []
    private static let finishedKept = 16
    /// Shows Verify with Wallet's sheet, when the app offers it.
    let identityDocuments: (any IdentityDocumentProvider)?

    /// A coordinator whose sign-ins `authorizer` runs: the app's own client, or the backend companion.
    /// `identityDocuments` shows Verify with Wallet's sheet (``SignInRoute/verifyWithWallet(_:)``).
    public init(
        _ authorizer: Authorizer, host: any UserAgentHost, opener: any URLOpener, journal: any FlowJournalStore = InMemoryFlowJournalStore(),
        clock: any FlowClock = SystemClock(), entropy: any EntropySource = SystemEntropy(), logger: Logger = Logger(label: "switchback.flow"),
        identityDocuments: (any IdentityDocumentProvider)? = nil
    ) {
        self.identityDocuments = identityDocuments
        self.authorizer = authorizer
        self.host = host
        self.opener = opener
        self.journal = journal
        self.clock = clock
        self.entropy = entropy
        self.logger = logger
    }

    // MARK: Starting and resuming

    /// Signs the user in: prepares the authorization request (or has the companion prepare it), shows the
    /// user agent, and returns the result: a credential the app validated (``Authorizer/app(_:)``) or what
    /// the companion handed back (``Authorizer/companion(_:route:)``). Cancelling the task dismisses the
    /// user agent and throws `CancellationError`.
    public func signIn(_ request: SignInRequest) async throws -> SignInResult {
        let flowID: String
        switch authorizer.kind {
        case .app(let client, _):
            flowID = try await startOwn(request, client: client)
        case .companion(let companion, let route):
            flowID = try await startAtCompanion(request, companion: companion, route: route)
        case .wallets:
            throw SwitchbackError(.invalidConfiguration, "this coordinator runs wallet sign-ins only; sign in with .wallet(_:)")
        }
        return try await result(of: flowID)
    }

    /// Prepares the app's own authorization and starts its flow.
    private func startOwn(_ request: SignInRequest, client: OIDCClient) async throws -> String {
        if request.options.responseMode == .formPost, request.strategy == .webView {
            // WKWebView does not expose a form submission's body to the app, so the response would be lost.
            throw SwitchbackError(
                .strategyNotSupported,
                "a WebView cannot hand a form_post response to the app; use the query response mode, or a backend that relays form_post")
        }
        if request.options.responseType != .code {
            // The tokens would arrive in a URL the app, the OS and the user agent all see.
            throw SwitchbackError(
                .strategyNotSupported,
                "an app receives authorization codes only; a provider that answers with implicit tokens needs the companion's bridge")
        }
        try Self.requireCallback(for: client.configuration.redirectURI, strategy: request.strategy)
        try Self.requireResponsePage(request, redirectURI: client.configuration.redirectURI)
        let session = try await client.prepareAuthorization(request.options)
        return await begin(request, authorization: .app(session), url: session.authorizationURL, returnURL: session.redirectURI)
    }

    /// Refuses a sign-in whose authentication session could never catch its redirect URI (an http one:
    /// ``AuthenticationSessionCallback``), which would otherwise leave the user on a page that loads nothing.
    static func requireCallback(for redirectURI: URL, strategy: UserAgentStrategy) throws {
        guard strategy.hasCallbackHook, AuthenticationSessionCallback(redirectURI: redirectURI) == nil else { return }
        throw SwitchbackError(
            .strategyNotSupported,
            "an authentication session catches a custom scheme or an https redirect URI, never \(redirectURI.scheme ?? "this one"); use one of those, or the Safari view"
        )
    }

    /// Refuses a sign-in that could not come back: a provider whose last redirect a Safari view loads as a
    /// page (MitID through Signaturgruppen), without the app's own page there to forward the response
    /// (``SignInRequest/responseLink``); and a response link on the redirect URI's own host, which iOS
    /// opens in the browser rather than in the app (a universal link opens its app only from a tap on a
    /// page of another host).
    static func requireResponsePage(_ request: SignInRequest, redirectURI: URL) throws {
        if let link = request.responseLink {
            guard link.scheme?.lowercased() == "https", let host = link.host?.lowercased(), !host.isEmpty, link.query == nil, link.fragment == nil
            else {
                throw SwitchbackError(
                    .invalidConfiguration, "the response link must be an https universal link of the app, without query or fragment")
            }
            // The authenticator's bare return to a link that is also the response link would read as a response.
            let others = [request.appReturnURL, request.rewrite?.returnTo].compactMap { $0 } + Array(request.appLinks.values)
            guard !others.contains(where: { RedirectURIMatcher.matches($0, registered: link) || RedirectURIMatcher.matches(link, registered: $0) })
            else {
                throw SwitchbackError(.invalidConfiguration, "the response link must differ from the app's other return links (the app switch's)")
            }
            guard host != redirectURI.host?.lowercased() else {
                throw SwitchbackError(
                    .invalidConfiguration,
                    "the response link is on the redirect URI's host \(host): a button there to its own host stays in the browser; put the redirect page on another host"
                )
            }
        } else if request.needsResponsePage, ["https", "http"].contains(redirectURI.scheme?.lowercased() ?? "") {
            // A custom scheme is handed to the app even from a redirect; a web address is loaded as a page.
            throw SwitchbackError(
                .strategyNotSupported,
                "\(request.provider) ends with a plain redirect to \(redirectURI), which a \(request.strategy) loads as a page: give AppLinks.responseLink (the universal link your page there opens by a button), complete on the companion, or use an authentication session"
            )
        }
    }

    /// Registers a flow for `authorization` and starts it; returns its ID.
    func begin(_ request: SignInRequest, authorization: StartedAuthorization, url: URL, returnURL: URL) async -> String {
        let plan = SignInFlow.Plan(
            flowID: entropy.token(bytes: 16), strategy: request.strategy, authorizationURL: url,
            redirectURI: returnURL, rewrite: request.rewrite, appReturnURL: request.appReturnURL,
            returnsThroughProviderPage: request.returnsThroughProviderPage, withoutReturn: request.withoutReturn, gracePeriod: request.gracePeriod,
            appLinks: request.appLinks.isEmpty ? nil : request.appLinks, startsInApp: request.startsInApp ? true : nil,
            // A backend completion's final page opens the app by the companion's link, never by a response link.
            responseLink: authorization.isCompletion ? nil : request.responseLink
        )
        let flowID = plan.flowID
        entries[flowID] = Entry(
            flow: SignInFlow(plan), authorization: authorization, provider: request.provider,
            expiresAt: clock.now().addingTimeInterval(request.timeout)
        )
        logger.info(
            authorization.isSignOut ? "sign-out started" : "sign-in started",
            metadata: [
                "flow": "\(flowID.prefix(6))", "provider": "\(request.provider)",
                "strategy": "\(request.startsInApp ? "wallet app" : "\(request.strategy)")",
            ])
        startTimeout(flowID, after: request.timeout)
        startCollecting(flowID)
        await deliver(.start, to: flowID)
        return flowID
    }

    /// Reads back the journals of sign-ins interrupted when the app was terminated, purges expired ones,
    /// and returns the IDs of those that continue; await each with ``result(of:)``. Journals of sign-ins
    /// another authorizer started (the app's own client where this coordinator's is the companion, another
    /// client ID, the other companion route) stay in the store for the coordinator that can finish them.
    public func restore() async throws -> [String] {
        let now = clock.now()
        var restored: [String] = []
        for saved in try await journal.purge(now: now) where entries[saved.flowID] == nil && authorizer.finishes(saved.authorization) {
            entries[saved.flowID] = Entry(flow: saved.flow, authorization: saved.authorization, provider: saved.provider, expiresAt: saved.expiresAt)
            startTimeout(saved.flowID, after: saved.expiresAt.timeIntervalSince(now))
            startCollecting(saved.flowID)
            restored.append(saved.flowID)
            await deliver(.relaunched, to: saved.flowID)
        }
        return restored
    }

    /// Waits for the sign-in `flowID` to end. Cancelling the waiting task cancels the sign-in.
    public func result(of flowID: String) async throws -> SignInResult {
        switch try await ending(of: flowID) {
        case .signedIn(let result): return result
        case .endedSession: throw SwitchbackError(.flowNotFound, "this flow was a sign-out, not a sign-in")
        }
    }

    /// Waits for the flow `flowID` (a sign-in or a sign-out) to end.
    func ending(of flowID: String) async throws -> FlowEnding {
        if let result = unclaimed.removeValue(forKey: flowID) {
            unclaimedOrder.removeAll { $0 == flowID }
            return try result.get()
        }
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
    @_spi(SwitchbackInternals) public var states: [String: SignInFlow.State] { entries.mapValues(\.flow.state) }

    /// Cancels the sign-in `flowID`: it ends as ``SwitchbackError/Code/userCancelled``.
    public func cancel(_ flowID: String) async {
        await deliver(.cancel, to: flowID)
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
                try await host.present(
                    url, strategy: entry.flow.plan.strategy, redirectURI: entry.flow.plan.redirectURI,
                    events: UserAgentEvents(coordinator: self, flowID: flowID))
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
            // A sign-out has nothing to resume after a termination: the credential is already gone here.
            if case .signOut = entry.authorization { break }
            do {
                try await journal.save(
                    FlowJournal(flow: entry.flow, authorization: entry.authorization, provider: entry.provider, expiresAt: entry.expiresAt))
                // The flow may have ended while the save was under way (the actor is re-entrant): its
                // removal then ran first, and the journal just written would restore a finished sign-in.
                if entries[flowID] == nil { try await journal.remove(flowID: flowID) }
            } catch {
                // The sign-in goes on; only its survival of a termination is lost.
                logger.warning("the flow journal could not be saved", metadata: ["flow": "\(flowID.prefix(6))"])
            }
        case .dismissUserAgent:
            await host.dismiss()
        case .exchange(let callback):
            switch entry.authorization {
            case .app(let session):
                let strategy = entry.flow.plan.strategy
                run(flowID) { .signedIn(try await self.redeem(callback, session: session, strategy: strategy)) }
            case .signOut(let request):
                run(flowID) {
                    guard case .redirect(let url) = callback else {
                        throw SwitchbackError(.redirectURIMismatch, "a sign-out returns by redirect, not by form post")
                    }
                    try request.verifyReturn(url)
                    return .endedSession(request.state == nil ? .returnedWithoutState : .returned)
                }
            case .companion(let authorization) where authorization.route == .wallet:
                // Anyone can open the app's link: no code, or one the companion does not know, is not the wallet's.
                run(flowID, notThisFlows: { $0.code == .authenticatorDidNotReturn || $0.oauthError?.error == "invalid_grant" }) {
                    .signedIn(.presentation(try await self.redeemPresentation(callback, authorization: authorization)))
                }
            case .companion(let authorization) where authorization.route == .exchange:
                guard case .companion(let companion, .exchange) = authorizer.kind else {
                    await exchanged(flowID, result: nil, error: Self.notThisAuthorizers)
                    break
                }
                run(flowID) {
                    let url = try CallbackValidator.companionResponse(callback, authorization: authorization)
                    guard let binding = authorization.flowSecret else {
                        throw SwitchbackError(.flowInterrupted, "this sign-in was started without a binding and cannot be redeemed; start a new one")
                    }
                    return .signedIn(.companion(try await companion.exchange(callback: url, binding: binding)))
                }
            case .companion(let authorization):
                // Backend completion: the return link carries the one-time value the result is handed over
                // for; a refusal the companion already reported ends the sign-in as it is.
                if let completion = entry.completion {
                    await collected(flowID, completion)
                    break
                }
                guard case .companion(let companion, .completion) = authorizer.kind else {
                    await exchanged(flowID, result: nil, error: Self.notThisAuthorizers)
                    break
                }
                guard let secret = authorization.flowSecret else {
                    await exchanged(
                        flowID, result: nil,
                        error: SwitchbackError(
                            .flowInterrupted, "this sign-in was started without a flow secret and cannot be collected; start a new one"))
                    break
                }
                let returned: String?
                if case .redirect(let url) = callback { returned = CompanionAuthorization.returnValue(in: url) } else { returned = nil }
                run(flowID) {
                    switch try await companion.completionProgress(flowSecret: secret, result: returned, wait: 0) {
                    case .finished(let signIn):
                        return .signedIn(.companion(signIn))
                    case .running, .awaitingReturn:
                        throw SwitchbackError(
                            .authenticatorDidNotReturn, "the companion's return link did not carry this sign-in's result; start a new sign-in")
                    }
                }
            }
        case .complete(let outcome):
            complete(flowID, outcome: outcome, cancelled: cancelled)
            try? await journal.remove(flowID: flowID)
        }
    }

    /// A sign-in this coordinator's authorizer did not start and cannot finish (``Authorizer/finishes(_:)``).
    static let notThisAuthorizers = SwitchbackError(
        .invalidConfiguration, "this sign-in was started by another authorizer than this coordinator's, which cannot finish it")

    /// The app's own code, redeemed by itself or by the companion, and the ID token validated here; the
    /// credential records the user agent it was signed in with, for its sign-out.
    private func redeem(_ callback: AuthorizationCallback, session: AuthorizationSession, strategy: UserAgentStrategy) async throws
        -> SignInResult
    {
        guard case .app(let client, let redeemer) = authorizer.kind else { throw Self.notThisAuthorizers }
        var credential: Credential
        switch redeemer {
        case nil:
            credential = try await client.completeAuthorization(callback, session: session)
        case let companion?:
            let code = try await client.authorizationCode(from: callback, session: session)
            let tokens = try await companion.exchange(code: code, session: session)
            credential = try await client.credential(fromRedeemed: tokens, code: code, session: session)
        }
        credential.userAgent = strategy
        return .credential(credential)
    }

    /// Runs an exchange in a task of the flow's and reports its end to the flow. An error `notThisFlows`
    /// recognises says the return was not this flow's answer at all: the flow goes back to waiting
    /// (``SignInFlow/Event/returnUnknown``) instead of ending.
    private func run(
        _ flowID: String, notThisFlows: @escaping @Sendable (SwitchbackError) -> Bool = { _ in false },
        _ exchange: @escaping @Sendable () async throws -> FlowEnding
    ) {
        let task = Task {
            do {
                await exchanged(flowID, result: try await exchange(), error: nil)
            } catch let error as SwitchbackError where notThisFlows(error) {
                logger.notice("a return link that is not this sign-in's answer; still waiting", metadata: ["flow": "\(flowID.prefix(6))"])
                await deliver(.returnUnknown, to: flowID)
            } catch let error as SwitchbackError {
                await exchanged(flowID, result: nil, error: error)
            } catch {
                await exchanged(flowID, result: nil, error: SwitchbackError(.transportFailed, "the code exchange was interrupted", underlying: error))
            }
        }
        entries[flowID]?.tasks.append(task)
    }

    func exchanged(_ flowID: String, result: FlowEnding?, error: SwitchbackError?) async {
        entries[flowID]?.result = result
        entries[flowID]?.error = error
        await deliver(error.map { .exchangeFailed($0.code) } ?? .exchangeSucceeded, to: flowID)
    }

    private func complete(_ flowID: String, outcome: SignInFlow.Outcome, cancelled: Bool) {
        guard let entry = entries.removeValue(forKey: flowID) else { return }
        for task in entry.tasks { task.cancel() }
        finished.append((entry.flow, entry.authorization.state))
        if finished.count > Self.finishedKept { finished.removeFirst() }
        let result: Result<FlowEnding, any Error>
        switch outcome {
        case .signedIn:
            result = entry.result.map { .success($0) } ?? .failure(SwitchbackError(.invalidTokenResponse, "the exchange reported no credential"))
        case .cancelled where cancelled:
            result = .failure(CancellationError())
        case .cancelled where entry.authorization.isSignOut:
            // The user closed the provider's page: the sign-out here is done; whether the provider's
            // session ended, only its page said.
            result = .success(.endedSession(.closed))
        case .cancelled:
            result = .failure(SwitchbackError(.userCancelled, "the user closed the sign-in"))
        case .failed(.authenticatorUnavailable) where entry.flow.plan.startsInApp == true:
            result = .failure(
                SwitchbackError(
                    .authenticatorUnavailable,
                    "no app on this device opens the wallet link (\(entry.flow.plan.authorizationURL.scheme ?? "?"):); the user needs a wallet installed"
                ))
        case .failed(let code):
            result = .failure(entry.error.flatMap { $0.code == code ? $0 : nil } ?? SwitchbackError(code, Self.message(code)))
        }
        logger.info(
            entry.authorization.isSignOut ? "sign-out ended" : "sign-in ended", metadata: ["flow": "\(flowID.prefix(6))", "outcome": "\(outcome)"])
        if entry.waiters.isEmpty {
            unclaimed[flowID] = result
            unclaimedOrder.append(flowID)
            if unclaimedOrder.count > Self.finishedKept { unclaimed[unclaimedOrder.removeFirst()] = nil }
        }
        for waiter in entry.waiters { waiter.resume(with: result) }
    }

    /// Opens an app's link: its universal-link form first where the plan names one, then the link itself.
    private func openApp(_ url: URL, plan: SignInFlow.Plan) async -> Bool {
        if let universal = AppLinkForm.universalLink(for: url, appLinks: plan.appLinks ?? [:]) {
            if await opener.openUniversalLink(universal) { return true }
            // A wallet declared by its universal link is opened by it only: its request must not go to an app
            // that registered the scheme.
            if plan.startsInApp == true { return false }
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
        case .userAgentRefused:
            "the provider refused to show its sign-in page in this user agent (an HTTP error at its authorization endpoint); it may not allow embedded WebViews, use the system browser"
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
        case .returnUnknown: "returnUnknown"
        case .relaunched: "relaunched"
        }
    }
}
