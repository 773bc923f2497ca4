import Foundation
import HTTPTypes
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// Builds the emulator's responses: JSON, OAuth errors, HTML pages and authorization redirects.
enum Reply {
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: value.description))
        )
    }

    /// RFC 9449 §8.1's header for the server's nonce.
    static let dpopNonce = HTTPField.Name("DPoP-Nonce")!

    static func oauthError(_ status: HTTPResponse.Status, _ error: String, _ description: String, basicChallenge: Bool = false) -> Response {
        var response = json(.object(["error": .string(error), "error_description": .string(description)]), status: status)
        if basicChallenge { response.headers[.wwwAuthenticate] = #"Basic realm="switchback-emulator""# }
        return response
    }

    static func bearerError(scheme: String = "Bearer") -> Response {
        var response = json(.object(["error": .string("invalid_token")]), status: .unauthorized)
        response.headers[.wwwAuthenticate] = scheme == "DPoP" ? #"DPoP error="invalid_token", algs="ES256""# : #"Bearer error="invalid_token""#
        return response
    }

    static func html(_ status: HTTPResponse.Status, _ body: String, head: String = "") -> Response {
        Response(
            status: status,
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(
                byteBuffer: ByteBuffer(
                    string:
                        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\(head)<title>Switchback emulator</title></head><body>\(body)</body></html>\n"
                ))
        )
    }

    /// Sends the user agent to an authenticator app's deep link: by page script (and a meta refresh, or
    /// a 302 instead of the page, as the profile says), with a link the user can tap either way.
    /// With `poll`, the page asks `status` until the app has answered, then moves to `next` (the page
    /// stays open while the app is in front, as a browser tab does). `otherPhone` is what the page offers
    /// a user whose app is on another phone.
    static func handOff(
        _ link: String, delivery: Profile.HandOffDelivery, appName: String, poll: (status: String, next: String)? = nil,
        otherPhone: OtherPhone? = nil, codeDisplay reference: String? = nil
    ) -> Response {
        if delivery == .redirect {
            return Response(status: .found, headers: [.location: link, .cacheControl: "no-store"])
        }
        let refresh = delivery == .metaRefresh ? "<meta http-equiv=\"refresh\" content=\"0;url=\(escape(link))\">" : ""
        let navigation = delivery == .tap ? "" : "window.location.href = \(scriptString(link));"
        // MitID's code display: user ID, the code it shows, and the password (one form here).
        let codeDisplay =
            reference.map {
                """
                <form id="code-display" method="post" action="/mitid/code-display"><input type="hidden" name="txn" value="\(escape($0))">\
                <label>User ID <input name="identifier" autocomplete="username"></label>\
                <label>Code from your code display <input name="code" inputmode="numeric" autocomplete="one-time-code"></label>\
                <label>Password <input name="password" type="password" autocomplete="current-password"></label>\
                <button type="submit">Sign in with the code display</button></form>
                """
            } ?? ""
        return waiting(
            title: "Continue in \(appName)", lead: "<p><a id=\"handoff\" href=\"\(escape(link))\">Open \(escape(appName))</a></p>\(codeDisplay)",
            appName: appName, script: navigation, poll: poll, otherPhone: otherPhone, head: refresh
        )
    }

    /// What a provider's page offers a user whose authenticator app is on another phone.
    enum OtherPhone {
        /// A QR code the other phone scans, its content fetched from `source` every second (Swedish
        /// BankID's animated code changes each second; the others keep theirs).
        case qrCode(source: String)
        /// A form for the user's identifier (`POST /otherdevice`), after which the request waits in the
        /// user's app (UAE Pass, MitID).
        case identifier(reference: String, label: String)
        /// The number the user picks in the app (UAE Pass's number matching).
        case matchCode(String)
    }

    /// A page that waits for an app: `lead` first, then the polling link and what is offered for another phone.
    static func waiting(
        title: String, lead: String, appName: String, script: String = "", poll: (status: String, next: String)?, otherPhone: OtherPhone?,
        head: String = ""
    ) -> Response {
        var script = script
        var next = ""
        if let poll {
            next = "<p><a id=\"continue\" href=\"\(escape(poll.next))\">I have answered in \(escape(appName))</a></p>"
            script += """

                setInterval(async () => {
                  const answer = await (await fetch(\(scriptString(poll.status)))).json();
                  if (answer.status !== "pending" && answer.status !== "ignored") window.location.href = \(scriptString(poll.next));
                }, 1500);
                """
        }
        var other = ""
        switch otherPhone {
        case .qrCode(let source):
            other = "<p>On another phone, scan: <code id=\"qr\"></code></p>"
            script += """

                const showQR = async () => { document.getElementById("qr").textContent = (await (await fetch(\(scriptString(source)))).json()).qr; };
                showQR(); setInterval(showQR, 1000);
                """
        case .identifier(let reference, let label):
            other = """
                <form id="other-device" method="post" action="/otherdevice"><input type="hidden" name="txn" value="\(escape(reference))">\
                <label>\(escape(label)) <input name="identifier" autocomplete="username"></label><button type="submit">Continue</button></form>
                """
        case .matchCode(let code):
            other = "<p>Open \(escape(appName)) on your phone and select <output id=\"match\">\(escape(code))</output>.</p>"
        case nil:
            break
        }
        return html(
            .ok,
            """
            <h1>\(escape(title))</h1>
            \(lead)\(next)\(other)
            <script>\(script)</script>
            """, head: head)
    }

    /// A page the user confirms with a button (`<form id="confirm">`, button `id="continue"`), posting
    /// `fields` to `action`: the shape the simulated device taps.
    static func confirmPage(title: String, message: String, action: String, fields: [(String, String)], button: String) -> Response {
        let hidden = fields.map { "<input type=\"hidden\" name=\"\(escape($0.0))\" value=\"\(escape($0.1))\">" }.joined()
        return html(
            .ok,
            """
            <h1>\(escape(title))</h1><p>\(escape(message))</p>
            <form method="post" action="\(escape(action))" id="confirm">\(hidden)<button type="submit" id="continue">\(escape(button))</button></form>
            """)
    }

    /// A waiting page; with `refreshAfter`, it reloads itself (a provider polling for the app's answer).
    static func spinner(title: String, message: String, refreshAfter seconds: Int? = nil) -> Response {
        let refresh = seconds.map { "<meta http-equiv=\"refresh\" content=\"\($0)\">" } ?? ""
        return html(.ok, "<h1>\(escape(title))</h1><p role=\"status\">\(escape(message))</p>", head: refresh)
    }

    /// A JavaScript string literal that cannot end the script element.
    static func scriptString(_ text: String) -> String {
        JSONValue.string(text).description.replacingOccurrences(of: "</", with: "<\\/")
    }

    static func page(_ status: HTTPResponse.Status, title: String, message: String) -> Response {
        html(status, "<h1>\(escape(title))</h1><p>\(message)</p>")
    }

    static func loginPage(requestID: String, clientID: String, failed: Bool, otherPhone: String? = nil) -> Response {
        let notice = failed ? "<p role=\"alert\">Wrong username or password.</p>" : ""
        // UAE Pass's web sign-in: the user's identifier, then a push to the app with a number to match.
        let other =
            otherPhone.map {
                """
                <form id="other-device" method="post" action="/otherdevice"><input type="hidden" name="txn" value="\(escape($0))">\
                <label>Emirates ID, email or mobile number <input name="identifier" autocomplete="username"></label>\
                <button type="submit">Sign in with the app</button></form>
                """
            } ?? ""
        return html(
            failed ? .unauthorized : .ok,
            """
            <h1>Sign in to \(escape(clientID))</h1>\(notice)
            <form method="post" action="/login">
            <input type="hidden" name="request" value="\(escape(requestID))">
            <label>Username <input name="username" autocomplete="username"></label>
            <label>Password <input name="password" type="password" autocomplete="current-password"></label>
            <button type="submit">Sign in</button>
            </form>\(other)
            """)
    }

    /// HTML escaping for text and attribute values.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

/// Sends an authorization response back to the client in its response mode.
struct AuthorizationRedirect {
    let redirectURI: String
    let mode: String
    let state: String?
    /// The RFC 9207 `iss` parameter; nil leaves it out.
    let issuer: String?
    /// Redirect responses become a page with a link the user taps.
    var tapToReturn = false

    func success(code: String) -> Response {
        respond([("code", code)])
    }

    /// A response of several parameters (the tokens of an implicit response).
    func success(_ fields: [(String, String)]) -> Response {
        respond(fields)
    }

    func error(_ error: String, _ description: String) -> Response {
        respond([("error", error), ("error_description", description)])
    }

    private func respond(_ fields: [(String, String)]) -> Response {
        var all = fields
        if let state { all.append(("state", state)) }
        if let issuer { all.append(("iss", issuer)) }
        switch mode {
        case "form_post":
            let inputs = all.map { "<input type=\"hidden\" name=\"\(Reply.escape($0.0))\" value=\"\(Reply.escape($0.1))\">" }.joined()
            return Reply.html(
                .ok,
                """
                <form method="post" action="\(Reply.escape(redirectURI))">\(inputs)<noscript><button type="submit">Continue</button></noscript></form>
                <script>document.forms[0].submit()</script>
                """)
        case "fragment":
            return redirect(to: redirectURI + "#" + FormEncoding.encode(all))
        default:
            let separator = redirectURI.contains("?") ? "&" : "?"
            return redirect(to: redirectURI + separator + FormEncoding.encode(all))
        }
    }

    private func redirect(to location: String) -> Response {
        guard tapToReturn else { return Response(status: .found, headers: [.location: location]) }
        return Reply.html(
            .ok,
            """
            <h1>You are signed in</h1>
            <p><a id="return" href="\(Reply.escape(location))">Return to the app</a></p>
            """)
    }
}
