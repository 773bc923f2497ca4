import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// Norwegian BankID: the method chosen by acr_values, the passkey page, upfront permissions.
extension Provider {
    // MARK: Norwegian BankID

    /// The method the request selects: `acr_values=urn:bankid:bis` (BankID with biometrics) or
    /// `urn:bankid:bid` (BankID, the default); the legacy `login_hint` BIS/BID still counts when no acr is
    /// asked for (BankID "Identity Providers").
    static func bankIDNorwayMethod(_ pending: ProviderState.Pending) -> String {
        if pending.acrValues.contains(BankIDNorway.bisRequest) { return BankIDNorway.bisACR }
        if pending.acrValues.contains(BankIDNorway.bidRequest) { return BankIDNorway.bidACR }
        return pending.loginHint?.uppercased().hasPrefix("BIS") == true ? BankIDNorway.bisACR : BankIDNorway.bidACR
    }

    /// BankID with biometrics completes in the browser with a passkey (WebAuthn) except on iOS, where the
    /// key is the BankID app's: the app opens and, after biometrics, returns by `app_callback_uri` (BankID,
    /// "App2App support": an Android Custom Tab uses the key itself, iOS needs the BankID app; "Implementing
    /// in native applications": `app_callback_uri` brings the user back on iOS). BankID (`bid`) always
    /// opens the app.
    func bankIDNorwayHandOff(_ pending: ProviderState.Pending, requestID: String, onIOS: Bool) async -> Response {
        let method = Self.bankIDNorwayMethod(pending)
        if method == BankIDNorway.bisACR, !onIOS {
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
        return await startHandOff(
            pending, requestID: requestID, acr: method, appName: "BankID",
            link: { reference in
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
    /// scope holds `permissions/client`, a JSON permission as BankID's examples post it (`type`, `iat`,
    /// `exp` after `iat` and not past, the statement as base64url JSON in `permission`, with its `nonce` and
    /// `id`; here also an
    /// `app_callback_uri` allow-listed for the client); answers `id`, `permissionToken` and `bindingMessage`.
    /// How the token is carried to `/authorize` is not documented; the emulator reads `permission_token`.
    func registerPermission(json body: ByteBuffer?, authorization: String?) async -> Response {
        guard case .bankIDNorway = profile.handOff else {
            return Reply.oauthError(.notFound, "not_found", "this profile has no permissions endpoint")
        }
        guard let authorization, authorization.lowercased().hasPrefix("bearer "),
            let client = await state.clientToken(String(authorization.dropFirst(7))), client.scopes.contains("permissions/client")
        else {
            return Reply.bearerError()
        }
        guard let body, case .object(let permission)? = try? JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: body).utf8)) else {
            return Reply.oauthError(.badRequest, "invalid_request", "the permission must be a JSON object")
        }
        let now = await state.currentDate.timeIntervalSince1970
        guard case .string(let type)? = permission["type"], !type.isEmpty, case .number(let iat)? = permission["iat"],
            case .number(let exp)? = permission["exp"], exp > iat, abs(iat - now) <= 60, exp > now
        else {
            return Reply.oauthError(.badRequest, "invalid_request", "the permission needs a type, iat (now) and exp (later)")
        }
        guard case .string(let encoded)? = permission["permission"], let statement = Base64URL.decode(encoded),
            case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: statement)
        else {
            return Reply.oauthError(.badRequest, "invalid_request", "permission must be the statement, a JSON object, base64url-encoded")
        }
        // Every statement carries its own `nonce` and `id` (BankID's examples: `PermissionStatement` in
        // Models/Oidc/Permission.cs, both made fresh for each permission in PaymentController.cs).
        guard case .string(let nonce)? = members["nonce"], !nonce.isEmpty, case .string(let id)? = members["id"], !id.isEmpty else {
            return Reply.oauthError(.badRequest, "invalid_request", "the statement needs its nonce and id")
        }
        var callback: String?
        if case .string(let uri)? = permission["app_callback_uri"] {
            guard configuration.client(client.clientID)?.appReturnURLs.contains(uri) == true else {
                return Reply.oauthError(.badRequest, "invalid_request", "the app_callback_uri is not registered for this client")
            }
            callback = uri
        }
        let token = await state.issuePermission(clientID: client.clientID, callback: callback, lifetime: 300)
        return Reply.json(
            .object([
                "id": .string(UUID().uuidString.lowercased()), "permissionToken": .string(token),
                "bindingMessage": .string("Sign in to \(client.clientID)"),
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
            return .failure(
                ClientAuthenticationFailure(response: Reply.oauthError(.unauthorized, "invalid_client", "\(purpose) by a confidential client only")))
        case .success(let client):
            return .success((client, form))
        }
    }
}
