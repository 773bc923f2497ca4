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
    /// `GET /response?…`: a page whose button opens `responsePage.appLink` with the response's members
    /// (``RequestReading/authorizationResponse(query:)``).
    func responsePage(_ request: Request) async throws -> Response {
        guard let page = configuration.responsePage else { throw CompanionError(.notConfigured, "the response page is off") }
        let forwarded: [(String, String)]
        do {
            forwarded = try RequestReading.authorizationResponse(query: request.uri.query ?? "")
        } catch {
            throw CompanionError(.invalidRequest, error.message)
        }
        let link = page.appLink + "?" + FormEncoding.encode(forwarded)
        let refused = forwarded.contains { $0.0 == "error" }
        let button = "<p><a id=\"return\" href=\"\(Replies.escape(link))\">Continue in the app</a></p>"
        return refused
            ? Replies.page(status: .ok, title: "Sign-in did not complete", message: "Return to the app to see why.", extra: button)
            : Replies.page(status: .ok, title: "Almost done", message: "Tap the button to finish signing in in the app.", extra: button)
    }
}
