import Foundation
import Hummingbird
@_spi(SwitchbackInternals) import Switchback

/// UAE Pass: the app hand-off with its https success and failure pages.
extension Provider {
    // MARK: UAE Pass

    func uaePassHandOff(_ pending: ProviderState.Pending, requestID: String, options: UAEPassOptions) async -> Response {
        let base = issuer.issuer
        return await startHandOff(
            pending, requestID: requestID, acr: UAEPassOptions.onDeviceACR, appName: "UAE Pass",
            link: { reference in
                options.deepLink(
                    reference: reference, successURL: "\(base)/uaepass/resume?txn=\(reference)", failureURL: "\(base)/uaepass/cancel?txn=\(reference)"
                )
            }, polls: false)
    }
}
