import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// MitID through a broker: the tap on "Open MitID app" and its app-switch return.
@available(macOS 14, iOS 17, *)
extension Provider {
    // MARK: MitID via a broker

    func mitIDHandOff(_ pending: ProviderState.Pending, requestID: String) async -> Response {
        var resumeURL: String?
        if let hint = pending.loginHint, hint.split(separator: " ").contains("appswitch:ios") {
            let prefix = "appswitch:resumeUrl:"
            resumeURL = hint.split(separator: " ").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
            guard let resumeURL, isAppReturnURL(resumeURL, of: pending) else {
                return await refuse(requestID, pending, "the app switch resumeUrl is missing or not allow-listed for this client")
            }
        }
        return await startHandOff(
            pending, requestID: requestID, acr: MitID.substantialACR, appName: "MitID app",
            link: { reference in
                var link = "https://\(MitID.appSwitchHost)/authenticate?txn=\(reference)"
                if let resumeURL { link += "&app_switch_url=" + FormEncoding.escape(resumeURL) }
                return link
            }, polls: true, otherPhone: { .identifier(reference: $0, label: "MitID app on another device? Your user ID") })
    }
}
