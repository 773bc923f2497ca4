/// The user's authenticator app on a phone other than the one signing in: it scans the QR code the
/// provider's page shows (Swedish BankID, Singpass, MitID), or answers the request the provider sends
/// once the browser has the user's identifier, picking the number the page shows when the provider
/// matches numbers (UAE Pass).
///
/// ```swift
/// await device.setOtherPhone(OtherPhone(app: AuthenticatorApp(issuer: issuer), username: "alice"))
/// ```
public struct OtherPhone: Sendable {
    public let app: AuthenticatorApp
    /// Who the user is at the provider: the identifier typed in the browser and the account approving.
    public let username: String
    public let decision: AuthenticatorApp.Decision

    public init(app: AuthenticatorApp, username: String, decision: AuthenticatorApp.Decision = .approve()) {
        self.app = app
        self.username = username
        self.decision = decision
    }

    /// Scans `content` and answers the request it opens.
    public func scan(_ content: String) async throws {
        let reference = try await app.scan(content, as: username)
        try await app.decide(reference: reference, decision)
    }

    /// Scans `content`, the code a page shows, and answers the request it opens. A camera keeps reading
    /// the screen: when the provider refuses the code (Swedish BankID's changes every second, so a slow
    /// machine can take it to the provider stale), `current` reads the page's code again and that is
    /// scanned, up to `attempts` scans in all. A refusal of the answer itself is not retried.
    public func scan(_ content: String, rereading current: @Sendable () async throws -> String, attempts: Int = 5) async throws {
        let reference = try await opened(content, rereading: current, attempts: attempts)
        try await app.decide(reference: reference, decision)
    }

    private func opened(_ content: String, rereading current: @Sendable () async throws -> String, attempts: Int) async throws -> String {
        var content = content
        var attempt = 1
        while true {
            do {
                return try await app.scan(content, as: username)
            } catch AuthenticatorAppError.providerRefused(status: 400) where attempt < attempts {
                attempt += 1
                content = try await current()
            }
        }
    }

    /// Answers the oldest request waiting for the user, picking `match` among the offered numbers (the
    /// user reads it from the browser); fails when nothing waits or the number is not offered.
    public func answerRequest(matching match: String?) async throws {
        guard let request = try await app.inbox(of: username).first else { throw AuthenticatorAppError.notALaunchLink }
        if let match, !request.choices.isEmpty, !request.choices.contains(match) { throw AuthenticatorAppError.providerRefused(status: 400) }
        if case .approve = decision {
            try await app.decide(reference: request.reference, decision, match: request.choices.isEmpty ? nil : match)
        } else {
            try await app.decide(reference: request.reference, decision)
        }
    }
}
