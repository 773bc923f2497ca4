import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// Checks authorization request parameters, from the front channel or pushed (RFC 9126), the same way;
/// also reads every form body the emulator accepts.
enum AuthorizationRequest {
    /// Why a request was refused, and where the refusal may be sent.
    enum Refusal: Error {
        /// No trustworthy redirect URI: the user agent gets an error page (RFC 6749 §4.1.2.1).
        case page(title: String, message: String)
        /// The client and redirect URI are known: the error goes back to the client.
        case redirect(AuthorizationRedirect, error: String, description: String)

        var frontChannelResponse: Response {
            switch self {
            case .page(let title, let message): Reply.page(.badRequest, title: title, message: message)
            case .redirect(let redirect, let error, let description): redirect.error(error, description)
            }
        }

        /// At the PAR and token endpoints the error is a JSON body (RFC 9126 §2.3, RFC 6749 §5.2).
        var jsonResponse: Response {
            switch self {
            case .page(_, let message): Reply.oauthError(.badRequest, "invalid_request", message)
            case .redirect(_, let error, let description): Reply.oauthError(.badRequest, error, description)
            }
        }
    }

    /// Parameters from a query or form body; a repeated parameter is refused (RFC 6749 §3.1).
    static func parameters(_ encoded: String) -> Result<[String: String], Refusal> {
        guard let fields = FormEncoding.decode(encoded, plusIsSpace: true) else {
            return .failure(.page(title: "Invalid request", message: "The request is not valid URL encoding."))
        }
        var parameters: [String: String] = [:]
        for (name, value) in fields where parameters.updateValue(value, forKey: name) != nil {
            return .failure(.page(title: "Invalid request", message: "The parameter \(Reply.escape(name)) is repeated."))
        }
        return .success(parameters)
    }

    /// Exact string match, except that a registered `http` loopback URI matches any port (RFC 8252 §7.3):
    /// a native app or a local backend cannot know its port in advance.
    static func matches(_ redirectURI: String, registered: String) -> Bool {
        if redirectURI == registered { return true }
        guard let presented = URLComponents(string: redirectURI), let expected = URLComponents(string: registered),
            presented.scheme == "http", expected.scheme == "http", expected.port == nil,
            let host = presented.host, host == expected.host, host == "127.0.0.1" || host == "[::1]" || host == "::1"
        else { return false }
        var withoutPort = presented
        withoutPort.port = nil
        return withoutPort.string == registered
    }

    static func validate(
        _ parameters: [String: String], configuration: EmulatorConfiguration, profile: Profile, issuer: String
    ) -> Result<ProviderState.Pending, Refusal> {
        // Without a known client and one of its exact redirect URIs there is nowhere safe to send an error.
        guard let clientID = parameters["client_id"], let client = configuration.client(clientID) else {
            return .failure(.page(title: "Unknown client", message: "The client_id is missing or not registered."))
        }
        guard let redirectURI = parameters["redirect_uri"],
            client.redirectURIs.contains(where: { registered in Self.matches(redirectURI, registered: registered) })
        else {
            return .failure(.page(title: "Invalid redirect URI", message: "The redirect_uri is missing or not registered for this client."))
        }
        if profile.strictRedirects, !redirectURI.hasPrefix("https://") || redirectURI.contains("?") || redirectURI.contains("#") {
            return .failure(.page(title: "Invalid redirect URI", message: "This provider accepts only https redirect URIs without a query."))
        }
        let responseType = parameters["response_type"] ?? ""
        let implicit = responseType == "id_token token" || responseType == "token id_token"
        // Tokens never go in a query: an implicit response defaults to the fragment.
        let defaultMode = implicit ? "fragment" : profile.acceptedResponseModes.first ?? "query"
        let responseMode = parameters["response_mode"] ?? defaultMode
        let redirect = AuthorizationRedirect(
            redirectURI: redirectURI, mode: profile.acceptedResponseModes.contains(responseMode) ? responseMode : defaultMode,
            state: parameters["state"],
            issuer: issuer, tapToReturn: profile.effectiveReturnPage.tapToReturn(parameters)
        )
        func refuse(_ error: String, _ description: String) -> Result<ProviderState.Pending, Refusal> {
            .failure(.redirect(redirect, error: error, description: description))
        }
        guard responseType == "code" || (implicit && profile.responseTypes.contains("id_token token")) else {
            return refuse("unsupported_response_type", "response_type must be one of: \(profile.responseTypes.joined(separator: ", "))")
        }
        guard profile.acceptedResponseModes.contains(responseMode) else {
            return refuse(
                "invalid_request", "response_mode \(responseMode) is not supported; use \(profile.acceptedResponseModes.joined(separator: ", "))")
        }
        let scope = (parameters["scope"] ?? "").split(separator: " ").map(String.init)
        // UAE Pass's documented requests carry its profile scope and no openid (the identity comes from
        // userinfo); what it does with a scope it does not document is not documented, so nothing more is refused.
        if profile.uaePassOptions == nil {
            guard scope.contains("openid") else { return refuse("invalid_scope", "the openid scope is required") }
            // The contract's scopes (Singpass Login apps: openid, user.identity, name, email, mobileno).
            if let allowed = profile.contract?.list(.allowedScopes), let other = scope.first(where: { !allowed.contains($0) }) {
                return refuse("invalid_scope", "the scope \(other) is not one this client may ask for (\(allowed.joined(separator: " ")))")
            }
        } else if scope.isEmpty {
            return refuse("invalid_scope", "a scope is required (UAE Pass documents \(UAEPassOptions.profileScope))")
        }
        var challenge: String?
        if implicit {
            guard responseMode != "query" else {
                return refuse("invalid_request", "tokens are never returned in the query; use fragment or form_post")
            }
            guard let nonce = parameters["nonce"], !nonce.isEmpty else {
                return refuse("invalid_request", "nonce is required with response_type=id_token token")
            }
        } else {
            guard let presented = parameters["code_challenge"], parameters["code_challenge_method"] == "S256",
                presented.utf8.count == 43, Base64URL.decode(presented) != nil
            else {
                return refuse("invalid_request", "PKCE with code_challenge_method=S256 is required")
            }
            challenge = presented
        }
        if profile.singpassRequests, let refusal = singpassRefusal(parameters, client: client, contract: profile.contract) {
            return refuse("invalid_request", refusal)
        }
        var appReturnURL = profile.appReturnParameter.flatMap { parameters[$0] }
        if case .mitID(let broker) = profile.handOff {
            switch MitIDAppSwitch.returnURL(parameters, broker: broker) {
            case .success(let url): appReturnURL = url
            case .failure(let refusal): return refuse("invalid_request", refusal.description)
            }
        }
        var faults: Set<Fault> = []
        if let requested = parameters["emulator_fault"] {
            switch Fault.list(requested) {
            case .success(let listed): faults = listed
            case .failure(let unknown): return refuse("invalid_request", unknown.description)
            }
        }
        return .success(
            ProviderState.Pending(
                clientID: clientID, redirectURI: redirectURI, state: parameters["state"], nonce: parameters["nonce"],
                responseType: implicit ? "id_token token" : "code", codeChallenge: challenge, scope: scope, responseMode: responseMode,
                faults: faults,
                acrValues: (parameters["acr_values"] ?? "").split(separator: " ").map(String.init),
                loginHint: parameters["login_hint"], appReturnURL: appReturnURL,
                permissionToken: parameters["permission_token"], dpopJKT: parameters["dpop_jkt"],
                tapToReturn: profile.effectiveReturnPage.tapToReturn(parameters)
            ))
    }

    /// Why Singpass would refuse the request (``Profile/singpassRequests``), or nil.
    static func singpassRefusal(_ parameters: [String: String], client: EmulatorConfiguration.Client, contract: ProviderContract?) -> String? {
        for name in ["state", "nonce"] {
            guard let value = parameters[name], (30...255).contains(value.utf8.count),
                value.unicodeScalars.allSatisfy(singpassTokenCharacters.contains)
            else {
                return "\(name) must be 30 to 255 characters of A-Z a-z 0-9 / + _ - = ."
            }
        }
        guard parameters[SingpassAuthenticationContext.typeParameter] != nil else {
            return "authentication_context_type is mandatory for Login apps"
        }
        let context = parameters.filter { $0.key.hasPrefix("authentication_context_") }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        do {
            try SingpassAuthenticationContext.check(parameters: context)
        } catch let error as SwitchbackError {
            return error.message
        } catch {
            return "the authentication context is invalid"
        }
        guard !client.keys(use: "enc").isEmpty else {
            return "the client's JWKS has no use:enc key, and every ID token is encrypted"
        }
        return contract.flatMap { clientKeysRefusal(client, contract: $0) }
    }

    /// Why the contract's key rules refuse the client's JWKS (Singpass, "JSON Web Key Sets"), or nil: every
    /// key EC on a listed curve, public only, with a unique `kid` and a `use`; a `sig` and an `enc` key; each
    /// encryption key's `alg` one of the listed ones.
    static func clientKeysRefusal(_ client: EmulatorConfiguration.Client, contract: ProviderContract) -> String? {
        guard case .object(let set)? = client.jwks, case .array(let entries)? = set["keys"] else { return nil }
        let keys = entries.compactMap { entry -> [String: JSONValue]? in if case .object(let key) = entry { key } else { nil } }
        func text(_ key: [String: JSONValue], _ name: String) -> String? { if case .string(let value)? = key[name] { value } else { nil } }
        if let curves = contract.list(.clientKeyCurves) {
            for key in keys {
                guard text(key, "kty") == "EC", let curve = text(key, "crv"), curves.contains(curve) else {
                    return "every key of the client's JWKS must be kty EC on \(curves.joined(separator: ", "))"
                }
                guard key["d"] == nil else { return "the client's JWKS holds a private key" }
                guard let use = text(key, "use"), use == "sig" || use == "enc" else { return "every key of the client's JWKS needs use sig or enc" }
            }
            let kids = keys.compactMap { text($0, "kid") }
            guard kids.count == keys.count, Set(kids).count == kids.count else { return "every key of the client's JWKS needs a kid of its own" }
            guard keys.contains(where: { text($0, "use") == "sig" }) else { return "the client's JWKS has no use:sig key" }
        }
        if let algorithms = contract.list(.keyEncryptionAlgorithms) {
            for key in keys where text(key, "use") == "enc" {
                guard let alg = text(key, "alg"), algorithms.contains(alg) else {
                    return "an encryption key's alg must be one of \(algorithms.joined(separator: ", "))"
                }
            }
        }
        return nil
    }

    private static let singpassTokenCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+_-=.".unicodeScalars)
}
