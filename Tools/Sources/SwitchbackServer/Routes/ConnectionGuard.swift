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
}

/// One timer on a connection's event loop, armed and cancelled there. A task already due when it is
/// cancelled still runs (NIO takes due tasks in batches), so each arming has a number and only the
/// current one acts.
private final class Alarm {
    private var scheduled: Scheduled<Void>?
    private var arming = 0

    var isArmed: Bool { scheduled != nil }

    func arm(_ context: ChannelHandlerContext, at deadline: NIODeadline, _ ring: @escaping () -> Void) {
        arming &+= 1
        let current = arming
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            guard current == arming else { return }
            scheduled = nil
            ring()
        }
    }

    func cancel() {
        scheduled?.cancel()
        scheduled = nil
        arming &+= 1
    }
}

/// Three limits per connection that Hummingbird's HTTP/1 channel does not have, placed in its pipeline
/// after the HTTP decoder:
///
/// - **A cap on open connections** (`limits.maxConnections`): a connection past it is closed as soon as
///   it is accepted, before it can hold a file descriptor and a task for the idle timeout.
/// - **A deadline for a request's body** (`limits.bodyTimeout`): from the request's head to its end. A
///   client that sends a body a byte at a time keeps Hummingbird's idle timer from firing (each part is
///   activity), so past the deadline the connection is closed. A request whose head and body arrive in
///   one read, as nearly all do, never starts a timer: the deadline is set on the head and only armed
///   when a read ends with the body still incomplete.
/// - **A deadline for a stalled answer** (`limits.writeTimeout`): a client that stops reading fills the
///   connection's buffers until the channel is not writable, and the answer being written waits; the
///   idle timer does not run while a request is being answered. Past the deadline without the channel
///   becoming writable again, the connection is closed.
///
/// The request head itself is bounded by the idle timeout: the decoder passes a head on only once it is
/// whole, so a head sent a byte at a time is no activity.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let connections: ConnectionCount
    private let bodyTimeout: TimeAmount
    private let writeTimeout: TimeAmount
    private let metrics: CompanionMetrics
    private let listener: CompanionMetrics.Listener
    private var counted = false
    /// When the request being read must have ended; nil between requests.
    private var bodyDeadline: NIODeadline?
    /// Armed when a read ends with a body incomplete.
    private let body = Alarm()
    /// Armed while the channel is not writable.
    private let stall = Alarm()

    init(
        connections: ConnectionCount, bodyTimeout: TimeAmount, writeTimeout: TimeAmount, metrics: CompanionMetrics,
        listener: CompanionMetrics.Listener
    ) {
        self.connections = connections
        self.bodyTimeout = bodyTimeout
        self.writeTimeout = writeTimeout
        self.metrics = metrics
        self.listener = listener
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { _ = admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        // A refused connection is closed (and has seen channelInactive): the handlers after this one are
        // not told it became active.
        guard admit(context) else { return }
        context.fireChannelActive()
    }

    /// Counts the connection in (once); false when the cap refused it and it is being closed.
    private func admit(_ context: ChannelHandlerContext) -> Bool {
        guard !counted else { return true }
        if connections.admit() {
            counted = true
            return true
        }
        metrics.connectionClosed(.overCap, listener: listener)
        context.close(promise: nil)
        return false
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stall.cancel()
        } else if !stall.isArmed {
            stall.arm(context, at: .now() + writeTimeout) { [self] in
                metrics.connectionClosed(.writeTimeout, listener: listener)
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: bodyDeadline = .now() + bodyTimeout
        case .body: break
        case .end: cancelBodyTimer()
        }
        context.fireChannelRead(data)
    }

    /// A body the decoder refused ends its request: no deadline is left to cut the connection later.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        cancelBodyTimer()
        context.fireErrorCaught(error)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if let deadline = bodyDeadline, !body.isArmed {
            body.arm(context, at: deadline) { [self] in
                metrics.connectionClosed(.bodyTimeout, listener: listener)
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

    private func cancelBodyTimer() {
        bodyDeadline = nil
        body.cancel()
    }

    private func leave() {
        cancelBodyTimer()
        stall.cancel()
        if counted {
            counted = false
            connections.release()
        }
    }
}
