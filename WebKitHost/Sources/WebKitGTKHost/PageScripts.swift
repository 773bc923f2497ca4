import Foundation

/// Every script the host runs on a page, in one place: each runs apart from the page's own scripts and
/// returns a string, which is JSON where it reports what the user is to do (``UserAction``).
enum PageScripts {
    /// The page's visible text.
    static let text = "document.body ? document.body.innerText : ''"

    /// The page's HTML as it is now.
    static let html = "document.documentElement ? document.documentElement.outerHTML : ''"

    /// What a page waiting for an app on another phone shows: the QR code's content (`#qr`) or the number to
    /// pick (`output#match`), as JSON `{kind, value}`; empty while it shows neither.
    static let otherDeviceChallenge =
        "(function(){var q=document.getElementById('qr');if(q&&q.textContent)return JSON.stringify({kind:'qr',value:q.textContent});var m=document.getElementById('match');if(m&&m.tagName==='OUTPUT')return JSON.stringify({kind:'match',value:m.textContent});return '';})()"

    /// Scrolls the element with `id` into view and returns its centre as `x,y` (empty when there is none).
    static func centre(ofElementWithID id: String) -> String {
        "(function(){var e=document.getElementById(\(literal(id)));if(!e)return '';e.scrollIntoView({block:'center'});var r=e.getBoundingClientRect();return (r.left+r.width/2)+','+(r.top+r.height/2);})()"
    }

    /// On a page with a sign-in form (a password field whose form has a `username` field; a code display's
    /// form has none): fills it and reports ``UserAction/Kind/signIn`` with the button to tap.
    static func signIn(username: String, password: String) -> String {
        "(function(){\(signInStatements(username: username, password: password))return '';})()"
    }

    /// Fills the form with `id` with `fields` (name, value) and reports ``UserAction/Kind/submit`` with its
    /// button; empty when the page has no such form.
    static func fill(formWithID id: String, _ fields: [(String, String)]) -> String {
        "(function(){var f=document.getElementById(\(literal(id)));if(!f||f.tagName!=='FORM')return '';return \(action("submit", target: fill("f", fields)));})()"
    }

    /// What a person does on the page, read from its DOM as they read the screen: signs in on a
    /// username and password form; taps a confirmation form's button (`form#confirm`, `#continue`), the
    /// return link (`#return`), or, when `tapsHandOff`, the page's "Open …" link (`#handoff`, once per page).
    static func nextAction(username: String, password: String, tapsHandOff: Bool) -> String {
        """
        (function(){
        \(signInStatements(username: username, password: password))
        var c=document.getElementById('confirm');
        if(c&&c.tagName==='FORM'){var b=document.getElementById('continue');if(b)return \(action("tap", target: "'continue'", label: "b.textContent.trim()"));c.submit();return \(action("submitted", target: "''", label: "'Continue'"));}
        var r=document.getElementById('return');
        if(r&&r.href){return \(action("tap", target: "'return'", label: "r.textContent.trim()"));}
        var h=document.getElementById('handoff');
        if(\(tapsHandOff ? "true" : "false")&&h&&h.href&&!window.switchbackTapped){window.switchbackTapped=true;return \(action("tap", target: "'handoff'", label: "h.textContent.trim()"));}
        return '';})()
        """
    }

    /// Statements that sign in on a page with a sign-in form and return the action; nothing otherwise.
    private static func signInStatements(username: String, password: String) -> String {
        """
        var p=Array.prototype.find.call(document.querySelectorAll('input[type=password]'),function(i){return i.form&&i.form.querySelector('input[name=username]');});
        if(p)return \(action("sign-in", target: fill("p.form", [("username", username), ("password", password)])));
        """
    }

    /// A script expression that types `fields` (name, value) into `form` (an expression for a form element)
    /// and names the element the user then taps to send it: its submit button (given an ID if it has
    /// none), or `-` when it has none and was submitted as Enter in a field would.
    private static func fill(_ form: String, _ fields: [(String, String)]) -> String {
        let assignments = fields.map { "(function(i){if(i)i.value=\(literal($0.1));})(f.querySelector('[name=\"'+\(literal($0.0))+'\"]'));" }.joined()
        return """
            (function(f){\(assignments)var b=f.querySelector('button[type=submit],input[type=submit],button:not([type])');
            if(b){if(!b.id)b.id='switchback-submit';return b.id;}f.submit();return '-';})(\(form))
            """
    }

    /// A script expression for a ``UserAction`` as JSON; `target` and `label` are script expressions.
    private static func action(_ kind: String, target: String, label: String = "''") -> String {
        "JSON.stringify({kind:\(literal(kind)),target:\(target),label:\(label)})"
    }

    /// `text` as a JavaScript string literal: letters and digits as they are, everything else escaped.
    static func literal(_ text: String) -> String {
        "'"
            + text.unicodeScalars.map {
                $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil) ? String($0) : String(format: "\\u{%x}", $0.value)
            }.joined() + "'"
    }
}

/// What the scripted user is to do on a page, as ``PageScripts`` report it.
struct UserAction: Decodable, Equatable {
    enum Kind: String, Decodable {
        /// A sign-in form was filled: tap `target`, its submit button (`-`: it was sent without one).
        case signIn = "sign-in"
        /// A form was filled: tap `target`, its submit button (`-`: it was sent without one).
        case submit
        /// Tap the link or button `target`, labelled `label`.
        case tap
        /// The page's form was sent without a button to tap; `label` names it.
        case submitted
    }

    let kind: Kind
    let target: String
    let label: String

    /// The action a script returned; nil for an empty answer (the page asks nothing) or anything else.
    init?(script answer: String) {
        guard !answer.isEmpty, let action = try? JSONDecoder().decode(UserAction.self, from: Data(answer.utf8)) else { return nil }
        self = action
    }
}
