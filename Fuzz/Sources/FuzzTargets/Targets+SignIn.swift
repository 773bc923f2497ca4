import Foundation
@_spi(SwitchbackInternals) import Switchback

/// One sign-in as the app prepares it for UAE Pass in a WebView: a redirect URI with a registered query item,
/// the rewrite's return URL (with a query of its own), a provider-given app return and a response link.
enum SignInFuzz {
    static let rule = ProviderPreset.uaePass.authenticator!
    static let flowID = "f7Qx2bL9"
    static let redirectURI = URL(string: "https://app.example.com/oauth/callback?tenant=a")!
    static let returnTo = URL(string: "https://app.example.com/return?app=1")!
    static let responseLink = URL(string: "https://links.example.com/r")!
    static let appReturnURL = URL(string: "https://app.example.com/bankid-return")!
    /// The authenticator link a provider page opens, valid: navigating to it first saves a hand-off.
    static let handOffLink = URL(
        string: "uaepass://digitalid?successurl=https%3A%2F%2Fid.uaepass.ae%2Fok&failureurl=https%3A%2F%2Fid.uaepass.ae%2Fno")!

    static func policy(_ environment: AuthenticatorRule.Environment) -> NavigationPolicy {
        NavigationPolicy(redirectURI: redirectURI, authenticator: rule, environment: environment, returnTo: returnTo, flowID: flowID)
    }

    static let plan = SignInFlow.Plan(
        flowID: flowID, strategy: .webView, authorizationURL: URL(string: "https://id.uaepass.ae/authorize")!, redirectURI: redirectURI,
        rewrite: .init(rule: rule, environment: .production, returnTo: returnTo), appReturnURL: appReturnURL, responseLink: responseLink)

    /// Scheme, host, port and path as URLComponents reads them, compared as redirect URIs are (RFC 3986 §6.2.2.1,
    /// §6.2.3), and no user-info.
    static func sameEndpoint(_ url: URL, _ registered: URL) -> Bool {
        guard let a = URLComponents(url: url, resolvingAgainstBaseURL: false), let b = URLComponents(url: registered, resolvingAgainstBaseURL: false)
        else { return false }
        func port(_ c: URLComponents) -> Int? { c.port ?? (c.scheme?.lowercased() == "https" ? 443 : c.scheme?.lowercased() == "http" ? 80 : nil) }
        return a.user == nil && a.password == nil && a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && port(a) == port(b) && a.percentEncodedPath == b.percentEncodedPath
    }

    /// The members of a query or fragment with form rules, as a browser's URLSearchParams reads them.
    static func fields(_ text: String?) -> [(String, String)] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                let plain = $0.replacingOccurrences(of: "+", with: " ")
                return plain.removingPercentEncoding ?? plain
            }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    /// The query's items URLComponents reads, by decoded name (lowercased) and raw text.
    static func rawItems(_ url: URL) -> [(name: String, raw: String)]? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        guard let query = components.percentEncodedQuery else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { item in
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return ((String(name).removingPercentEncoding ?? String(name)).lowercased(), String(item))
        }
    }
}

extension FuzzTarget {
    /// What the WebView does with a navigation: the UAE Pass rewrite in every environment, and the Swedish
    /// BankID autostart link's universal-link form.
    static let navigation = FuzzTarget(
        "navigation",
        asserts: """
            NavigationPolicy finishes only at what URLComponents reads as the redirect URI; a rewritten authenticator \
            link opens the environment's app, keeps every other query item and the fragment as they were, saves an https \
            provider page, and its return items bring the user back to a URL HandOffRewrite.match reads as this flow's \
            success or failure; a refused link fails with handOffLinkInvalid or foreignResumeURL; the BankID link's \
            universal form is https://app.bankid.com/ with the same query
            """
    ) { input in
        guard let text = text(input), let url = URL(string: text) else { return }
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        for environment in [AuthenticatorRule.Environment.production, .staging] {
            switch SignInFuzz.policy(environment).decide(url) {
            case .finish(let finished):
                require(finished == url, "a navigation finished with another URL")
                require(
                    SignInFuzz.sameEndpoint(url, SignInFuzz.redirectURI), "a URL URLComponents does not read as the redirect URI finished the sign-in"
                )
            case .launchAuthenticator(let rewrite):
                checkRewrite(rewrite, of: url, environment: environment)
            case .block(let code):
                require(code == .handOffLinkInvalid || code == .foreignResumeURL, "an authenticator link was refused with \(code)")
                require(SignInFuzz.rule.launches(url), "a link that is not the authenticator's was blocked")
            case .allow:
                require(["http", "https"].contains(url.scheme?.lowercased() ?? ""), "a \(url.scheme ?? "schemeless") URL loads in the WebView")
            case .openExternally:
                require(!["http", "https"].contains(url.scheme?.lowercased() ?? ""), "a web page was sent out of the WebView")
                require(!SignInFuzz.rule.launches(url), "the authenticator's link was opened without its rewrite")
            }
        }
        let universal = AppLinkForm.universalLink(for: url, appLinks: ProviderPreset.bankIDSweden.appLinks)
        require(
            (universal != nil) == (url.scheme?.lowercased() == "bankid" && components != nil),
            "a universal link made for a \(url.scheme ?? "") link, or none for BankID's")
        if let universal, let form = URLComponents(url: universal, resolvingAgainstBaseURL: false) {
            require(form.scheme == "https" && form.host == "app.bankid.com" && form.fragment == nil, "the universal link is not BankID's")
            require(form.percentEncodedQuery == components?.percentEncodedQuery, "the universal link's query is not the link's")
        }
    }

    /// The rewrite of `url`: its parts against URLComponents' reading of both links.
    private static func checkRewrite(_ rewrite: HandOffRewrite, of url: URL, environment: AuthenticatorRule.Environment) {
        let rule = SignInFuzz.rule
        require(rule.launches(url), "a link that is not the authenticator's was rewritten")
        require(rewrite.link.scheme == rule.schemes[environment], "the rewritten link opens another app than \(environment)'s")
        for saved in [rewrite.successURL] + (rewrite.failureURL.map { [$0] } ?? []) {
            let page = URLComponents(url: saved, resolvingAgainstBaseURL: false)
            require(
                page?.scheme?.lowercased() == "https" && rule.providerHosts.contains(page?.host?.lowercased() ?? "") && page?.user == nil
                    && page?.password == nil, "a saved return page is not an https page of the provider")
        }
        guard let rewritten = SignInFuzz.rawItems(rewrite.link) else {
            require(false, "the rewritten link is not a URL URLComponents reads")
            return
        }
        let returns = Set(rule.successParameters + rule.failureParameters)
        var outcomes: [HandOffRewrite.Return] = []
        for item in rewritten where returns.contains(item.name) {
            let value = item.raw.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first.map(String.init) ?? ""
            guard let back = value.removingPercentEncoding.flatMap(URL.init(string:)) else {
                require(false, "a return item is not a URL")
                return
            }
            outcomes.append(HandOffRewrite.match(back, returnTo: SignInFuzz.returnTo, flowID: SignInFuzz.flowID))
            require(
                outcomes.last == (rule.successParameters.contains(item.name) ? .success : .failure),
                "a return item does not bring the user back to this flow's \(item.name)")
        }
        require(outcomes.contains(.success), "the rewritten link carries no success return")
        if let original = SignInFuzz.rawItems(url) {
            require(
                original.filter { !returns.contains($0.name) }.map(\.raw) == rewritten.filter { !returns.contains($0.name) }.map(\.raw),
                "the rewrite changed query items that are not return URLs")
            require(
                URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedFragment
                    == URLComponents(url: rewrite.link, resolvingAgainstBaseURL: false)?.percentEncodedFragment,
                "the rewrite changed the fragment")
        }
    }

    /// A URL the operating system opens the app with, during a UAE Pass sign-in that has handed off.
    static let returnURL = FuzzTarget(
        "return-url",
        asserts: """
            an opened URL is the callback only when URLComponents reads it as the redirect URI, or as the response link \
            carrying state, code or error; a forwarded response, taken to the redirect URI, is still the callback; a \
            return is this flow's only when it is returnTo with this flow's ID first, and then loads the saved page of \
            its outcome; an exchange follows only a callback
            """
    ) { input in
        guard let text = text(input), let url = URL(string: text) else { return }
        var flow = SignInFlow(SignInFuzz.plan)
        _ = flow.handle(.start)
        let launched = flow.handle(.navigation(SignInFuzz.handOffLink))
        require(launched.contains(.persist), "the valid hand-off link did not launch the authenticator")
        let recognised = flow.recognise(url)
        switch recognised {
        case .callback:
            if !SignInFuzz.sameEndpoint(url, SignInFuzz.redirectURI) {
                require(
                    SignInFuzz.sameEndpoint(url, SignInFuzz.responseLink),
                    "a URL read as neither the redirect URI nor the response link is the callback")
                let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                let members = (SignInFuzz.fields(components?.percentEncodedQuery) + SignInFuzz.fields(components?.percentEncodedFragment)).map(\.0)
                require(members.contains { ["state", "code", "error"].contains($0) }, "the bare response link was taken as a response")
                let taken = SignInFuzz.plan.atRedirectURI(url)
                require(flow.recognise(taken) == .callback, "a forwarded response taken to the redirect URI is not the callback there")
                require(SignInFuzz.sameEndpoint(taken, SignInFuzz.redirectURI), "a forwarded response was taken elsewhere than the redirect URI")
            }
        case .authenticatorReturn(let outcome):
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            let flowItem = components?.queryItems?.first { $0.name == HandOffRewrite.flowParameter }?.value
            switch outcome {
            case .success, .failure:
                require(SignInFuzz.sameEndpoint(url, SignInFuzz.returnTo), "a return not at returnTo was taken")
                require(flowItem == SignInFuzz.flowID, "a return for another flow was taken as this one's")
            case .otherFlow:
                require(flowItem != nil && flowItem != SignInFuzz.flowID, "this flow's return was called another's")
            case .unrelated:
                require(false, "recognise gave an unrelated authenticator return")
            }
        case .appReturn:
            require(SignInFuzz.sameEndpoint(url, SignInFuzz.appReturnURL), "a URL not read as the app return brought the app forward")
        case .unrelated:
            break
        }
        let actions = flow.handle(.openedURL(url))
        for action in actions {
            switch action {
            case .exchange:
                require(recognised == .callback, "an exchange followed a URL that is not the callback")
            case .load(let page):
                require(
                    (recognised == .authenticatorReturn(.success) && page == URL(string: "https://id.uaepass.ae/ok"))
                        || (recognised == .authenticatorReturn(.failure) && page == URL(string: "https://id.uaepass.ae/no")),
                    "an opened URL loaded a page that is not its outcome's saved page")
            case .present, .openAuthenticator, .openExternally:
                require(false, "an opened URL made the app show or open \(action)")
            default:
                break
            }
        }
    }
}
