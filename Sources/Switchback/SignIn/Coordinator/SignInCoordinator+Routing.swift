public import Foundation

/// What the app receives — opened URLs, universal links, relayed responses, lifecycle changes — routed to
/// the sign-in it belongs to.
extension SignInCoordinator {
    /// A URL the app was opened with: a custom-scheme URL (`application(_:open:)`) or a universal link
    /// (`NSUserActivityTypeBrowsingWeb`'s `webpageURL`). Returns false when it belongs to no sign-in (the
    /// app handles it as usual); throws when it does but is refused (a replayed return).
    @discardableResult
    public func handle(url: URL) async throws -> Bool {
        try await route(url)
    }

    /// An authorization response the app received other than by URL (a form_post relayed by its backend).
    @discardableResult
    public func handle(callback: AuthorizationCallback) async throws -> Bool {
        guard let flowID = owner(ofCallback: callback.url, body: callback) else {
            if replayedCallback(callback) { throw SwitchbackError(.callbackReplayed, "this sign-in already ended; the response was not used again") }
            return false
        }
        await deliver(.callback(callback), to: flowID)
        return true
    }

    public func appDidBecomeActive() async {
        for flowID in entries.keys { await deliver(.becameActive, to: flowID) }
    }

    public func appDidEnterBackground() async {
        for flowID in entries.keys { await deliver(.enteredBackground, to: flowID) }
    }

    private func route(_ url: URL) async throws -> Bool {
        for (flowID, entry) in entries {
            switch entry.flow.recognise(url) {
            case .unrelated, .authenticatorReturn(.unrelated), .authenticatorReturn(.otherFlow):
                continue
            case .callback:
                // Several sign-ins share the redirect URI: the response's state says whose it is.
                guard owner(ofCallback: url, body: nil) == flowID else { continue }
            case .authenticatorReturn, .appReturn:
                break
            }
            let actions = await deliver(.openedURL(url), to: flowID)
            if let code = actions.lazy.compactMap(\.rejection).first {
                throw SwitchbackError(code, "the link belongs to a sign-in that already used it; it was ignored")
            }
            return true
        }
        for (flow, state) in finished {
            switch flow.recognise(url) {
            case .authenticatorReturn(.success), .authenticatorReturn(.failure):
                throw SwitchbackError(.callbackReplayed, "the link returns to a sign-in that already ended; it was ignored")
            case .callback where state == nil:
                // A backend completion's return link, after the companion's answer ended the sign-in.
                return true
            case .callback where Self.state(in: .redirect(url)).map({ received in state.map { ConstantTime.equals(received, $0) } ?? false }) == true:
                throw SwitchbackError(.callbackReplayed, "the response belongs to a sign-in that already ended; it was not used again")
            default:
                continue
            }
        }
        return false
    }

    /// The running flow whose `state` the response carries.
    private func owner(ofCallback url: URL, body: AuthorizationCallback?) -> String? {
        guard let state = Self.state(in: body ?? .redirect(url)) else {
            // A response without state can only be the single flow's, which then fails it on its checks.
            let candidates = entries.filter { $0.value.flow.recognise(url) == .callback }
            return candidates.count == 1 ? candidates.first?.key : nil
        }
        return entries.first { entry in
            entry.value.authorization.state.map { ConstantTime.equals($0, state) } == true && entry.value.flow.recognise(url) == .callback
        }?.key
    }

    private func replayedCallback(_ callback: AuthorizationCallback) -> Bool {
        guard let state = Self.state(in: callback) else { return false }
        return finished.contains { finished in
            finished.state.map { ConstantTime.equals($0, state) } == true && finished.flow.recognise(callback.url) == .callback
        }
    }

    private static func state(in callback: AuthorizationCallback) -> String? {
        for mode in [ResponseMode.query, .fragment, .formPost] {
            if let response = try? AuthorizationResponse(callback, mode: mode), let state = response.parameters["state"] { return state }
        }
        return nil
    }
}

extension SignInFlow.Action {
    fileprivate var rejection: SwitchbackError.Code? {
        if case .reject(_, let code) = self { return code }
        return nil
    }
}
