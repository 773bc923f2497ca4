import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// The authenticator-app side of a sign-in: the hand-off page, the endpoints the authenticator app
/// calls (approve, decline, ignore), and the provider pages the app returns to.
@available(macOS 14, iOS 17, *)
extension Provider {
    static let sessionCookie = "switchback_session"

    func addHandOffRoutes(to router: Router<BasicRequestContext>) {
        router.get("/uaepass/resume") { request, _ in
            await continueTransaction(request.uri.queryParameters["txn"].map(String.init), cookie: request.headers[.cookie], cancelled: false)
        }
        router.get("/uaepass/cancel") { request, _ in
            await continueTransaction(request.uri.queryParameters["txn"].map(String.init), cookie: request.headers[.cookie], cancelled: true)
        }
        router.get("/continue") { request, _ in
            await continueTransaction(request.uri.queryParameters["txn"].map(String.init), cookie: request.headers[.cookie], cancelled: false)
        }
        // Norwegian BankID's biometrics server: its own discovery document names its permissions endpoint.
        router.get("/biometrics/.well-known/openid-configuration") { _, _ in
            guard case .bankIDNorway = profile.handOff else { return Reply.oauthError(.notFound, "not_found", "this profile has no biometrics server") }
            let base = issuer.issuer + "/biometrics"
            return Reply.json(.object(["issuer": .string(base), "permissions_endpoint": .string(base + "/permissions")]))
        }
        router.post("/biometrics/permissions") { request, _ in
            var request = request
            return await registerPermission(json: try? await request.collectBody(upTo: Self.maximumBody), authorization: request.headers[.authorization])
        }
        router.post("/bankid-no/webauthn") { request, _ in
            var request = request
            return await completeWebAuthn(form: try? await request.collectBody(upTo: Self.maximumBody), cookie: request.headers[.cookie])
        }
        router.get("/authenticator/transaction") { request, _ in
            await describeTransaction(reference: request.uri.queryParameters["txn"].map(String.init))
        }
        router.post("/authenticator/open") { request, _ in
            var request = request
            return await openTransaction(form: try? await request.collectBody(upTo: Self.maximumBody))
        }
        router.get("/bankid/collect") { request, _ in
            await collect(reference: request.uri.queryParameters["txn"].map(String.init))
        }
        router.get("/bankid/qr") { request, _ in
            await qrCode(reference: request.uri.queryParameters["txn"].map(String.init))
        }
        router.post("/authenticator/scan") { request, _ in
            var request = request
            return await scan(form: try? await request.collectBody(upTo: Self.maximumBody))
        }
        router.get("/authenticator/inbox") { request, _ in
            await inbox(username: request.uri.queryParameters["username"].map(String.init))
        }
        router.get("/qr") { request, _ in
            await otherPhoneQR(reference: request.uri.queryParameters["txn"].map(String.init))
        }
        router.post("/otherdevice") { request, _ in
            var request = request
            return await sendToOtherPhone(form: try? await request.collectBody(upTo: Self.maximumBody), cookie: request.headers[.cookie])
        }
        for (path, action) in [("approve", AuthenticatorAction.approve), ("decline", .decline), ("ignore", .ignore), ("fail", .fail)] {
            router.post("/authenticator/\(path)") { request, _ in
                var request = request
                return await authenticator(action, form: try? await request.collectBody(upTo: Self.maximumBody))
            }
        }
    }

    /// Starts a transaction for `pending` and answers with the page (or 302) that opens the app.
    func startHandOff(
        _ pending: ProviderState.Pending, requestID: String, acr: String?, appName: String, link: (_ reference: String) -> String,
        polls: Bool, statusPath: String = "/authenticator/transaction", otherPhone: (_ reference: String) -> Reply.OtherPhone? = { _ in nil }
    ) async -> Response {
        let transaction = await state.startTransaction(requestID: requestID, clientID: pending.clientID, acr: acr)
        let reference = transaction.reference
        var response = Reply.handOff(
            link(reference), delivery: profile.handOffDelivery, appName: appName,
            poll: polls ? (status: "\(statusPath)?txn=\(reference)", next: "/continue?txn=\(reference)") : nil,
            otherPhone: otherPhone(reference)
        )
        setSessionCookie(transaction, on: &response)
        return response
    }

    /// Binds the browser to the transaction: only the browser holding this cookie can finish it.
    func setSessionCookie(_ transaction: ProviderState.Transaction, on response: inout Response) {
        let lifetime = profile.uaePassOptions?.loginCookieLifetime.map { "; Max-Age=\($0)" } ?? ""
        response.headers[.setCookie] = "\(Self.sessionCookie)=\(transaction.session); Path=/; HttpOnly; SameSite=Lax\(lifetime)"
    }

    // MARK: UAE Pass

    func uaePassHandOff(_ pending: ProviderState.Pending, requestID: String, options: UAEPassOptions) async -> Response {
        let base = issuer.issuer
        return await startHandOff(pending, requestID: requestID, acr: UAEPassOptions.onDeviceACR, appName: "UAE Pass", link: { reference in
            options.deepLink(reference: reference, successURL: "\(base)/uaepass/resume?txn=\(reference)", failureURL: "\(base)/uaepass/cancel?txn=\(reference)")
        }, polls: false)
    }

    // MARK: Norwegian BankID

    /// The method the request selects: `acr_values=urn:bankid:bis` (BankID with biometrics) or
    /// `urn:bankid:bid` (BankID, the default); the legacy `login_hint` BIS/BID still counts when no acr is
    /// asked for (BankID "Identity Providers").
    static func bankIDNorwayMethod(_ pending: ProviderState.Pending) -> String {
        if pending.acrValues.contains(BankIDNorway.bisRequest) { return BankIDNorway.bisACR }
        if pending.acrValues.contains(BankIDNorway.bidRequest) { return BankIDNorway.bidACR }
        return pending.loginHint?.uppercased().hasPrefix("BIS") == true ? BankIDNorway.bisACR : BankIDNorway.bidACR
    }

    func bankIDNorwayHandOff(_ pending: ProviderState.Pending, requestID: String) async -> Response {
        if Self.bankIDNorwayMethod(pending) == BankIDNorway.bisACR {
            // BankID with biometrics completes in the browser with a passkey (WebAuthn); no app switch.
            let transaction = await state.startTransaction(requestID: requestID, clientID: pending.clientID, acr: BankIDNorway.bisACR)
            var response = Reply.confirmPage(
                title: "BankID with biometrics", message: "Confirm with your passkey (Face ID or Touch ID) on this device.",
                action: "/bankid-no/webauthn", fields: [("txn", transaction.reference)], button: "Use passkey"
            )
            response.headers[.setCookie] = "\(Self.sessionCookie)=\(transaction.session); Path=/; HttpOnly; SameSite=Lax"
            return response
        }
        if let callback = pending.appReturnURL {
            let refusal: String? =
                if !callback.hasPrefix("https://") || URL(string: callback)?.host == nil {
                    "app_callback_uri must be an https URL (a universal link)"
                } else if let token = pending.permissionToken, await state.takePermission(token, clientID: pending.clientID, callback: callback) {
                    nil
                } else {
                    "app_callback_uri needs a permission_token granted upfront for it by the biometrics server's permissions endpoint"
                }
            if let refusal { return await refuse(requestID, pending, refusal) }
        }
        return await startHandOff(pending, requestID: requestID, acr: BankIDNorway.bidACR, appName: "BankID", link: { reference in
            var link = "bankid-no://authenticate?txn=\(reference)"
            if let callback = pending.appReturnURL { link += "&app_callback_uri=" + FormEncoding.escape(callback) }
            return link
        }, polls: true)
    }

    /// `POST /bankid-no/webauthn`: the passkey assertion made in the browser (modelled as the user's
    /// confirmation); only the browser that started the sign-in can finish it.
    func completeWebAuthn(form body: ByteBuffer?, cookie: String?) async -> Response {
        guard let form = Self.transactionForm(body), let reference = form["txn"], let user = configuration.users.first,
            await state.decide(reference, .approved(subject: user.subject))
        else {
            return Reply.page(.badRequest, title: "Invalid request", message: "This passkey confirmation is unknown or already used.")
        }
        return await continueTransaction(reference, cookie: cookie, cancelled: false)
    }

    /// `POST /biometrics/permissions` on the biometrics server: with a client-credentials access token whose
    /// scope holds `permissions/client`, a JSON permission (here for an `app_callback_uri` allow-listed for
    /// the client); answers `id`, `permissionToken` and `bindingMessage` (the shape of BankID's public
    /// examples). How the token is carried to `/authorize` is not documented; the emulator reads
    /// `permission_token`.
    func registerPermission(json body: ByteBuffer?, authorization: String?) async -> Response {
        guard case .bankIDNorway = profile.handOff else { return Reply.oauthError(.notFound, "not_found", "this profile has no permissions endpoint") }
        guard let authorization, authorization.lowercased().hasPrefix("bearer "),
            let client = await state.clientToken(String(authorization.dropFirst(7))), client.scopes.contains("permissions/client")
        else {
            return Reply.bearerError()
        }
        guard let body, case .object(let permission)? = try? JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: body).utf8)) else {
            return Reply.oauthError(.badRequest, "invalid_request", "the permission must be a JSON object")
        }
        var callback: String?
        if case .string(let uri)? = permission["app_callback_uri"] {
            guard configuration.client(client.clientID)?.appReturnURLs.contains(uri) == true else {
                return Reply.oauthError(.badRequest, "invalid_request", "the app_callback_uri is not registered for this client")
            }
            callback = uri
        }
        let token = await state.issuePermission(clientID: client.clientID, callback: callback, lifetime: 300)
        return Reply.json(.object([
            "id": .string(UUID().uuidString.lowercased()), "permissionToken": .string(token), "bindingMessage": .string("Sign in to \(client.clientID)"),
        ]), status: .created)
    }

    /// Parses a form body and authenticates a confidential client (a public client is refused) for
    /// endpoints only a backend may call.
    func confidentialClient(form body: ByteBuffer?, authorization: String?, purpose: String) async
        -> Result<(EmulatorConfiguration.Client, [String: String]), ClientAuthenticationFailure>
    {
        guard let body, case .success(let form) = AuthorizationRequest.parameters(String(buffer: body)) else {
            return .failure(ClientAuthenticationFailure(response: Reply.oauthError(.badRequest, "invalid_request", "the body must be a form")))
        }
        switch await authenticate(form: form, authorization: authorization) {
        case .failure(let failure):
            return .failure(failure)
        case .success(let client) where client.authentication == .none:
            return .failure(ClientAuthenticationFailure(response: Reply.oauthError(.unauthorized, "invalid_client", "\(purpose) by a confidential client only")))
        case .success(let client):
            return .success((client, form))
        }
    }

    // MARK: MitID via a broker

    func mitIDHandOff(_ pending: ProviderState.Pending, requestID: String) async -> Response {
        var resumeURL: String?
        if let hint = pending.loginHint, hint.split(separator: " ").contains("appswitch:ios") {
            let prefix = "appswitch:resumeUrl:"
            resumeURL = hint.split(separator: " ").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
            guard let resumeURL, isAppReturnURL(resumeURL, of: pending) else {
                return await refuse(requestID, pending, "the app switch resumeUrl is missing or not allow-listed for this client")
            }
        }
        return await startHandOff(pending, requestID: requestID, acr: MitID.substantialACR, appName: "MitID app", link: { reference in
            var link = "https://\(MitID.appSwitchHost)/authenticate?txn=\(reference)"
            if let resumeURL { link += "&app_switch_url=" + FormEncoding.escape(resumeURL) }
            return link
        }, polls: true, otherPhone: { .identifier(reference: $0, label: "MitID app on another device? Your user ID") })
    }

    // MARK: Swedish BankID via a broker

    func bankIDSwedenHandOff(_ pending: ProviderState.Pending, requestID: String, options: BankIDSwedenOptions) async -> Response {
        // Idura's form: `login_hint=appswitch:resumeUrl:<url>` (without `appswitch:ios` for Swedish BankID).
        let prefix = "appswitch:resumeUrl:"
        let resumeURL = pending.loginHint?.split(separator: " ").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        if let resumeURL, !isAppReturnURL(resumeURL, of: pending) {
            return await refuse(requestID, pending, "the app switch resumeUrl is not allow-listed for this client")
        }
        return await startHandOff(pending, requestID: requestID, acr: BankIDSweden.loa3ACR, appName: "BankID", link: { reference in
            options.autostartLink(token: reference, redirect: resumeURL)
        }, polls: true, statusPath: "/bankid/collect", otherPhone: { .qrCode(source: "/bankid/qr?txn=\($0)") })
    }

    /// `GET /bankid/collect?txn=`: the order's progress, as the BankID RP API's collect reports it.
    func collect(reference: String?) async -> Response {
        guard let reference, let transaction = await state.transaction(reference) else {
            return Reply.oauthError(.badRequest, "invalidParameters", "no such order")
        }
        var answer: [String: JSONValue] = ["orderRef": .string(reference)]
        switch await bankIDStatus(transaction) {
        case .pending(let hint):
            answer["status"] = .string("pending")
            answer["hintCode"] = .string(hint)
        case .complete:
            answer["status"] = .string("complete")
        case .failed(let hint):
            answer["status"] = .string("failed")
            answer["hintCode"] = .string(hint)
        }
        return Reply.json(.object(answer))
    }

    /// An order's state in the RP API's terms: `pending` with `outstandingTransaction` (the app has not
    /// opened it), `started` (opened without a usable BankID) or `userSign`; `complete`; or `failed` with
    /// `userCancel` (declined in the app), `startFailed` (no app opened it in time), `expiredTransaction`
    /// (past its lifetime), or the code the app reported (`certificateErr`) or a newer order for the same
    /// user set (`cancelled`).
    enum BankIDOrderStatus: Equatable {
        case pending(String)
        case complete
        case failed(String)
    }

    func bankIDStatus(_ transaction: ProviderState.Transaction) async -> BankIDOrderStatus {
        let options = if case .bankIDSweden(let options) = profile.handOff { options } else { BankIDSwedenOptions() }
        switch transaction.status {
        case .approved: return .complete
        case .declined: return .failed("userCancel")
        case .failed(let hint): return .failed(hint)
        case .pending, .ignored:
            let elapsed = await state.currentDate.timeIntervalSince(transaction.startedAt)
            if !transaction.opened, elapsed > options.startLifetime { return .failed("startFailed") }
            if elapsed > options.orderLifetime { return .failed("expiredTransaction") }
            if !transaction.opened { return .pending("outstandingTransaction") }
            return .pending(transaction.withoutUsableID ? "started" : "userSign")
        }
    }

    /// What each failed hint code means, for the broker's `error_description` (in the emulator's words).
    static let bankIDFailures: [String: String] = [
        "userCancel": "the user cancelled in the BankID app",
        "expiredTransaction": "the BankID order expired before the user answered",
        "startFailed": "no BankID app started the order in time",
        "certificateErr": "the user's BankID is blocked, revoked or not valid",
        "cancelled": "a newer order for the same user replaced this one",
    ]

    /// `GET /bankid/qr?txn=`: the animated QR code's current content, for a phone other than this one.
    func qrCode(reference: String?) async -> Response {
        guard let reference, let transaction = await state.transaction(reference) else {
            return Reply.oauthError(.badRequest, "invalidParameters", "no such order")
        }
        let seconds = max(0, Int(await state.currentDate.timeIntervalSince(transaction.startedAt)))
        return Reply.json(.object([
            "qr": .string(BankIDSwedenOptions.qrCode(startToken: transaction.qrStartToken, startSecret: transaction.qrStartSecret, seconds: seconds)),
        ]))
    }

    // MARK: Singpass

    func singpassHandOff(_ pending: ProviderState.Pending, requestID: String) async -> Response {
        if let launch = pending.appReturnURL, !isAppReturnURL(launch, of: pending) {
            return await refuse(requestID, pending, "app_launch_url is not registered for this client")
        }
        return await startHandOff(pending, requestID: requestID, acr: Singpass.acr, appName: "Singpass", link: { reference in
            var link = "singpass://auth?txn=\(reference)"
            if let launch = pending.appReturnURL { link += "&app_launch_url=" + FormEncoding.escape(launch) }
            return link
        }, polls: true, otherPhone: { .qrCode(source: "/qr?txn=\($0)") })
    }

    /// Whether `url` is one of the client's registered app return URLs (exact match).
    func isAppReturnURL(_ url: String, of pending: ProviderState.Pending) -> Bool {
        configuration.client(pending.clientID)?.appReturnURLs.contains(url) ?? false
    }

    // MARK: Returning from the app

    /// Where the browser goes back to after the app: UAE Pass's https resume and cancel pages, or the
    /// page the provider's script moves to once the app has answered. They finish the sign-in only in
    /// the browser that started it (its session cookie): opened anywhere else they are a dead end, as
    /// pattern A is.
    func continueTransaction(_ reference: String?, cookie: String?, cancelled: Bool) async -> Response {
        guard let reference, let transaction = await state.transaction(reference),
            let session = Self.cookie(Self.sessionCookie, in: cookie), ConstantTime.equals(session, transaction.session),
            let pending = await state.pending(transaction.requestID)
        else {
            return Reply.page(
                .forbidden, title: "Session expired",
                message: "This sign-in cannot continue here. Return to the app where it started and try again."
            )
        }
        if case .bankIDSweden = profile.handOff, case .failed(let hint) = await bankIDStatus(transaction) {
            // The broker ends the sign-in with the order's hint code, so the app can tell them apart.
            await state.endTransaction(reference)
            return await refuse(transaction.requestID, pending, error: "access_denied", "\(hint): \(Self.bankIDFailures[hint] ?? "the BankID order failed")")
        }
        if case .failed(let hint) = transaction.status {
            await state.endTransaction(reference)
            return await refuse(transaction.requestID, pending, error: "access_denied", "\(hint): the authenticator app refused the request")
        }
        if cancelled || transaction.status == .declined {
            var decline = UAEPassOptions.Decline.accessDenied
            if case .uaePass(let options) = profile.handOff { decline = options.decline }
            switch decline {
            case .never:
                return Reply.spinner(title: "Please wait", message: "Processing your request…")
            case .accessDenied, .cancelled:
                await state.endTransaction(reference)
                return await refuse(transaction.requestID, pending, error: decline.rawValue, "the user declined in the authenticator app")
            }
        }
        guard case .approved(let subject) = transaction.status else {
            return Reply.spinner(title: "Waiting for the app", message: "Approve the request in the app.", refreshAfter: 2)
        }
        await state.endTransaction(reference)
        return await finish(requestID: transaction.requestID, pending: pending, subject: subject, acr: transaction.acr)
    }

    // MARK: The authenticator app's endpoints

    enum AuthenticatorAction {
        case approve, decline, ignore, fail
    }

    /// The failure codes an authenticator app may report (`POST /authenticator/fail` with `hintCode`).
    static let reportableFailures: Set<String> = ["certificateErr", "userDeclinedCall", "notSupportedByUserApp"]

    /// `GET /authenticator/transaction?txn=`: what the app shows before the user decides.
    func describeTransaction(reference: String?) async -> Response {
        guard let reference, let transaction = await state.transaction(reference) else {
            return Reply.oauthError(.notFound, "unknown_transaction", "no open transaction with this reference")
        }
        return Reply.json(.object([
            "txn": .string(transaction.reference), "client_id": .string(transaction.clientID), "status": .string(transaction.status.name),
        ]))
    }

    /// `POST /authenticator/open` with `txn` (and `username`; `usable=false` when the app has no usable
    /// identity yet): the app shows the request to the user. In Swedish BankID a second order opened by
    /// the same user fails the first with `cancelled`.
    func openTransaction(form body: ByteBuffer?) async -> Response {
        guard let form = Self.transactionForm(body), let reference = form["txn"] else { return Self.missingTransaction }
        return await describeTransaction(reference: await open(reference, form: form)?.reference)
    }

    func open(_ reference: String, form: [String: String]) async -> ProviderState.Transaction? {
        let replacing: String? = if case .bankIDSweden = profile.handOff { "cancelled" } else { nil }
        let user = form["username"] ?? configuration.users.first?.username
        return await state.open(reference, user: user, usableID: form["usable"] != "false", replacing: replacing)
    }

    /// `POST /authenticator/scan` with `qr` (and `username`): the app on another phone scanned the code
    /// the browser shows and opens that request. A Swedish BankID code must verify (HMAC over its
    /// seconds) and be at most `BankIDSwedenOptions.qrCodeAge` old, so a code relayed from elsewhere is
    /// stale; Singpass's and MitID's codes are single-use and live `OtherPhone.qrLifetime`.
    func scan(form body: ByteBuffer?) async -> Response {
        guard let form = Self.transactionForm(body), let content = form["qr"] else {
            return Reply.oauthError(.badRequest, "invalid_request", "the body must be a form with qr")
        }
        guard let transaction = await scannedTransaction(content) else {
            return Reply.oauthError(.badRequest, "invalid_qr", "the QR code is unknown, expired or not valid")
        }
        return await describeTransaction(reference: await open(transaction.reference, form: form)?.reference)
    }

    func scannedTransaction(_ content: String) async -> ProviderState.Transaction? {
        let now = await state.currentDate
        if case .bankIDSweden = profile.handOff {
            let parts = content.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 4, parts[0] == "bankid", let seconds = Int(parts[2]),
                let transaction = await state.transaction(qrStartToken: parts[1])
            else { return nil }
            let elapsed = Int(now.timeIntervalSince(transaction.startedAt))
            let expected = BankIDSwedenOptions.qrCode(startToken: transaction.qrStartToken, startSecret: transaction.qrStartSecret, seconds: seconds)
            guard ConstantTime.equals(expected, content), seconds <= elapsed, elapsed - seconds <= BankIDSwedenOptions.qrCodeAge else { return nil }
            return transaction
        }
        guard content.hasPrefix(Self.qrPrefix), let transaction = await state.transaction(scanToken: String(content.dropFirst(Self.qrPrefix.count))),
            !transaction.opened, now.timeIntervalSince(transaction.startedAt) <= Self.qrLifetime
        else { return nil }
        return transaction
    }

    /// The QR content of Singpass's and MitID's other-device codes in the emulator (their real content is
    /// not public).
    static let qrPrefix = "switchback-emulator-qr:"
    /// How long such a code can be scanned: two minutes, as an archived Singpass login page script sets
    /// (MockPass's copy; Singpass documents no figure).
    static let qrLifetime: TimeInterval = 120

    /// `GET /qr?txn=`: the QR code another phone scans (Singpass; MitID once the user ID is known).
    func otherPhoneQR(reference: String?) async -> Response {
        guard let reference, let transaction = await state.transaction(reference), transaction.status == .pending else {
            return Reply.oauthError(.badRequest, "invalid_request", "no such request")
        }
        return Reply.json(.object(["qr": .string(Self.qrPrefix + transaction.scanToken)]))
    }

    /// `POST /otherdevice` with `txn` and `identifier`, from the browser that started the sign-in: the
    /// request goes to that user's app on another phone. UAE Pass then shows a number the user picks in
    /// the app; MitID shows a QR code the app scans before the user swipes.
    func sendToOtherPhone(form body: ByteBuffer?, cookie: String?) async -> Response {
        guard let form = Self.transactionForm(body), let reference = form["txn"], let transaction = await state.transaction(reference),
            let session = Self.cookie(Self.sessionCookie, in: cookie), ConstantTime.equals(session, transaction.session)
        else {
            return Reply.page(.forbidden, title: "Session expired", message: "This sign-in cannot continue here. Return to the app where it started and try again.")
        }
        guard let identifier = form["identifier"], let user = configuration.users.first(where: { $0.username == identifier }) else {
            return Reply.page(.badRequest, title: "Unknown user", message: "No account has this identifier.")
        }
        let poll = (status: "/authenticator/transaction?txn=\(reference)", next: "/continue?txn=\(reference)")
        if case .uaePass = profile.handOff {
            let code = String(Int.random(in: 10...99))
            guard await state.send(reference, to: user.username, matchCode: code) != nil else { return Self.decidedPage }
            return Reply.waiting(
                title: "Confirm in UAE Pass", lead: "<p>We sent a request to your UAE Pass app.</p>", appName: "UAE Pass", poll: poll,
                otherPhone: .matchCode(code)
            )
        }
        guard await state.send(reference, to: user.username, matchCode: nil) != nil else { return Self.decidedPage }
        return Reply.waiting(
            title: "Scan with the MitID app", lead: "<p>Scan the code with the MitID app, then swipe to approve.</p>", appName: "MitID app",
            poll: poll, otherPhone: .qrCode(source: "/qr?txn=\(reference)")
        )
    }

    static var decidedPage: Response { Reply.page(.conflict, title: "Already answered", message: "This request has already been answered.") }

    /// `GET /authenticator/inbox?username=`: the requests waiting in that user's app (push notifications),
    /// each with the numbers offered when the provider matches one (the right one among two others).
    func inbox(username: String?) async -> Response {
        guard let username else { return Reply.oauthError(.badRequest, "invalid_request", "username is required") }
        let requests = await state.inbox(of: username).map { transaction -> JSONValue in
            var entry: [String: JSONValue] = ["txn": .string(transaction.reference), "client_id": .string(transaction.clientID)]
            if let match = transaction.matchCode, let value = Int(match) {
                var choices: Set<Int> = [value]
                while choices.count < 3 { choices.insert(Int.random(in: 10...99)) }
                entry["choices"] = .array(choices.sorted().map { .string(String($0)) })
            }
            return .object(entry)
        }
        return Reply.json(.object(["requests": .array(requests)]))
    }

    /// `POST /authenticator/{approve,decline,ignore}` with `txn` (and `username` to approve as someone
    /// other than the first configured user).
    func authenticator(_ action: AuthenticatorAction, form body: ByteBuffer?) async -> Response {
        guard let form = Self.transactionForm(body), let reference = form["txn"] else { return Self.missingTransaction }
        let status: ProviderState.Transaction.Status
        switch action {
        case .approve:
            guard let user = form["username"].map({ name in configuration.users.first { $0.username == name } }) ?? configuration.users.first else {
                return Reply.oauthError(.badRequest, "invalid_request", "unknown username")
            }
            status = .approved(subject: user.subject)
        case .decline: status = .declined
        case .ignore: status = .ignored
        case .fail:
            guard let hint = form["hintCode"], Self.reportableFailures.contains(hint) else {
                return Reply.oauthError(.badRequest, "invalid_request", "hintCode must be one of \(Self.reportableFailures.sorted().joined(separator: ", "))")
            }
            status = .failed(hint: hint)
        }
        // Number matching: approving with the wrong number (or none) refuses the request.
        if case .approved = status, let expected = await state.transaction(reference)?.matchCode {
            guard let chosen = form["match"], ConstantTime.equals(chosen, expected) else {
                _ = await state.decide(reference, .declined)
                return Reply.oauthError(.badRequest, "wrong_match", "the number chosen is not the one the browser shows; the request is refused")
            }
        }
        guard await state.decide(reference, status) else {
            return Reply.oauthError(.conflict, "invalid_transaction", "the transaction is unknown or already decided")
        }
        return Reply.json(.object(["txn": .string(reference), "status": .string(status.name)]))
    }

    /// The form an authenticator endpoint takes; nil when it cannot be read.
    static func transactionForm(_ body: ByteBuffer?) -> [String: String]? {
        guard let body, case .success(let form) = AuthorizationRequest.parameters(String(buffer: body)) else { return nil }
        return form
    }

    static var missingTransaction: Response { Reply.oauthError(.badRequest, "invalid_request", "the body must be a form with txn") }

    /// The value of cookie `name` in a `Cookie` header.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name { return String(parts[1]) }
        }
        return nil
    }
}

/// Recognises embedded WebViews by their User-Agent, as providers that refuse them do.
enum UserAgent {
    /// Android WebViews add `; wv)`; iOS `WKWebView`s name `AppleWebKit` and a `Mobile/` build but no
    /// `Safari/` token, which Safari, `SFSafariViewController` and `ASWebAuthenticationSession` all send.
    static func isEmbeddedWebView(_ userAgent: String?) -> Bool {
        guard let userAgent else { return false }
        if userAgent.contains("; wv)") { return true }
        let iOS = userAgent.contains("iPhone") || userAgent.contains("iPad")
        return iOS && userAgent.contains("AppleWebKit") && !userAgent.contains("Safari/")
    }
}

extension MitID {
    /// The MitID app's universal-link host (Idura's app detection names it).
    public static let appSwitchHost = "appswitch.mitid.nets.eu"
}

/// The acr the Singpass profile reports.
public enum Singpass {
    public static let acr = "urn:singpass:authentication:loa:2"
}

/// The level of assurance Swedish BankID brokers report.
public enum BankIDSweden {
    public static let loa3ACR = "http://id.elegnamnden.se/loa/1.0/loa3"
}

/// The level of assurance MitID brokers report.
public enum MitID {
    public static let substantialACR = "https://data.gov.dk/concept/core/nsis/loa/Substantial"
}

/// Norwegian BankID's acr values.
public enum BankIDNorway {
    /// BankID (`acr_values=urn:bankid:bid`, the default): the ID token's acr.
    public static let bidACR = "urn:bankid:bid;LOA=4"
    /// BankID with biometrics (`acr_values=urn:bankid:bis`): the ID token's acr.
    public static let bisACR = "urn:bankid:bis;LOA=3"
    /// The `acr_values` that select each method (without the LOA suffix the ID token carries).
    public static let bidRequest = "urn:bankid:bid"
    public static let bisRequest = "urn:bankid:bis"
}

extension UAEPassOptions {
    /// The acr UAE Pass reports when the user approved in the app on the same device.
    public static let onDeviceACR = "urn:digitalid:authentication:flow:mobileondevice"
    /// The acr of the web sign-in.
    public static let webACR = "urn:safelayer:tws:policies:authentication:level:low"
}
