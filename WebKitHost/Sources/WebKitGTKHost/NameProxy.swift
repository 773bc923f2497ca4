import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Switchback
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

    /// Starts the proxy for `hosts` (name → loopback base URL). A connection whose `CONNECT` head has not come
    /// within `headTimeout` is closed. Throws ``SwitchbackError`` `invalidURL` when a name is not a DNS name or
    /// its server is not an http(s) address on loopback: the proxy carries the device's own servers only.
    static func start(hosts: [String: URL], headTimeout: TimeAmount = .seconds(10)) async throws -> NameProxy {
        var targets: [String: Target] = [:]
        for (name, base) in hosts {
            let name = name.lowercased()
            guard isDNSName(name) else { throw SwitchbackError(.invalidURL, "the name proxy cannot carry \"\(name)\": not a DNS name") }
            guard let target = Target(loopback: base) else {
                throw SwitchbackError(.invalidURL, "the name proxy carries \(name) only to a server on loopback, not \(base.absoluteString)")
            }
            targets[name] = target
        }
        let names = targets.keys.sorted()
        let routes = targets  // a constant for the channels' initializer, which runs on the event loops
        let (tls, certificate) = try makeTLS(for: names)
        // Every tunnel lives on the event loop, in channel handlers (NameProxy+Tunnel.swift): a cooperative pool
        // kept busy by the tests running beside it never stalls the engine's requests.
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ConnectHandler(targets: routes, tls: tls, headTimeout: headTimeout))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return NameProxy(url: "http://127.0.0.1:\(server.localAddress?.port ?? 0)", certificatePEM: certificate, names: names, server: server)
    }

    /// A host name a certificate can carry: dot-separated labels of letters, digits and inner hyphens, each
    /// 1–63 characters, 253 in all (RFC 1123, section 2.1).
    static func isDNSName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 253
            && labels.allSatisfy { label in
                (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                    && label.utf8.allSatisfy {
                        $0 == UInt8(ascii: "-") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
                            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    }
            }
    }

    /// The TLS that ends the engine's tunnels for `names`, and its certificate, PEM.
    static func makeTLS(for names: [String]) throws -> (context: NIOSSLContext, certificatePEM: String) {
        let (certificate, key) = try makeCertificate(for: names)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificate.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem)))
        configuration.applicationProtocols = ["http/1.1"]
        return (try NIOSSLContext(configuration: configuration), certificate)
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
