import Foundation

/// A body whose description hides its secrets; its mirror shows only that description, so that `dump`, a
/// debugger's summary or `Mirror` do not show the stored fields either.
@_spi(SwitchbackInternals) public protocol RedactedBody: CustomStringConvertible, CustomReflectable {}

extension RedactedBody {
    public var customMirror: Mirror { Mirror(self, children: ["redacted": description], displayStyle: .struct) }
}

extension CompanionAPI.ExchangeStart: RedactedBody {}
extension CompanionAPI.CompletionStart: RedactedBody {}
extension CompanionAPI.BridgeStart: RedactedBody {}
extension CompanionAPI.AuthorizationStarted: RedactedBody {}
extension CompanionAPI.Exchange: RedactedBody {}
extension CompanionAPI.CompletionStatus: RedactedBody {}
extension CompanionAPI.SignInAnswer: RedactedBody {}
extension CompanionAPI.BridgeRedeem: RedactedBody {}
extension CompanionAPI.PermissionGranted: RedactedBody {}
extension CompanionAPI.HandOffIssued: RedactedBody {}

// The bodies' descriptions show their shape, never a secret: bindings, flow IDs, codes, verifiers, nonces,
// sessions, tokens and one-time values are shown as present or absent (`Redaction.secret`), URLs without
// their query values. A body that reaches a log line or a test failure gives nothing away.

extension CompanionAPI.ExchangeStart: CustomStringConvertible {
    public var description: String {
        "ExchangeStart(redirectURI: \(redirectURI), binding: \(Redaction.secret(binding)), acrValues: \(acrValues ?? []), loginHint: \(Redaction.secret(loginHint)))"
    }
}

extension CompanionAPI.CompletionStart: CustomStringConvertible {
    public var description: String {
        "CompletionStart(flowID: \(Redaction.secret(flowID)), responseMode: \(responseMode?.rawValue ?? "nil"), acrValues: \(acrValues ?? []), loginHint: \(Redaction.secret(loginHint)))"
    }
}

extension CompanionAPI.BridgeStart: CustomStringConvertible {
    public var description: String {
        "BridgeStart(scheme: \(scheme), path: \(path), binding: \(Redaction.secret(binding)), responseMode: \(responseMode?.rawValue ?? "nil"))"
    }
}

extension CompanionAPI.AuthorizationStarted: CustomStringConvertible {
    public var description: String {
        let shown = [authorizationURL, returnURL].map { $0.flatMap(URL.init(string:)).map(Redaction.describe) ?? "nil" }
        return
            "AuthorizationStarted(authorizationURL: \(shown[0]), state: \(Redaction.secret(state)), returnURL: \(shown[1]), expiresIn: \(expiresIn.map(String.init) ?? "nil"))"
    }
}

extension CompanionAPI.Exchange: CustomStringConvertible {
    public var description: String {
        let secrets = [("binding", binding), ("code", code), ("codeVerifier", codeVerifier), ("nonce", nonce)]
        return
            "Exchange(callbackURL: \(callbackURL.flatMap(URL.init(string:)).map(Redaction.describe) ?? "nil"), redirectURI: \(redirectURI ?? "nil"), "
            + secrets.map { "\($0.0): \(Redaction.secret($0.1))" }.joined(separator: ", ") + ")"
    }
}

extension CompanionAPI.CompletionStatus: CustomStringConvertible {
    public var description: String {
        "CompletionStatus(flowID: \(Redaction.secret(flowID)), result: \(Redaction.secret(result)), wait: \(wait.map { "\($0)" } ?? "nil"))"
    }
}

extension CompanionAPI.SignInAnswer: CustomStringConvertible {
    public var description: String {
        let secrets = [("session", session), ("accessToken", accessToken), ("idToken", idToken), ("refreshToken", refreshToken)]
        return
            "SignInAnswer(status: \(status?.rawValue ?? "nil"), error: \(error.map { OAuthErrorResponse.plainCode($0) ?? "‹not a code›" } ?? "nil"), subject: \(subject ?? "nil"), acr: \(acr ?? "nil"), "
            + secrets.map { "\($0.0): \(Redaction.secret($0.1))" }.joined(separator: ", ")
            + ", tokenType: \(tokenType ?? "nil"), expiresIn: \(expiresIn.map(String.init) ?? "nil"))"
    }
}

extension CompanionAPI.BridgeRedeem: CustomStringConvertible {
    public var description: String { "BridgeRedeem(handoffotp: \(Redaction.secret(handoffotp)), binding: \(Redaction.secret(binding)))" }
}

extension CompanionAPI.PermissionGranted: CustomStringConvertible {
    public var description: String { "PermissionGranted(permissionToken: \(Redaction.secret(permissionToken)))" }
}

extension CompanionAPI.HandOffIssued: CustomStringConvertible {
    public var description: String {
        "HandOffIssued(handoffotp: \(Redaction.secret(handoffotp)), expiresIn: \(expiresIn), redeemURL: \(redeemURL.flatMap(URL.init(string:)).map(Redaction.describe) ?? "nil"))"
    }
}
