import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import SwiftASN1
import X509

/// The device's names for its loopback servers (`api.example.com` → `http://127.0.0.1:8080`), reachable
/// from the engine under those names over real TLS: an HTTP proxy on loopback that answers the engine's
/// `CONNECT api.example.com:443`, ends TLS with a certificate made for those names (which the engine's
/// stores are told to accept for them, and for nothing else), and relays the bytes to the server the name
/// stands for. A page then has its real https origin: `Secure` and `__Host-` cookies, `Origin` headers and
/// same-origin checks behave as they do on the phone. Names it does not know are refused (502).
final class NameProxy: Sendable {
    /// `http://127.0.0.1:<port>`, the proxy the engine's stores use.
    let url: String
    /// The certificate, PEM, that the engine accepts for ``names``.
    let certificatePEM: String
    let names: [String]
    private let server: any Channel

    private init(url: String, certificatePEM: String, names: [String], server: any Channel) {
        self.url = url
        self.certificatePEM = certificatePEM
        self.names = names
        self.server = server
    }

    deinit { server.close(promise: nil) }

    /// Starts the proxy for `hosts` (name → loopback base URL).
    static func start(hosts: [String: URL]) async throws -> NameProxy {
        let targets = Dictionary(
            hosts.compactMap { name, base in base.host.map { (name.lowercased(), (host: $0, port: base.port ?? (base.scheme == "https" ? 443 : 80))) }
            },
            uniquingKeysWith: { first, _ in first })
        let names = targets.keys.sorted()
        let (certificate, key) = try makeCertificate(for: names)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificate.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem)))
        configuration.applicationProtocols = ["http/1.1"]
        let tls = try NIOSSLContext(configuration: configuration)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let port = server.channel.localAddress?.port ?? 0
        Task {
            try? await server.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        group.addTask { await serve(connection, targets: targets, tls: tls) }
                    }
                }
            }
        }
        return NameProxy(url: "http://127.0.0.1:\(port)", certificatePEM: certificate, names: names, server: server.channel)
    }

    /// One tunnel: the `CONNECT` request, then TLS ended here and the plain bytes relayed to the server.
    private static func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, targets: [String: (host: String, port: Int)], tls: NIOSSLContext
    ) async {
        try? await connection.executeThenClose { inbound, outbound in
            var incoming = inbound.makeAsyncIterator()
            var head = ByteBuffer()
            while head.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) == nil {
                guard var more = try await incoming.next(), head.readableBytes < 8192 else { return }
                head.writeBuffer(&more)
            }
            let line = String(decoding: head.readableBytesView.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self).split(separator: " ")
            guard line.count == 3, line[0] == "CONNECT", let colon = line[1].lastIndex(of: ":"),
                let target = targets[String(line[1][..<colon]).lowercased()]
            else {
                try await outbound.write(ByteBuffer(string: "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
                return
            }
            let upstream = try await ClientBootstrap(group: connection.channel.eventLoop).connect(host: target.host, port: target.port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
            // The upstream channel is closed, and its writer finished, however the tunnel ends (NIO requires it).
            try await upstream.executeThenClose { upstreamIn, upstreamOut in
                defer { upstreamOut.finish() }
                try await outbound.write(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n"))
                // From here on the engine speaks TLS: end it in front of the channel's own handler.
                let channel = connection.channel
                try await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls), position: .first)
                }.get()
                // Whichever side ends first ends the tunnel: a server that closed its keep-alive connection must
                // not leave the engine writing into a tunnel that leads nowhere.
                let engine = Incoming(incoming)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        defer { outbound.finish() }
                        for try await chunk in upstreamIn { try await outbound.write(chunk) }
                    }
                    group.addTask {
                        while let chunk = try await engine.next() { try await upstreamOut.write(chunk) }
                    }
                    _ = try await group.next()
                    channel.close(promise: nil)
                    upstream.channel.close(promise: nil)
                    group.cancelAll()
                }
            }
        }
    }

    /// The engine's side of a tunnel, read by one task at a time (the relay's), after the `CONNECT` was read.
    private final class Incoming: @unchecked Sendable {
        private var iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        init(_ iterator: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator) { self.iterator = iterator }
        func next() async throws -> ByteBuffer? { try await iterator.next() }
    }

    /// A self-signed P-256 certificate for `names`, valid for a day, and its key, both PEM.
    private static func makeCertificate(for names: [String]) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("switchback-webkit loopback names") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(86_400), issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions { SubjectAlternativeNames(names.map { GeneralName.dnsName($0) }) },
            issuerPrivateKey: Certificate.PrivateKey(key))
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }
}
