import Foundation

/// The user on the shown page, for tests and `switchback-webkit demo`: reads it, fills its forms and taps
/// with input events (a mouse press and release, the path a person's tap takes through the engine), so the
/// engine's gesture flag is a person's, not a script's. The scripts are ``PageScripts``.
extension WebKitGTKHost {
    static let signsIn = "signs in with username and password"

    /// The text of the page the WebView shows (evaluated apart from the page's own scripts).
    public func pageText() async -> String {
        await evaluate(PageScripts.text)
    }

    /// The user types a username and password into the page's sign-in form (one with a `username` field)
    /// and taps its submit button; false when the page has no such form.
    @discardableResult
    public func userSignsIn(username: String, password: String) async -> Bool {
        guard let action = UserAction(script: await evaluate(PageScripts.signIn(username: username, password: password))) else { return false }
        return await tapSubmit(action.target)
    }

    /// The user types `fields` (name, value) into the shown page's form with `id` and taps its submit button
    /// with input events; false when the page has no such form.
    @discardableResult
    public func userFills(formWithID id: String, _ fields: [(String, String)]) async -> Bool {
        guard let action = UserAction(script: await evaluate(PageScripts.fill(formWithID: id, fields))) else { return false }
        return await tapSubmit(action.target)
    }

    /// What the user does on the shown page, if it asks anything of them (``PageScripts/nextAction(username:password:tapsHandOff:)``):
    /// signs in on a username and password form (not a code display's, whose user has the app), and taps a
    /// confirmation form's button, the return link or the page's "Open …" link. Returns what they did, in
    /// the demo's words; nil when the page asks nothing or the tap found nothing.
    public func userActs(username: String, password: String, tapsHandOff: Bool) async -> String? {
        let script = PageScripts.nextAction(username: username, password: password, tapsHandOff: tapsHandOff)
        guard let action = UserAction(script: await evaluate(script)) else { return nil }
        switch action.kind {
        case .signIn, .submit:
            return await tapSubmit(action.target) ? Self.signsIn : nil
        case .tap:
            return await userClicks(elementWithID: action.target) ? "taps \"\(action.label)\"" : nil
        case .submitted:
            return "taps \"\(action.label)\""
        }
    }

    /// The user taps the element with `id` with input events, not a script: false when the page shows no
    /// such element.
    @discardableResult
    public func userClicks(elementWithID id: String) async -> Bool {
        let point = await evaluate(PageScripts.centre(ofElementWithID: id)).split(separator: ",").compactMap { Double($0) }
        guard point.count == 2, let presentation = lock.withLock({ current }) else { return false }
        await loop.run { presentation.click(x: point[0], y: point[1]) }
        return true
    }

    /// What a page waiting for the app on another phone asks that phone to do.
    public enum OtherDeviceChallenge: Sendable, Equatable {
        /// Scan this QR code content.
        case qrCode(String)
        /// Pick this number in the app's request.
        case matchCode(String)
    }

    /// The challenge the shown page puts to the user's other phone; nil while it shows none (yet).
    public func otherDeviceChallenge() async -> OtherDeviceChallenge? {
        struct Shown: Decodable {
            let kind: String
            let value: String
        }
        guard let shown = try? JSONDecoder().decode(Shown.self, from: Data(await evaluate(PageScripts.otherDeviceChallenge).utf8)) else { return nil }
        switch shown.kind {
        case "qr": return .qrCode(shown.value)
        case "match": return .matchCode(shown.value)
        default: return nil
        }
    }

    /// Taps the submit button a fill script named (`-`: the form was sent without one).
    private func tapSubmit(_ target: String) async -> Bool {
        if target == "-" { return true }
        guard !target.isEmpty else { return false }
        return await userClicks(elementWithID: target)
    }
}
