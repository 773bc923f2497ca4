import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// Swedish BankID through a broker: autostart, the animated QR code, collect and its hint codes.
extension Provider {
    // MARK: Swedish BankID via a broker

    func bankIDSwedenHandOff(_ pending: ProviderState.Pending, requestID: String, options: BankIDSwedenOptions) async -> Response {
        // Idura's form: `login_hint=appswitch:resumeUrl:<url>` (without `appswitch:ios` for Swedish BankID).
        let prefix = "appswitch:resumeUrl:"
        let resumeURL = pending.loginHint?.split(separator: " ").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
        if let resumeURL, !isAppReturnURL(resumeURL, of: pending) {
            return await refuse(requestID, pending, "the app switch resumeUrl is not allow-listed for this client")
        }
        return await startHandOff(
            pending, requestID: requestID, acr: BankIDSweden.loa3ACR, appName: "BankID",
            link: { reference in
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
    func qrCode(reference: String?, cookie: String?) async -> Response {
        guard let transaction = await transaction(reference, sessionCookie: cookie) else {
            return Reply.oauthError(.badRequest, "invalidParameters", "no such order")
        }
        let seconds = max(0, Int(await state.currentDate.timeIntervalSince(transaction.startedAt)))
        return Reply.json(
            .object([
                "qr": .string(
                    BankIDSwedenOptions.qrCode(startToken: transaction.qrStartToken, startSecret: transaction.qrStartSecret, seconds: seconds))
            ]))
    }
}
