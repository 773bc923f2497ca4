import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// The endpoints the authenticator app calls, on this phone or on another one: open, approve,
/// decline, ignore, fail, scan a QR code, read its waiting requests.
extension Provider {
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
        return Reply.json(
            .object([
                "txn": .string(transaction.reference), "client_id": .string(transaction.clientID), "status": .string(transaction.status.name),
            ]))
    }

    /// `POST /authenticator/open` with `txn` (and `username`; `usable=false` when the app has no usable
    /// identity yet): the app shows the request to the user. In Swedish BankID a second order opened by
    /// the same user fails the first with `cancelled`.
    func openTransaction(form body: ByteBuffer?) async -> Response {
        guard let form = Self.transactionForm(body), let reference = form["txn"] else { return Self.missingTransaction }
        return await open(reference, form: form)
    }

    /// Opens the request in the app of `form`'s `username` (the first configured user when absent) and
    /// answers what the app shows, or why it may not open it: it is answered, or another user's app holds it.
    func open(_ reference: String, form: [String: String]) async -> Response {
        let replacing: String? = if case .bankIDSweden = profile.handOff { "cancelled" } else { nil }
        let user = form["username"] ?? configuration.users.first?.username
        switch await state.open(reference, user: user, usableID: form["usable"] != "false", replacing: replacing) {
        case .opened(let transaction): return await describeTransaction(reference: transaction.reference)
        case .unknown: return await describeTransaction(reference: nil)
        case .answered: return Reply.oauthError(.conflict, "invalid_transaction", "the transaction is already decided")
        case .heldByAnother: return Reply.oauthError(.forbidden, "wrong_user", "this request is in another user's app")
        }
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
        return await open(transaction.reference, form: form)
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
    func otherPhoneQR(reference: String?, cookie: String?) async -> Response {
        guard let transaction = await transaction(reference, sessionCookie: cookie), transaction.status == .pending else {
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
            return Reply.page(
                .forbidden, title: "Session expired", message: "This sign-in cannot continue here. Return to the app where it started and try again.")
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

    /// `POST /authenticator/{approve,decline,ignore}` with `txn` (and, to approve, optionally `username`).
    ///
    /// Only the app holding the request answers it: the one that opened it (from a link or a QR code) or the
    /// one the provider sent it to (the identifier typed in the browser), as in the real apps, where the
    /// request shows on that user's phone only; an approval signs that user in. Answering a request no app
    /// holds, or (naming a `username`) one another user's app holds, is refused and leaves it waiting.
    func authenticator(_ action: AuthenticatorAction, form body: ByteBuffer?) async -> Response {
        guard let form = Self.transactionForm(body), let reference = form["txn"] else { return Self.missingTransaction }
        guard let held = await state.transaction(reference) else {
            return Reply.oauthError(.conflict, "invalid_transaction", "the transaction is unknown or already decided")
        }
        guard held.user != nil else { return Reply.oauthError(.conflict, "not_opened", "no authenticator app has opened this request") }
        if let named = form["username"], named != held.user {
            return Reply.oauthError(.forbidden, "wrong_user", "this request is in another user's app")
        }
        let status: ProviderState.Transaction.Status
        switch action {
        case .approve:
            guard let user = configuration.users.first(where: { $0.username == held.user }) else {
                return Reply.oauthError(.badRequest, "invalid_request", "the app that holds this request is not a configured user's")
            }
            status = .approved(subject: user.subject)
        case .decline: status = .declined
        case .ignore: status = .ignored
        case .fail:
            guard let hint = form["hintCode"], Self.reportableFailures.contains(hint) else {
                return Reply.oauthError(
                    .badRequest, "invalid_request", "hintCode must be one of \(Self.reportableFailures.sorted().joined(separator: ", "))")
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
