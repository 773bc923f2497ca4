package import NIOCore
@_spi(SwitchbackInternals) import Switchback

/// A listening socket, kept so that it stops accepting before a graceful shutdown closes it. A connection
/// accepted while the listener closes can be dropped by NIO's async server channel before anything owns
/// it, and its writer then traps (swift-nio issue 2813, open): the process dies. Reading no more from the
/// listener, then letting its event loop finish the accepts already under way, closes that window. The
/// emulator and the companion both listen through it.
package final class ListeningSockets: Sendable {
    private let channels = LockedValue<[any Channel]>([])

    package init() {}

    package func add(_ channel: any Channel) {
        channels.withLock { $0.append(channel) }
    }

    /// Accepts no more connections; those already accepted are handed over as usual.
    package func stopAccepting() async {
        for channel in channels.withLock({ $0 }) {
            try? await channel.setOption(ChannelOptions.autoRead, value: false).get()
            try? await channel.eventLoop.submit {}.get()
        }
        // An accepted connection's set-up may finish on another event loop.
        try? await Task.sleep(for: .milliseconds(20))
    }
}
