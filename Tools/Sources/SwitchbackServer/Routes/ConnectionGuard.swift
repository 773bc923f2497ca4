import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// The connections one companion instance holds, shared by every connection's ``ConnectionGuard``.
final class ConnectionCount: Sendable {
    /// The most connections held at once; 0 for no cap.
    let limit: Int
    private let open = NIOLockedValueBox(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection in, or refuses it (and does not count it) when the cap is reached.
    func admit() -> Bool {
        open.withLockedValue { open in
            guard limit == 0 || open < limit else { return false }
            open += 1
            return true
        }
    }

    func release() {
        open.withLockedValue { $0 -= 1 }
    }

    /// How many connections are open now.
    var current: Int { open.withLockedValue { $0 } }
}

/// Two limits per connection that Hummingbird's HTTP/1 channel does not have, placed in its pipeline
/// after the HTTP decoder:
///
/// - **A cap on open connections** (`limits.maxConnections`): a connection past it is closed as soon as
///   it is accepted, before it can hold a file descriptor and a task for the idle timeout.
/// - **A deadline for a request's body** (`limits.bodyTimeout`): from the request's head to its end. A
///   client that sends a body a byte at a time keeps Hummingbird's idle timer from firing (each part is
///   activity), so past the deadline the connection is closed. A request whose head and body arrive in
///   one read, as nearly all do, never starts a timer: the deadline is set on the head and only armed
///   when a read ends with the body still incomplete.
///
/// The request head itself is bounded by the idle timeout: the decoder passes a head on only once it is
/// whole, so a head sent a byte at a time is no activity.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let connections: ConnectionCount
    private let bodyTimeout: TimeAmount
    private let metrics: CompanionMetrics
    private var counted = false
    /// When the request being read must have ended; nil between requests.
    private var bodyDeadline: NIODeadline?
    private var timer: Scheduled<Void>?

    init(connections: ConnectionCount, bodyTimeout: TimeAmount, metrics: CompanionMetrics) {
        self.connections = connections
        self.bodyTimeout = bodyTimeout
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        admit(context)
        context.fireChannelActive()
    }

    private func admit(_ context: ChannelHandlerContext) {
        guard !counted else { return }
        if connections.admit() {
            counted = true
        } else {
            metrics.record(.connectionRefused)
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: bodyDeadline = .now() + bodyTimeout
        case .body: break
        case .end:
            bodyDeadline = nil
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if let deadline = bodyDeadline, timer == nil {
            timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
                timer = nil
                guard bodyDeadline != nil else { return }
                metrics.record(.bodyTimedOut)
                context.close(promise: nil)
            }
        }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave()
    }

    private func leave() {
        timer?.cancel()
        timer = nil
        bodyDeadline = nil
        if counted {
            counted = false
            connections.release()
        }
    }
}
