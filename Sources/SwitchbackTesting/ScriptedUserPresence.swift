import Foundation
public import Switchback

/// Secrets behind a user who answers each prompt as scripted: approves, declines, or has a device that
/// cannot ask. It counts the prompts, which is what a test of "when is the user asked" checks.
public actor ScriptedUserPresence: UserAuthenticatedSecrets {
    public enum Answer: Sendable {
        case approve
        case decline
        case unavailable
    }

    private var secrets: [String: String] = [:]
    /// How the user answers the next prompts.
    public var answer: Answer
    /// The reason shown at each prompt, in order.
    public private(set) var prompts: [String] = []

    public init(answer: Answer = .approve) {
        self.answer = answer
    }

    public func setAnswer(_ answer: Answer) { self.answer = answer }

    /// What is stored under `key`, read without a prompt (the test's view, not the app's).
    public func stored(_ key: String) -> String? { secrets[key] }

    public func save(_ secret: String, key: String) { secrets[key] = secret }

    public func read(key: String, reason: String) throws -> String? {
        guard let secret = secrets[key] else { return nil }
        prompts.append(reason)
        switch answer {
        case .approve: return secret
        case .decline: throw SwitchbackError(.authenticationDeclined, "the user declined")
        case .unavailable: throw SwitchbackError(.authenticationUnavailable, "no passcode is set")
        }
    }

    public func remove(key: String) { secrets[key] = nil }
}
