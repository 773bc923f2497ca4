import Foundation
import HTTPTypes
import Hummingbird
import Instrumentation
import Logging
import NIOCore
import ServiceContextModule
import Tracing
@_spi(SwitchbackInternals) import Switchback

/// The companion's request context: Hummingbird's core storage and the connection's remote address,
/// which the start routes' rate limits key on.
struct CompanionContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

extension Companion {
    /// The backend's route for a permission statement (Norwegian BankID): not the app's, so not in ``CompanionAPI``.
    public static let permissionStatementPath = "/permission/statement"

    /// Who reads a route's answer: an app (JSON errors) or a browser (an error page, never a redirect).
    enum Audience {
        case app
        case browser
    }

    /// Registers the routes `configuration` turns on and returns their list.
    static func register(
        on router: Router<CompanionContext>, configuration: ServerConfiguration, limiter: RateLimiter, readiness: Readiness,
        metrics: CompanionMetrics, service: @escaping @Sendable () -> CompanionService
    ) -> [Route] {
        typealias Path = CompanionAPI.Path
        var routes: [Route] = []
        let proxies = configuration.limits.trustedProxies.compactMap(ClientAddress.Network.init)
        let limits = configuration.limits
        func add(
            _ method: HTTPRequest.Method, _ path: String, _ audience: Audience, _ purpose: String, limited: RateLimiter.Kind? = nil,
            attested: CompanionService.AttestedRoute = .none, bodyLimit: Int = CompanionService.maximumBody,
            _ handler: @escaping @Sendable (CompanionService, Request) async throws -> Response
        ) {
            let attesting = configuration.appAttest != nil || configuration.playIntegrity != nil
            let attested = attesting ? attested : .none
            let notes =
                (limited == nil ? "" : " [rate-limited]") + [.none: "", .start: " [attested]", .result: " [attestation checked if sent]"][attested]!
            routes.append(Route(method: method.rawValue, path: path, purpose: purpose + notes))
            // A flow's request names state the server issued, and an attested start carries a proof the server
            // checks: when the route's instance budget is spent, those it recognises are still answered.
            // Only a required attestation makes an attested start recognisable: an optional one lets any start through.
            let attestationRequired = configuration.appAttest?.required == true || configuration.playIntegrity?.required == true
            let budget = limited.map {
                RateLimiter.Route(
                    name: "\(method.rawValue) \(path)", kind: $0, answersKnown: $0 == .flow || (attested == .start && attestationRequired))
            }
            router.on(RouterPath(path), method: method) { request, context in
                let start = ContinuousClock.now
                let respond = {
                    await answer(
                        request, context, service: service(), route: (method, path, audience), budget: budget,
                        attested: (attested, bodyLimit), limiter: limiter, limits: limits, proxies: proxies, metrics: metrics,
                        handler: handler)
                }
                let response = metrics.tracing ? await traced(request, method: method, path: path, respond) : await respond()
                metrics.request(route: path, method: method.rawValue, status: Int(response.status.code), since: start)
                return response
            }
        }

        let associations = configuration.associations
        let apple = AppAssociation.appleDocument(associations).description
        let android = AppAssociation.androidDocument(associations).description
        add(.get, "/.well-known/apple-app-site-association", .app, "universal links and webcredentials for the configured apps") { _, _ in
            Replies.json(raw: apple)
        }
        add(.get, "/.well-known/assetlinks.json", .app, "Android App Links statements") { _, _ in Replies.json(raw: android) }
        add(.get, Path.health, .app, "liveness") { _, _ in Replies.json(["status": "ok"]) }
        add(.get, Path.ready, .app, "readiness: the store answers, provider metadata at hand; 503 while draining") { _, _ in
            let report = await readiness.report()
            return Replies.json(
                ["status": report.status, "store": report.store.rawValue, "provider": report.provider.rawValue],
                status: report.ready ? .ok : .serviceUnavailable)
        }

        if configuration.appAttest != nil || configuration.playIntegrity != nil {
            add(.post, Path.attestChallenge, .app, "a one-time challenge for App Attest or Play Integrity", limited: .start) {
                try await $0.attestationChallenge($1)
            }
        }
        if configuration.wallet != nil {
            add(
                .post, Path.walletStart, .app, "start a wallet presentation (OpenID4VP) bound to the app's secret; the wallet link", limited: .start,
                attested: .start
            ) { try await $0.startPresentation($1) }
            add(.get, Path.walletRequest, .app, "the signed request object, for the wallet", limited: .flow) {
                try await $0.presentationRequestObject($1)
            }
            add(.post, Path.walletRequest, .app, "the signed request object with the wallet's wallet_nonce", limited: .flow) {
                try await $0.presentationRequestObject($1)
            }
            add(.post, Path.walletResponse, .app, "the wallet's direct_post.jwt answer -> redirect_uri with a response_code", limited: .flow) {
                try await $0.presentationResponse($1)
            }
            add(.post, Path.walletRedeem, .app, "the verified claims for a response_code, once, with the app's secret", attested: .result) {
                try await $0.redeemPresentation($1)
            }
        }
        if configuration.appleIdentity != nil {
            add(
                .post, Path.appleIdentityStart, .app, "start a Verify with Wallet request bound to the app's secret; its nonce and merchant",
                limited: .start, attested: .start
            ) { try await $0.startAppleIdentity($1) }
            add(
                .post, Path.appleIdentityVerify, .app, "Wallet's encrypted answer, decrypted and verified, once, with the app's secret",
                limited: .flow, attested: .result, bodyLimit: CompanionService.maximumAppleIdentityBody
            ) {
                try await $0.verifyAppleIdentity($1)
            }
        }
        if configuration.appAttest != nil {
            add(.post, Path.attestRegister, .app, "App Attest: a new key's attestation over a challenge", limited: .start) {
                try await $0.registerAttestation($1)
            }
        }
        if configuration.exchange != nil {
            add(
                .post, Path.exchangeStart, .app, "start a sign-in whose code the server redeems, bound to the app's secret", limited: .start,
                attested: .start
            ) {
                try await $0.startExchange($1)
            }
            add(.post, Path.exchange, .app, "redeem the callback as a confidential client; tokens or a session", limited: .flow, attested: .result) {
                try await $0.exchange($1)
            }
            add(.post, Path.revoke, .app, "revoke a token the app holds, as the confidential client (RFC 7009)", limited: .start) {
                try await $0.revoke($1)
            }
        }
        if configuration.permission != nil {
            add(
                .post, Path.permission, .app, "upfront permission for an app_callback_uri and a registered statement (Norwegian BankID)",
                limited: .start, attested: .start
            ) {
                try await $0.permission($1)
            }
            add(.post, Companion.permissionStatementPath, .app, "your backend registers one transaction's statement (Bearer permission.backendToken)")
            {
                try await $0.registerStatement($1)
            }
        }
        if configuration.bridge != nil {
            add(.post, Path.bridgeStart, .app, "start a sign-in that returns to an allow-listed deep link", limited: .start, attested: .start) {
                try await $0.startBridge($1)
            }
            add(.get, Path.bridgeCallback, .browser, "provider answer (query; fragment through a forwarding page)") {
                try await $0.bridgeCallback($1)
            }
            add(.post, Path.bridgeCallback, .browser, "provider answer (form_post)") { try await $0.bridgeFormPost($1) }
            add(.post, Path.bridgeFragment, .browser, "fragment forwarded by the page") { try await $0.bridgeFragment($1) }
            add(.post, Path.bridgeRedeem, .app, "redeem the deep link's one-time code once") { try await $0.redeemBridge($1) }
        }
        if configuration.handOff != nil {
            add(.post, Path.handOff, .app, "access token (Bearer, or DPoP with a proof) -> one-time hand-off code", limited: .start) {
                try await $0.issueHandOff($1)
            }
            add(.get, Path.handOffRedeem, .browser, "?handoffotp&goto -> a page naming the account; nothing used up") { try await $0.showRedeem($1) }
            add(.post, Path.handOffRedeem, .browser, "same-origin confirm -> session cookie and redirect") { try await $0.redeemHandOff($1) }
        }
        if configuration.responsePage != nil {
            // One request per sign-in and no state to recognise: budgeted as a start, refused over its budget.
            add(
                .get, Path.response, .browser, "provider answer (query) -> a button to the app's universal link with it; nothing kept",
                limited: .start
            ) {
                try await $0.responsePage($1)
            }
        }
        if configuration.completion != nil {
            add(
                .post, Path.completionStart, .app, "start a sign-in the server completes, bound to the app's flow_id", limited: .start,
                attested: .start
            ) {
                try await $0.startCompletion($1)
            }
            add(.get, Path.completion, .browser, "provider answer (query); final page opens the app") { try await $0.completionCallback($1) }
            add(.post, Path.completion, .browser, "provider answer (form_post)") { try await $0.completionCallback($1) }
            add(
                .post, Path.completionStatus, .app, "long poll (one per flow) for the result; needs the app link's value", attested: .result
            ) {
                try await $0.completionStatus($1)
            }
        }
        if configuration.exchange?.returns == .session || configuration.bridge?.returns == .session || configuration.completion?.returns == .session
            || configuration.handOff != nil
        {
            add(.get, Path.session, .app, "who the session cookie or Authorization: Session belongs to") { try await $0.describeSession($1) }
            add(.post, Path.sessionLogout, .app, "end the session (cookie: same-origin only) and clear the cookie") { try await $0.endSession($1) }
            if configuration.provider != nil {
                add(.post, Path.backChannelLogout, .app, "OpenID Back-Channel Logout: a signed logout_token ends the sessions of its sub/sid") {
                    try await $0.backChannelLogout($1)
                }
            }
        }
        if !associations.isEmpty {
            // A universal link that opened in a browser (typed, or reached by a redirect): say so, and offer
            // a tap, which iOS does route to the app.
            routes.append(Route(method: "GET", path: "/<app link paths>", purpose: "a universal link opened in a browser: a tap-to-open page"))
            router.get("**") { request, _ -> Response in
                guard associations.contains(where: { $0.claims(request.uri.path) }),
                    let link = service().appLink(path: request.uri.path, query: request.uri.query)
                else {
                    return Response(
                        status: .notFound, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(string: "not found\n")))
                }
                return Replies.page(
                    status: .ok, title: "Open the app", message: "This link belongs to the app.",
                    extra: "<p><a id=\"return\" href=\"\(Replies.escape(link.absoluteString))\">Open it in the app</a></p>"
                )
            }
        }
        return routes
    }

    /// `respond` inside one server span, named by the route template; a caller's W3C trace context continues.
    private static func traced(
        _ request: Request, method: HTTPRequest.Method, path: String, _ respond: () async -> Response
    ) async -> Response {
        var trace = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &trace, using: HeaderExtractor())
        return await withSpan("\(method.rawValue) \(path)", context: trace, ofKind: .server) { span in
            span.attributes["http.request.method"] = method.rawValue
            span.attributes["http.route"] = path
            let response = await respond()
            span.attributes["http.response.status_code"] = Int(response.status.code)
            if response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
            return response
        }
    }

    /// One request's answer, every error turned into the route's kind of refusal: JSON for an app, a page for
    /// a browser. Rate limit first, then App Attest, then the handler.
    private static func answer(
        _ request: Request, _ context: CompanionContext, service: CompanionService,
        route: (method: HTTPRequest.Method, path: String, audience: Audience),
        budget: RateLimiter.Route?, attested attestedRoute: (route: CompanionService.AttestedRoute, bodyLimit: Int), limiter: RateLimiter,
        limits: ServerConfiguration.Limits, proxies: [ClientAddress.Network],
        metrics: CompanionMetrics, handler: @Sendable (CompanionService, Request) async throws -> Response
    ) async -> Response {
        let (method, path, audience) = route
        var admission: Admission?
        do {
            if let budget {
                let client = clientAddress(request, context, limits: limits, proxies: proxies)
                switch await limiter.admit(client, route: budget) {
                case .allowed: admission = Admission(limiter: limiter, client: client, knownOnly: nil)
                case .knownOnly(let retryAfter): admission = Admission(limiter: limiter, client: client, knownOnly: retryAfter)
                case .limited(let retryAfter):
                    service.logger.notice("rate limited", metadata: ["route": "\(path)"])
                    throw CompanionError.rateLimited(retryAfter: retryAfter)
                }
            }
            return try await CompanionService.$admission.withValue(admission) {
                var request = request
                let (attested, bodyLimit) = attestedRoute
                guard attested != .none,
                    let proof = try await service.checkAttestation(
                        &request, method: method.rawValue, path: path, route: attested, bodyLimit: bodyLimit)
                else { return try await handler(service, request) }
                let attestedRequest = request
                return try await CompanionService.$attested.withValue(proof) { try await handler(service, attestedRequest) }
            }
        } catch var error as CompanionError {
            // Over the route's budget, a request whose flow the server did not find is refused as the limit; one
            // it found keeps its own refusal (a retry of a used-up flow could only fail again).
            if let knownOnly = admission?.knownOnly, error.code != .rateLimited, admission?.recognised != true {
                service.logger.notice("rate limited", metadata: ["route": "\(path)"])
                error = CompanionError.rateLimited(retryAfter: knownOnly)
            }
            service.logger.info("refused", metadata: ["route": "\(path)", "error": "\(error.code)"])
            // `slow_down` is the OAuth name the answer carries; the metric says what happened.
            metrics.refused(route: path, reason: error.code == .rateLimited ? "rate_limited" : error.code.name)
            var response = audience == .app ? error.json : error.page
            if let retryAfter = error.retryAfter { response.headers[.retryAfter] = "\(retryAfter)" }
            return response
        } catch let tampered as TamperedRecord {
            // Someone wrote to the store without a record key this server holds, or altered a row: answered
            // as a secret the server does not know, and counted.
            service.logger.warning("\(tampered.description)", metadata: ["route": "\(path)"])
            metrics.refused(route: path, reason: "tampered_record")
            let refusal = CompanionError(.invalidToken, "this value is unknown, expired or was already used")
            return audience == .app ? refusal.json : refusal.page
        } catch let error as SwitchbackError {
            service.logger.error("store or provider failure", metadata: ["route": "\(path)", "code": "\(error.code)"])
            metrics.refused(route: path, reason: "unavailable")
            let failure = CompanionError(.unavailable, "the server could not complete this request; try again")
            return audience == .app ? failure.json : failure.page
        } catch {
            service.logger.error("unexpected failure", metadata: ["route": "\(path)", "error": "\(type(of: error))"])
            metrics.refused(route: path, reason: "unavailable")
            let failure = CompanionError(.unavailable, "the server could not complete this request; try again")
            return audience == .app ? failure.json : failure.page
        }
    }
}

/// The client's address for the rate limits (``ClientAddress/bucket``): on a connection from one of your
/// proxies with the header configured, the entry `trustedHops` from the header's end (the address the
/// outermost trusted proxy saw); on any other connection, the connection's own address, the header ignored.
func clientAddress(
    _ request: Request, _ context: CompanionContext, limits: ServerConfiguration.Limits, proxies: [ClientAddress.Network]
) -> ClientAddress? {
    let connection = context.remoteAddress.flatMap { ClientAddress($0) }
    if let header = limits.clientAddressHeader, let name = HTTPField.Name(header), let connection, proxies.contains(where: connection.isIn),
        let value = request.headers[name]
    {
        let entries = value.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
        let index = entries.count - limits.trustedHops
        // An entry your own proxy wrote that is no address: the one shared bucket of unknown clients, so
        // nothing is gained by it.
        guard index >= 0 else { return nil }
        return ClientAddress(entries[index])
    }
    return connection
}

/// Reads a caller's trace context (W3C `traceparent`, or whatever the bootstrapped instrument propagates)
/// from the request's headers.
struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: HTTPFields) -> String? {
        HTTPField.Name(key).flatMap { carrier[$0] }
    }
}

extension Replies {
    static func json(raw: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: raw)))
    }
}
