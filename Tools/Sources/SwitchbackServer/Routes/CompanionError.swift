import Foundation
import Crypto
import Hummingbird

/// Why the companion refused a request. The message never holds a token, code, secret or verifier.
public struct CompanionError: Error, Sendable, CustomStringConvertible {
    /// The refusal, as the `error` member of the JSON answer (OAuth style) and its HTTP status.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        public let status: Int

        /// The body is malformed, too large or lacks a field.
        public static let invalidRequest = Code(name: "invalid_request", status: 400)
        /// The Bearer token is missing, expired, revoked or forged.
        public static let invalidToken = Code(name: "invalid_token", status: 401)
        /// A one-time code or session is unknown, expired or already used.
        public static let invalidGrant = Code(name: "invalid_grant", status: 400)
        /// `state` is unknown, already used or expired.
        public static let invalidState = Code(name: "invalid_state", status: 400)
        /// A redirect target (goto, deep-link scheme, redirect URI, app callback) is not allow-listed.
        public static let notAllowed = Code(name: "not_allowed", status: 400)
        /// The route is off in this configuration.
        public static let notConfigured = Code(name: "not_configured", status: 404)
        /// The request's body did not arrive whole: the connection closed first (`limits.bodyTimeout`).
        public static let requestTimeout = Code(name: "request_timeout", status: 408)
        /// The provider refused or failed; nothing was issued.
        public static let providerFailed = Code(name: "provider_error", status: 502)
        /// The provider reported an error for the sign-in (the user declined, say).
        public static let signInFailed = Code(name: "sign_in_failed", status: 400)
        /// The user declined in the wallet (OpenID4VP 1.0 §8.5): the app's ``signInFailed`` for a wallet.
        public static let accessDenied = Code(name: "access_denied", status: 400)
        /// The wallet's presentation did not verify; why is in the companion's log only.
        public static let invalidPresentation = Code(name: "invalid_presentation", status: 400)
        /// The body is larger than the route accepts.
        public static let tooLarge = Code(name: "invalid_request", status: 413)
        /// A browser form arrived from another origin than this server's own page.
        public static let crossOrigin = Code(name: "invalid_request", status: 403)
        /// Too many requests from this address, or in all; retry after the `Retry-After` seconds.
        public static let rateLimited = Code(name: "slow_down", status: 429)
        /// A start route that requires App Attest got no assertion.
        public static let attestationRequired = Code(name: "attestation_required", status: 401)
        /// An attestation or an assertion was refused: not a genuine copy of an allowed app, or a replay.
        public static let attestationInvalid = Code(name: "attestation_invalid", status: 401)
        /// The assertion's key is not (or no longer) attested here: the app attests a new key and asks again.
        public static let attestationKeyUnknown = Code(name: "attestation_key_unknown", status: 401)
        /// The store failed.
        public static let unavailable = Code(name: "temporarily_unavailable", status: 503)

        public var description: String { name }
    }

    public let code: Code
    public let message: String
    /// Seconds after which the client may try again (`Retry-After`), for a rate limit.
    public private(set) var retryAfter: Int?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The same refusal with a `Retry-After`.
    func retry(after seconds: Int) -> CompanionError {
        var error = self
        error.retryAfter = seconds
        return error
    }

    /// A rate limit's refusal: the client's network, or the route on this instance, is over its budget.
    static func rateLimited(retryAfter seconds: Int) -> CompanionError {
        CompanionError(.rateLimited, "too many requests; try again in \(seconds) seconds").retry(after: seconds)
    }

    public var description: String { "\(code.name): \(message)" }

    /// The JSON answer for an app.
    var json: Response {
        Replies.json(["error": code.name, "error_description": message], status: .init(code: code.status))
    }

    /// The page for a browser: what went wrong, and no redirect.
    var page: Response {
        Replies.page(status: .init(code: code.status), title: "This link cannot be used", message: message)
    }
}

/// Response builders shared by the routes.
enum Replies {
    static let noStore: HTTPFields = [.cacheControl: "no-store", .init("Pragma")!: "no-cache"]

    /// A JSON answer of the companion's API (``CompanionAPI``).
    static func json(_ answer: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let data: Data
        if let flat = answer as? any FlatJSON {
            data = flat.json()
        } else {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            data = (try? encoder.encode(answer)) ?? Data("{}".utf8)
        }
        var headers = noStore
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func json(_ object: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        var headers = noStore
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// An HTML page. Its CSP allows no script at all unless `script` is given: then exactly that inline
    /// script, by its SHA-256 hash.
    /// `formTargets` are the origins a form's answer may redirect to (browsers apply `form-action` to the
    /// redirects after a submission).
    static func html(_ body: String, status: HTTPResponse.Status = .ok, script: String? = nil, formTargets: [String] = []) -> Response {
        var headers = noStore
        headers[.contentType] = "text/html; charset=utf-8"
        let scripts = script.map { "script-src 'sha256-\(Data(SHA256.hash(data: Data($0.utf8))).base64EncodedString())'" } ?? "script-src 'none'"
        let forms = (["'self'"] + formTargets).joined(separator: " ")
        headers[.contentSecurityPolicy] = "default-src 'none'; \(scripts); form-action \(forms); frame-ancestors 'none'; base-uri 'none'"
        // `same-origin`, not `no-referrer`: under `no-referrer` a browser sends `Origin: null` with the page's own
        // form POST (Fetch standard, "append a request Origin header"), which the same-origin check must refuse;
        // measured on WebKit. Nothing leaves for another origin either way.
        headers[.init("Referrer-Policy")!] = "same-origin"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    static func page(status: HTTPResponse.Status, title: String, message: String, extra: String = "", formTargets: [String] = []) -> Response {
        html(
            "<!doctype html>\n<html><head><title>\(escape(title))</title></head><body><h1>\(escape(title))</h1><p>\(escape(message))</p>\(extra)</body></html>\n",
            status: status, formTargets: formTargets
        )
    }

    static func redirect(_ location: String, status: HTTPResponse.Status = .seeOther, cookie: String? = nil) -> Response {
        var headers = noStore
        headers[.location] = location
        headers[.init("Referrer-Policy")!] = "no-referrer"
        if let cookie { headers[.setCookie] = cookie }
        return Response(status: status, headers: headers)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }
}
