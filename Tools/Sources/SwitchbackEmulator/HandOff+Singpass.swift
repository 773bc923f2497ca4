import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// Singpass: the app hand-off with its registered app_launch_url.
extension Provider {
    // MARK: Singpass

    func singpassHandOff(_ pending: ProviderState.Pending, requestID: String) async -> Response {
        if let launch = pending.appReturnURL, !isAppReturnURL(launch, of: pending) {
            return await refuse(requestID, pending, "app_launch_url is not registered for this client")
        }
        return await startHandOff(
            pending, requestID: requestID, acr: Singpass.acr, appName: "Singpass",
            link: { reference in
                var link = "singpass://auth?txn=\(reference)"
                if let launch = pending.appReturnURL { link += "&app_launch_url=" + FormEncoding.escape(launch) }
                return link
            }, polls: true, otherPhone: { .qrCode(source: "/qr?txn=\($0)") })
    }

    /// Whether `url` is one of the client's registered app return URLs (exact match).
    func isAppReturnURL(_ url: String, of pending: ProviderState.Pending) -> Bool {
        configuration.client(pending.clientID)?.appReturnURLs.contains(url) ?? false
    }
}
