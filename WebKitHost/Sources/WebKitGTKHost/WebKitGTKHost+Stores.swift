import Foundation
import Switchback
import SwitchbackTesting
import CWebKitGTK
import CWebKitShim

/// The cookie stores the views draw on: the long-lived ones of the WebView, the Safari view and Safari, and
/// the fresh one of each authentication session, routed through the name proxy when the device has names.
extension WebKitGTKHost {
    /// The long-lived stores by name; touched on the loop's thread only, released with the last host using them.
    final class Stores: @unchecked Sendable {
        let loop: MainLoop
        var byName: [String: Pointer<WebKitWebContext>] = [:]
        /// The name proxy (its URL) each long-lived store already routes through, so that it is routed once.
        var routedThrough: [String: String] = [:]

        init(loop: MainLoop) { self.loop = loop }

        deinit {
            let stores = Array(byName.values)
            loop.perform { for store in stores { g_object_unref(store.value) } }
        }
    }

    /// The store a new view of `seat` uses: the app's WebView or Safari view store, kept; a fresh one for an
    /// ephemeral session; for an authentication session a fresh one holding Safari's persistent cookies.
    func store(for seat: Seat) async throws -> Pointer<WebKitWebContext> {
        let proxy = try await nameProxy()
        let store = await unroutedStore(for: seat)
        // The named servers' https goes through the name proxy, under their names, with its certificate: once
        // for a long-lived store, and for each fresh one.
        if let proxy {
            await loop.run {
                if let kept = seat.keptStoreName {
                    guard self.stores.routedThrough[kept] != proxy.url else { return }
                    self.stores.routedThrough[kept] = proxy.url
                }
                let names = proxy.names.map { strdup($0) } + [nil]
                defer { for name in names { free(name) } }
                names.withUnsafeBufferPointer { buffer in
                    buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                        sb_store_route(store.value, proxy.url, proxy.certificatePEM, $0)
                    }
                }
            }
        }
        return store
    }

    private func unroutedStore(for seat: Seat) async -> Pointer<WebKitWebContext> {
        if let name = seat.keptStoreName { return await loop.run { self.kept(name) } }
        let session = await loop.run { Pointer(sb_store_new()) }
        if seat == .authenticationSession {
            _ = await copyCookies(from: await loop.run { self.kept(Seat.safari.rawValue) }, to: session, persistentOnly: true)
        }
        return session
    }

    /// A long-lived store; on the loop's thread only.
    func kept(_ name: String) -> Pointer<WebKitWebContext> {
        if let store = stores.byName[name] { return store }
        let store = Pointer(sb_store_new()!)
        stores.byName[name] = store
        return store
    }

    func copyCookies(from: Pointer<WebKitWebContext>, to: Pointer<WebKitWebContext>, persistentOnly: Bool) async -> Int {
        await withCheckedContinuation { continuation in
            let done = CallbackBox<Int> { continuation.resume(returning: $0) }
            loop.perform {
                sb_copy_cookies(
                    from.value, to.value, persistentOnly ? 1 : 0,
                    { copied, context in CallbackBox<Int>.take(context).run(Int(copied)) },
                    done.retained())
            }
        }
    }
}
