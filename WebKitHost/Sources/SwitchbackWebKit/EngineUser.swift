import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackTesting
import WebKitGTKHost

/// The user in front of the engine: photographs every page a user agent finishes loading and does on
/// each page what a person would once it has settled (signs in, confirms, taps the return link, or taps
/// the "Open …" link of a page that did not open the app by itself), as `SwitchbackTesting`'s simulated
/// user does on the simulated device.
struct EngineUser {
    let host: WebKitGTKHost
    /// Where the photographs go, named `<prefix>-<number>-<seat>.png`; none when nil.
    let folder: URL?
    let prefix: String
    /// What the user has besides this phone: their authenticator app on another phone, or a code display
    /// (the device's, once the scenario has set them).
    let means = LockedValue<Means>(Means())

    struct Means: Sendable {
        var otherPhone: OtherPhone?
        var codeDisplay: CodeDisplay?
    }

    struct Photo: Sendable {
        let file: String
        let caption: String
    }

    /// What the engine did, what the user did in it, and the photographs.
    struct Seen: Sendable {
        /// The user's acts, each with the number of engine observations made before it.
        var acts: [(at: Int, text: String)] = []
        var photos: [Photo] = []
        var observations: [WebKitGTKHost.Observation] = []

        /// The engine's side of the run, in order, after the device's transcript: what each user agent showed,
        /// caught or handed to the system, and what the user did there.
        var narration: String {
            var lines: [String] = []
            var seat = "engine"
            var acts = acts[...]
            for (index, observation) in observations.enumerated() {
                while let act = acts.first, act.at <= index {
                    lines.append("User → \(seat): \(act.text)")
                    acts = acts.dropFirst()
                }
                switch observation {
                case .presented(let url, let shown):
                    seat = shown.rawValue
                    lines.append("App → \(seat): shows \(Redaction.describe(url))")
                case .notShown(let url, let reason): lines.append("\(seat): cannot show \(Redaction.describe(url)): \(reason)")
                case .finished(let url?): lines.append("\(seat): loaded \(Redaction.describe(url))")
                case .routed(let url, let opened):
                    lines.append("\(seat) → iOS: hands over \(Redaction.describe(url))\(opened ? "" : " (no app opened it)")")
                case .caught(let url): lines.append("\(seat) → App: catches its callback \(Redaction.describe(url))")
                case .resolved(let url, let loopback):
                    lines.append("\(seat): \(Redaction.describe(url)) is served on loopback, \(Redaction.describe(loopback))")
                case .decided(let url?, _, _, _, _, false): lines.append("\(seat) → App: the app cancels \(Redaction.describe(url))")
                case .response(let url?, let status) where status >= 400: lines.append("\(seat): HTTP \(status) for \(Redaction.describe(url))")
                case .closed: lines.append("\(seat): closed")
                default: break
                }
            }
            lines += acts.map { "User → \(seat): \($0.text)" }
            return lines.isEmpty ? "" : "\n  On the engine:\n" + lines.map { "     \($0)" }.joined(separator: "\n")
        }
    }

    /// On a page asking for the user's ID for a code display or the app on another phone, the user types
    /// it (with the code display's code and the password) and taps the form's button.
    func typesIdentifier() async -> String? {
        let means = means.withLock { $0 }
        if let display = means.codeDisplay,
            await host.userFills(
                formWithID: "code-display", [("identifier", display.username), ("code", display.code()), ("password", display.password)])
        {
            return "types their user ID, the code the code display shows, and their password"
        }
        if let phone = means.otherPhone, await host.userFills(formWithID: "other-device", [("identifier", phone.username)]) {
            return "types their user ID, to answer on their other phone"
        }
        return nil
    }

    /// The other phone scans the QR code the page shows, or picks in its request the number the page shows;
    /// nil while the page shows neither (yet).
    func otherPhoneAnswers(_ phone: OtherPhone) async -> String? {
        switch await host.otherDeviceChallenge() {
        case .qrCode(let content)?:
            return await Self.answer { try await phone.scan(content) }.map { "scans the QR code with the app on the other phone; \($0)" }
        case .matchCode(let match)?:
            return await Self.answer { try await phone.answerRequest(matching: match) }.map {
                "opens the app's request on the other phone and picks the number the page shows; \($0)"
            }
        case nil:
            break
        }
        return nil
    }

    /// Runs the other phone's answer, trying again for up to 5 s while the request has not reached it.
    private static func answer(_ work: @Sendable () async throws -> Void) async -> String? {
        for _ in 0..<25 {
            do {
                try await work()
                return "the other phone answers"
            } catch {
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        return "the other phone could not answer"
    }

    /// How long a page must stay as it is before the user acts on it.
    static let settle: Duration = .milliseconds(600)

    /// Watches and acts until cancelled; returns what it saw and did.
    func act() async -> Seen {
        var seen = Seen()
        var photographed = 0
        var actedOn = 0
        var answeredOn = 0
        var lastCount = 0
        var quietSince = ContinuousClock.now
        while !Task.isCancelled {
            let observations = host.observations
            if observations.count != lastCount {
                lastCount = observations.count
                quietSince = .now
            }
            let finished = observations.indices.filter { if case .finished = observations[$0] { true } else { false } }
            // Every page a user agent finished loading, photographed as it finished.
            while photographed < finished.count {
                photographed += 1
                guard let folder, let seat = host.shownSeat, case .finished(let url) = observations[finished[photographed - 1]] else { continue }
                let file = "\(prefix)-\(String(format: "%02d", photographed))-\(seat.rawValue).png"
                if await host.photograph(to: folder.appendingPathComponent(file)) {
                    seen.photos.append(Photo(file: file, caption: "\(seat.rawValue): \(url.map(Redaction.describe) ?? "?")"))
                }
            }
            // The other phone answers what the page shows for it, once it shows it (a QR code drawn by the page's script).
            if answeredOn < finished.count, ContinuousClock.now - quietSince >= Self.settle, host.shownSeat != nil,
                let phone = means.withLock({ $0.otherPhone }), let act = await otherPhoneAnswers(phone)
            {
                answeredOn = finished.count
                seen.acts.append((observations.count, act))
            }
            // Once a page has settled, the user does its part, once per page load.
            if let last = finished.last, actedOn < finished.count, ContinuousClock.now - quietSince >= Self.settle, host.shownSeat != nil {
                actedOn = finished.count
                if let act = await typesIdentifier() {
                    seen.acts.append((observations.count, act))
                    continue
                }
                // A page whose own script or refresh already moved on leaves no "Open …" button to tap.
                let movedByItself = observations[(last + 1)...].contains {
                    switch $0 {
                    case .decided, .navigated, .routed: true
                    default: false
                    }
                }
                // With the app on another phone, an "Open …" link on this one opens nothing: the user does not tap it.
                let appHere = means.withLock { $0.otherPhone == nil }
                if let act = await host.userActs(username: "alice", password: "Secret-123", tapsHandOff: !movedByItself && appHere) {
                    seen.acts.append((observations.count, act))
                }
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        seen.observations = host.observations
        return seen
    }
}

/// The screenshots of a demo run and the narration beside them, as one HTML page.
struct Album {
    let folder: URL?
    private(set) var chapters: [(narration: String, photos: [EngineUser.Photo])] = []

    init(folder: URL?) { self.folder = folder }

    mutating func chapter(narration: String, photos: [EngineUser.Photo]) {
        chapters.append((narration, photos))
    }

    func index() -> String {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
                .replacingOccurrences(of: "\"", with: "&quot;")
        }
        var html = """
            <!doctype html><html><head><meta charset="utf-8"><title>switchback-webkit demo</title>
            <style>body{font-family:sans-serif;margin:2em}section{display:flex;gap:2em;margin-bottom:3em;align-items:flex-start}
            pre{flex:0 0 44em;white-space:pre-wrap;font-size:12px}figure{display:inline-block;margin:0 1em 1em 0;width:200px}
            img{width:200px;border:1px solid #999}figcaption{font-size:10px;word-break:break-all}</style></head><body>
            <h1>switchback-webkit demo</h1>

            """
        for chapter in chapters {
            html += "<section><pre>\(escaped(chapter.narration))</pre><div>"
            for photo in chapter.photos {
                html +=
                    "<figure><img src=\"\(escaped(photo.file))\" alt=\"\(escaped(photo.caption))\"><figcaption>\(escaped(photo.caption))</figcaption></figure>"
            }
            html += "</div></section>\n"
        }
        return html + "</body></html>\n"
    }
}
