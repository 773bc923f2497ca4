import CWebKitShim
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

extension NameProxy {
    /// The loopback server a name stands for.
    struct Target: Sendable {
        let host: String
        let port: Int

        /// `base`'s host and port, when it is an http(s) server on loopback (`127.0.0.0/8`, `::1`, `localhost`).
        init?(loopback base: URL) {
            guard let scheme = base.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = base.host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            else { return nil }
            let octets = host.split(separator: ".", omittingEmptySubsequences: false)
            let ipv4Loopback = octets.count == 4 && octets.first == "127" && octets.allSatisfy { UInt8($0) != nil }
            guard ipv4Loopback || host == "::1" || host == "localhost" else { return nil }
            self.host = host
            port = base.port ?? (scheme == "https" ? 443 : 80)
        }
    }

    /// The first handler of every connection: reads the `CONNECT` head (at most 8 KiB, within `headTimeout`),
    /// refuses anything but a `CONNECT` to one of the names with 502, and otherwise connects to that name's
    /// server, announces the tunnel, ends TLS in front of it and hands the connection to a ``Relay``. All of it
    /// on the event loop.
    final class ConnectHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        /// A head longer than this is cut off: the connection is closed without an answer.
        static let headLimit = 8192

        private let targets: [String: Target]
        private let tls: NIOSSLContext
        private let headTimeout: TimeAmount
        private var head = ByteBuffer()
        /// Set once the head is read: whatever arrives after it, before the tunnel opens, ends the connection.
        private var answered = false
        /// Closes a connection whose head has not come in time (one that sends nothing holds no socket for long).
        private var deadline: Scheduled<Void>?

        init(targets: [String: Target], tls: NIOSSLContext, headTimeout: TimeAmount) {
            self.targets = targets
            self.tls = tls
            self.headTimeout = headTimeout
        }

        func handlerAdded(context: ChannelHandlerContext) {
            // Just accepted, without close-on-exec: a WebKit process started now would keep it open.
            sb_sockets_close_on_exec()
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: headTimeout) { context.close(promise: nil) }
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            deadline?.cancel()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            // The engine speaks TLS only once the tunnel is announced: bytes before that end the connection.
            guard !answered else { return context.close(promise: nil) }
            head.writeBuffer(&bytes)
            guard head.readableBytes <= Self.headLimit else { return context.close(promise: nil) }
            guard let end = head.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
            answered = true
            let line = String(decoding: head.readableBytesView.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self).split(separator: " ")
            guard end.upperBound == head.writerIndex, line.count == 3, line[0] == "CONNECT", let colon = line[1].lastIndex(of: ":"),
                let target = targets[String(line[1][..<colon]).lowercased()]
            else { return refuse(context) }
            try? context.channel.syncOptions?.setOption(.autoRead, value: false)
            let engine = context.channel
            ClientBootstrap(group: context.eventLoop)
                .connectTimeout(.seconds(5))
                .channelInitializer { upstream in
                    upstream.eventLoop.makeCompletedFuture {
                        sb_sockets_close_on_exec()
                        try upstream.pipeline.syncOperations.addHandler(Relay(to: engine))
                    }
                }
                .connect(host: target.host, port: target.port)
                .hop(to: context.eventLoop)
                .assumeIsolated()
                .whenComplete { result in
                    switch result {
                    case .success(let upstream): self.open(context, to: upstream)
                    // A known name whose server is not there: no tunnel is announced.
                    case .failure: context.close(promise: nil)
                    }
                }
        }

        private func refuse(_ context: ChannelHandlerContext) {
            let answer = ByteBuffer(string: "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            context.writeAndFlush(wrapOutboundOut(answer)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }

        private func open(_ context: ChannelHandlerContext, to upstream: any Channel) {
            let engine = context.channel
            // The announcement leaves in the clear; everything after it passes through TLS, added in front.
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
            // An engine gone before the tunnel opened (or while announcing it) takes the upstream with it.
            guard engine.isActive else { return upstream.close(promise: nil) }
            do {
                let pipeline = context.pipeline.syncOperations
                try pipeline.addHandler(NIOSSLServerHandler(context: tls), position: .first)
                try pipeline.addHandler(Relay(to: upstream))
                try engine.syncOptions?.setOption(.autoRead, value: true)
                pipeline.removeHandler(context: context, promise: nil)
            } catch {
                upstream.close(promise: nil)
                engine.close(promise: nil)
            }
        }
    }

    /// One direction of a tunnel: what arrives on its channel is written to the peer, and whichever side ends
    /// first ends both (a server that closed its keep-alive connection must not leave the engine writing into
    /// a tunnel that leads nowhere). No backpressure: the pages and their assets are small.
    final class Relay: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        private let peer: any Channel

        init(to peer: any Channel) { self.peer = peer }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            peer.writeAndFlush(unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            peer.close(promise: nil)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
