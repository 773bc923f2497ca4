public import Foundation
public import Switchback

extension WebKitGTKHost {
    /// A hybrid app's secure browser on the engine (`HybridBridge.Browser`): an authentication session in
    /// `host` (a window of its own over the app's WebView), catching `<returnScheme>://oauth` and closing,
    /// that tells the bridge what the Apple adapter (`HybridConnector`) tells it: the session's completion,
    /// the URL caught or the user's Cancel. `bridge` gives the launch's bridge.
    public struct BridgeBrowser: HybridBridge.Browser {
        let host: WebKitGTKHost
        let bridge: @Sendable () -> HybridBridge?

        public init(_ host: WebKitGTKHost, bridge: @escaping @Sendable () -> HybridBridge?) {
            self.host = host
            self.bridge = bridge
        }

        public func show(_ url: URL, returnScheme: String) async throws {
            let callback = try HybridBridge.callbackURL(returnScheme: returnScheme)
            let bridge = bridge
            try await host.presentSession(url, callback: callback, ephemeral: false) { url, domain, code in
                await bridge()?.browserSessionCompleted(callbackURL: url, errorDomain: domain, errorCode: code)
            }
        }

        public func close() async { await host.dismiss() }
    }
}
