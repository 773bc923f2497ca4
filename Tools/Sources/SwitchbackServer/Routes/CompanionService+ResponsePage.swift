import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// The response page: the app's https redirect URI for a provider that ends with a plain redirect (MitID
/// through Signaturgruppen, "MitID on iOS": the integrator renders the button on the last redirect step).
/// A Safari view loads that redirect as a page, and iOS opens a universal link only from a tap on a page
/// of another host, so this page shows a button to the app's universal link carrying the response. It
/// redeems nothing and keeps nothing: the code is bound to the app's PKCE verifier, and the app checks
/// `state` and `iss` as for any redirect.
extension CompanionService {
    /// The members of an authorization response the page forwards (RFC 6749 §4.1.2 and §4.1.2.1, RFC 9207
    /// `iss`); anything else the query carries stays behind.
    static let responseMembers = ["code", "state", "iss", "error", "error_description", "error_uri"]

    /// `GET /response?…`: a page whose button opens `responsePage.appLink` with the response's members.
    func responsePage(_ request: Request) async throws -> Response {
        guard let page = configuration.responsePage else { throw CompanionError(.notConfigured, "the response page is off") }
        guard let fields = FormEncoding.decode(request.uri.query ?? "", plusIsSpace: true) else {
            throw CompanionError(.invalidRequest, "the answer's query is malformed")
        }
        var forwarded: [(String, String)] = []
        for name in Self.responseMembers {
            let values = fields.filter { $0.0 == name }.map(\.1)
            // RFC 6749 §3.1: a parameter must not be included more than once.
            guard values.count <= 1 else { throw CompanionError(.invalidRequest, "the answer repeats \(name)") }
            if let value = values.first { forwarded.append((name, value)) }
        }
        guard forwarded.contains(where: { $0.0 == "code" || $0.0 == "error" }), forwarded.contains(where: { $0.0 == "state" }) else {
            throw CompanionError(.invalidRequest, "this is not an authorization response: it needs state and a code or an error")
        }
        let link = page.appLink + "?" + FormEncoding.encode(forwarded)
        let refused = forwarded.contains { $0.0 == "error" }
        let button = "<p><a id=\"return\" href=\"\(Replies.escape(link))\">Continue in the app</a></p>"
        return refused
            ? Replies.page(status: .ok, title: "Sign-in did not complete", message: "Return to the app to see why.", extra: button)
            : Replies.page(status: .ok, title: "Almost done", message: "Tap the button to finish signing in in the app.", extra: button)
    }
}
