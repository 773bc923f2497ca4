import Foundation
import Hummingbird
import Switchback

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
        for (path, action) in [("approve", AuthenticatorAction.approve), ("decline", .decline), ("ignore", .ignore)] {
            router.post("/authenticator/\(path)") { request, _ in
                var request = request
                return await authenticator(action, form: try? await request.collectBody(upTo: Self.maximumBody))
            }
        }
    }

    /// Starts a transaction for `pending` and answers with the page (or 302) that opens the app.
    func startHandOff(
        _ pending: ProviderState.Pending, requestID: String, acr: String?, appName: String, link: (_ reference: String) -> String,
        polls: Bool, statusPath: String = "/authenticator/transaction", qr: Bool = false
    ) async -> Response {
        let transaction = await state.startTransaction(requestID: requestID, clientID: pending.clientID, acr: acr)
        let reference = transaction.reference
        var response = Reply.handOff(
            link(reference), delivery: profile.handOffDelivery, appName: appName,
            poll: polls ? (status: "\(statusPath)?txn=\(reference)", next: "/continue?txn=\(reference)") : nil,
            qr: qr ? "/bankid/qr?txn=\(reference)" : nil
        )
        let lifetime = profile.uaePassOptions?.loginCookieLifetime.map { "; Max-Age=\($0)" } ?? ""
        response.headers[.setCookie] = "\(Self.sessionCookie)=\(transaction.session); Path=/; HttpOnly; SameSite=Lax\(lifetime)"
        return response
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
        }, polls: true)
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
        }, polls: true, statusPath: "/bankid/collect", qr: true)
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
    /// opened it) or `userSign` (it has), `complete`, or `failed` with `userCancel` (declined in the app)
    /// or `expiredTransaction` (past its lifetime).
    enum BankIDOrderStatus: Equatable {
        case pending(String)
        case complete
        case failed(String)
    }

    func bankIDStatus(_ transaction: ProviderState.Transaction) async -> BankIDOrderStatus {
        let lifetime = if case .bankIDSweden(let options) = profile.handOff { options.orderLifetime } else { TimeInterval.infinity }
        switch transaction.status {
        case .approved: return .complete
        case .declined: return .failed("userCancel")
        case .pending, .ignored:
            if await state.currentDate.timeIntervalSince(transaction.startedAt) > lifetime { return .failed("expiredTransaction") }
            return .pending(transaction.opened ? "userSign" : "outstandingTransaction")
        }
    }

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
        }, polls: true)
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
            let why = hint == "userCancel" ? "the user cancelled in the BankID app" : "the BankID order expired before the user answered"
            return await refuse(transaction.requestID, pending, error: "access_denied", "\(hint): \(why)")
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
        case approve, decline, ignore
    }

    /// `GET /authenticator/transaction?txn=`: what the app shows before the user decides.
    func describeTransaction(reference: String?) async -> Response {
        guard let reference, let transaction = await state.transaction(reference) else {
            return Reply.oauthError(.notFound, "unknown_transaction", "no open transaction with this reference")
        }
        return Reply.json(.object([
            "txn": .string(transaction.reference), "client_id": .string(transaction.clientID), "status": .string(transaction.status.name),
        ]))
    }

    /// `POST /authenticator/open` with `txn`: the app shows the request to the user.
    func openTransaction(form body: ByteBuffer?) async -> Response {
        guard let form = Self.transactionForm(body), let reference = form["txn"] else { return Self.missingTransaction }
        return await describeTransaction(reference: await state.open(reference)?.reference)
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
