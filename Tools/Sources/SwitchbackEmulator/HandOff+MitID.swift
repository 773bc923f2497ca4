import Crypto
import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback
@_spi(SwitchbackInternals) import SwitchbackTesting

/// MitID through a broker: the tap on "Open MitID app" and its app-switch return.
extension Provider {
    // MARK: MitID via a broker

    func mitIDHandOff(_ pending: ProviderState.Pending, requestID: String) async -> Response {
        // The broker's own syntax was read when the request was checked (MitIDAppSwitch).
        let resumeURL = pending.appReturnURL
        if let resumeURL, !isAppReturnURL(resumeURL, of: pending) {
            return await refuse(requestID, pending, "the app switch URL is not allow-listed for this client")
        }
        return await startHandOff(
            pending, requestID: requestID, acr: MitID.substantialACR, appName: "MitID app",
            link: { reference in
                var link = "https://\(MitID.appSwitchHost)/authenticate?txn=\(reference)"
                if let resumeURL { link += "&app_switch_url=" + FormEncoding.escape(resumeURL) }
                return link
            }, polls: true, otherPhone: { .identifier(reference: $0, label: "MitID app on another device? Your user ID") },
            codeDisplay: true)
    }

    /// `POST /mitid/code-display` with `txn`, `identifier`, `code` and `password`, from the browser that
    /// started the sign-in: MitID's code display (user ID, the six digits it shows, then the password; here
    /// in one form). The code is a TOTP (30-second steps, the one before accepted too) keyed with the
    /// user's code display secret; three wrong codes block the transaction.
    func codeDisplay(form body: ByteBuffer?, cookie: String?) async -> Response {
        guard let form = Self.transactionForm(body), let transaction = await transaction(form["txn"], sessionCookie: cookie),
            transaction.status == .pending, let pending = await state.pending(transaction.requestID)
        else {
            return Reply.page(
                .forbidden, title: "Session expired", message: "This sign-in cannot continue here. Return to the app where it started and try again.")
        }
        let user = configuration.users.first { $0.username == form["identifier"] }
        let now = await state.currentDate
        let codes =
            user.map { user in
                (0...1).map { TOTP.code(secret: MitID.codeDisplaySecret(for: user.username), at: now.addingTimeInterval(-30 * Double($0))) }
            } ?? []
        guard let user, let code = form["code"], codes.contains(where: { ConstantTime.equals($0, code) }), let password = form["password"],
            ConstantTime.equals(password, user.password)
        else {
            if await state.recordFailedCode(transaction.reference) >= MitID.codeDisplayAttempts {
                await state.endTransaction(transaction.reference)
                return await refuse(transaction.requestID, pending, error: "access_denied", "the code display is blocked after three wrong codes")
            }
            return Reply.page(
                .unauthorized, title: "Wrong code",
                message: "The user ID, code or password is wrong. Try again with the code your code display shows now.")
        }
        await state.endTransaction(transaction.reference)
        return await finish(requestID: transaction.requestID, pending: pending, subject: user.subject, acr: MitID.substantialACR)
    }
}

extension MitID {
    /// Wrong codes a code display allows before it is blocked (MitID, "TOTP").
    public static let codeDisplayAttempts = 3

    /// The emulator's code display secret for `username` (every user has one): HMAC-SHA-256 of the name
    /// under a fixed label, cut to RFC 4226's 20 bytes. The simulated device's code display derives the same.
    public static func codeDisplaySecret(for username: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Data(username.utf8), using: SymmetricKey(data: Data("switchback-emulator-code-display".utf8))))
            .prefix(20).map { $0 }
    }
}

/// Where the MitID app switches back to, in each broker's syntax; a broker ignores the other's.
enum MitIDAppSwitch {
    /// The app-switch URL the request asks for (nil: none), or why the broker refuses the request.
    static func returnURL(_ parameters: [String: String], broker: MitIDBroker) -> Result<String?, Refusal> {
        switch broker {
        case .idura:
            // Idura, "App switching": `appswitch:ios` (or `appswitch:android`) and `appswitch:resumeUrl:<url>`.
            let words = (parameters["login_hint"] ?? "").split(separator: " ")
            guard words.contains("appswitch:ios") || words.contains("appswitch:android") else { return .success(nil) }
            let prefix = "appswitch:resumeUrl:"
            guard let url = words.first(where: { $0.hasPrefix(prefix) }).map({ String($0.dropFirst(prefix.count)) }), !url.isEmpty else {
                return .failure(Refusal(description: "login_hint asks for an app switch without appswitch:resumeUrl:"))
            }
            return .success(url)
        case .signaturgruppen:
            // Signaturgruppen, "MitID app switch": with enable_app_switch true, app_switch_os (ios or android)
            // and app_switch_url are required.
            guard let text = parameters["idp_params"] else { return .success(nil) }
            guard case .object(let params)? = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else {
                return .failure(Refusal(description: "idp_params is not a JSON object"))
            }
            guard case .object(let mitID)? = params["mitid"], mitID["enable_app_switch"] == .bool(true) else { return .success(nil) }
            guard case .string(let os)? = mitID["app_switch_os"], ["ios", "android"].contains(os), case .string(let url)? = mitID["app_switch_url"],
                !url.isEmpty
            else {
                return .failure(Refusal(description: "idp_params.mitid.enable_app_switch needs app_switch_os (ios or android) and app_switch_url"))
            }
            return .success(url)
        }
    }

    struct Refusal: Error {
        let description: String
    }
}
