import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// The authenticator-app side of a sign-in: the routes, the hand-off page and the provider pages the app
/// returns to. Each provider's hand-off is in `HandOff+<Provider>.swift`, the authenticator app's
/// endpoints in `Authenticator.swift`.
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
            guard case .bankIDNorway = profile.handOff else {
                return Reply.oauthError(.notFound, "not_found", "this profile has no biometrics server")
            }
            let base = issuer.issuer + "/biometrics"
            return Reply.json(.object(["issuer": .string(base), "permissions_endpoint": .string(base + "/permissions")]))
        }
        router.post("/biometrics/permissions") { request, _ in
            var request = request
            return await registerPermission(
                json: try? await request.collectBody(upTo: Self.maximumBody), authorization: request.headers[.authorization])
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
            await qrCode(reference: request.uri.queryParameters["txn"].map(String.init), cookie: request.headers[.cookie])
        }
        router.post("/authenticator/scan") { request, _ in
            var request = request
            return await scan(form: try? await request.collectBody(upTo: Self.maximumBody))
        }
        router.get("/authenticator/inbox") { request, _ in
            await inbox(username: request.uri.queryParameters["username"].map(String.init))
        }
        router.get("/qr") { request, _ in
            await otherPhoneQR(reference: request.uri.queryParameters["txn"].map(String.init), cookie: request.headers[.cookie])
        }
        router.post("/mitid/code-display") { request, _ in
            var request = request
            return await codeDisplay(form: try? await request.collectBody(upTo: Self.maximumBody), cookie: request.headers[.cookie])
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
        polls: Bool, statusPath: String = "/authenticator/transaction", otherPhone: (_ reference: String) -> Reply.OtherPhone? = { _ in nil },
        codeDisplay: Bool = false
    ) async -> Response {
        let transaction = await state.startTransaction(requestID: requestID, clientID: pending.clientID, acr: acr)
        let reference = transaction.reference
        var response = Reply.handOff(
            link(reference), delivery: profile.handOffDelivery, appName: appName,
            poll: polls ? (status: "\(statusPath)?txn=\(reference)", next: "/continue?txn=\(reference)") : nil,
            otherPhone: otherPhone(reference), codeDisplay: codeDisplay ? reference : nil
        )
        setSessionCookie(transaction, on: &response)
        return response
    }

    /// The transaction `reference` when `cookie` holds the session of the browser that started it: what a
    /// page may show only to that browser (its QR code, which signs in whoever scans it).
    func transaction(_ reference: String?, sessionCookie cookie: String?) async -> ProviderState.Transaction? {
        guard let reference, let transaction = await state.transaction(reference), let session = Self.cookie(Self.sessionCookie, in: cookie),
            ConstantTime.equals(session, transaction.session)
        else { return nil }
        return transaction
    }

    /// Binds the browser to the transaction: only the browser holding this cookie can finish it.
    func setSessionCookie(_ transaction: ProviderState.Transaction, on response: inout Response) {
        let lifetime = profile.uaePassOptions?.loginCookieLifetime.map { "; Max-Age=\($0)" } ?? ""
        response.headers[.setCookie] = "\(Self.sessionCookie)=\(transaction.session); Path=/; HttpOnly; SameSite=Lax\(lifetime)"
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
            return await refuse(
                transaction.requestID, pending, error: "access_denied", "\(hint): \(Self.bankIDFailures[hint] ?? "the BankID order failed")")
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
}
