import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import SwiftASN1
import Testing
import X509
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackServer

/// TLS on the companion's own listener (issue 50): the hop from the load balancer is encrypted, and with
/// client-certificate authorities only a holder of a certificate they issued reaches the instance at all.
/// Real handshakes on loopback, AsyncHTTPClient (BoringSSL) as the client.
@Suite("TLS on the listener")
struct ListenerTLSTests {
    /// A CA, and certificates it issued, written to a directory of their own.
    struct Authority {
        let key = P256.Signing.PrivateKey()
        let certificate: Certificate
        let name: DistinguishedName

        init(_ commonName: String) throws {
            name = try DistinguishedName { CommonName(commonName) }
            certificate = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey), notValidBefore: Date() - 3600,
                notValidAfter: Date() + 86400, issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    KeyUsage(keyCertSign: true)
                },
                issuerPrivateKey: .init(key))
        }

        /// A leaf for the server (127.0.0.1 and localhost) or for a client.
        func issue(_ commonName: String, server: Bool) throws -> (certificate: Certificate, key: P256.Signing.PrivateKey) {
            let leafKey = P256.Signing.PrivateKey()
            let leaf = try Certificate(
                version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey), notValidBefore: Date() - 3600,
                notValidAfter: Date() + 86400, issuer: name, subject: try DistinguishedName { CommonName(commonName) },
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    KeyUsage(digitalSignature: true)
                    try ExtendedKeyUsage([server ? .serverAuth : .clientAuth])
                    if server {
                        SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])), .dnsName("localhost")])
                    }
                },
                issuerPrivateKey: .init(key))
            return (leaf, leafKey)
        }
    }

    /// The files a deployment would mount: the server's chain and key, and the proxies' authority.
    struct Files {
        let directory: URL
        let chain: String
        let key: String
        let clientAuthorities: String

        init(server: Authority, proxies: Authority) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-tls-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let leaf = try server.issue("companion", server: true)
            chain = directory.appendingPathComponent("chain.pem").path
            key = directory.appendingPathComponent("key.pem").path
            clientAuthorities = directory.appendingPathComponent("proxies.pem").path
            try (try leaf.certificate.serializeAsPEM().pemString + "\n").write(toFile: chain, atomically: true, encoding: .utf8)
            try leaf.key.pemRepresentation.write(toFile: key, atomically: true, encoding: .utf8)
            try proxies.certificate.serializeAsPEM().pemString.write(toFile: clientAuthorities, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    static let quiet = Logger(label: "tls-test") { _ in SwiftLogNoOpLogHandler() }

    /// `GET /health` over TLS trusting `server`'s CA, presenting `client` when given: the status, or the error.
    static func health(
        _ companion: Companion, trusting server: Authority, presenting client: (certificate: Certificate, key: P256.Signing.PrivateKey)? = nil
    ) async -> Result<Int, any Error> {
        var tls = TLSConfiguration.makeClientConfiguration()
        do {
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(try server.certificate.serializeAsPEM().pemString.utf8), format: .pem)]
            )
            if let client {
                tls.certificateChain = [
                    .certificate(try NIOSSLCertificate(bytes: Array(try client.certificate.serializeAsPEM().pemString.utf8), format: .pem))
                ]
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(client.key.pemRepresentation.utf8), format: .pem))
            }
        } catch {
            return .failure(error)
        }
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, timeout: .init(connect: .seconds(5))))
        let result: Result<Int, any Error>
        do {
            // A generous deadline: a loaded CI machine can hold a handshake for seconds.
            let response = try await http.execute(HTTPClientRequest(url: companion.baseURL.absoluteString + "/health"), timeout: .seconds(30))
            result = .success(Int(response.status.code))
        } catch {
            result = .failure(error)
        }
        try? await http.shutdown()
        return result
    }

    @Test("with tls the listener speaks only TLS: https as bound, /health answers over it, a plain request is not served")
    func servesTLS() async throws {
        let server = try Authority("Companion CA")
        let files = try Files(server: server, proxies: try Authority("Proxy CA"))
        defer { files.remove() }
        let companion = try await Companion.start(
            ServerConfiguration(port: 0, tls: .init(certificateChainFile: files.chain, privateKeyFile: files.key)), logger: Self.quiet)
        defer { Task { await companion.stop() } }
        #expect(companion.baseURL.scheme == "https")
        #expect(try (await Self.health(companion, trusting: server)).get() == 200)
        // Plain HTTP to the same port: no answer is served.
        var plain = URLComponents(url: companion.baseURL, resolvingAgainstBaseURL: false)!
        plain.scheme = "http"
        let transport = ServerTransport(timeout: 2)
        defer { Task { await transport.shutdown() } }
        let answered = try? await transport.send(HTTPRequest(method: .get, url: plain.url!.appendingPathComponent("health")))
        #expect(answered?.status != 200, "a plain request was served: \(String(describing: answered?.status))")
        // A client that trusts another CA refuses the server.
        await #expect(throws: (any Error).self) { try (await Self.health(companion, trusting: try Authority("Stranger CA"))).get() }
        await companion.stop()
    }

    @Test(
        "with client-certificate authorities, only a certificate they issued reaches the instance: none, or another CA's, is refused at the handshake"
    )
    func clientCertificates() async throws {
        let server = try Authority("Companion CA")
        let proxies = try Authority("Proxy CA")
        let files = try Files(server: server, proxies: proxies)
        defer { files.remove() }
        let companion = try await Companion.start(
            ServerConfiguration(
                port: 0,
                tls: .init(certificateChainFile: files.chain, privateKeyFile: files.key, clientCertificateAuthoritiesFile: files.clientAuthorities)),
            logger: Self.quiet)
        await #expect(throws: (any Error).self, "no client certificate") { try (await Self.health(companion, trusting: server)).get() }
        let stranger = try Authority("Someone else's CA").issue("load-balancer", server: false)
        await #expect(throws: (any Error).self, "another CA's certificate") {
            try (await Self.health(companion, trusting: server, presenting: stranger)).get()
        }
        let proxy = try proxies.issue("load-balancer", server: false)
        #expect(try (await Self.health(companion, trusting: server, presenting: proxy)).get() == 200)
        await companion.stop()
    }

    @Test(
        "a tls section that cannot serve stops the start with its setting named: a missing file, a key not the leaf's, PEM where a path belongs, half a section"
    )
    func refusedConfigurations() async throws {
        let server = try Authority("Companion CA")
        let files = try Files(server: server, proxies: try Authority("Proxy CA"))
        defer { files.remove() }
        func refusal(_ tls: ServerConfiguration.TLS) async -> String {
            do {
                let companion = try await Companion.start(ServerConfiguration(port: 0, tls: tls), logger: Self.quiet)
                await companion.stop()
                return "started"
            } catch let error as SwitchbackError {
                return error.code == .invalidConfiguration ? error.message : "\(error.code): \(error.message)"
            } catch {
                return "\(error)"
            }
        }
        let missing = await refusal(.init(certificateChainFile: files.directory.appendingPathComponent("none.pem").path, privateKeyFile: files.key))
        #expect(missing.contains("tls.certificateChainFile") && missing.contains("could not be read"), "\(missing)")
        let otherKey = files.directory.appendingPathComponent("other.pem").path
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: otherKey, atomically: true, encoding: .utf8)
        let mismatched = await refusal(.init(certificateChainFile: files.chain, privateKeyFile: otherKey))
        #expect(mismatched.contains("could not be used together"), "\(mismatched)")
        let pastedKey = P256.Signing.PrivateKey().pemRepresentation
        let pasted = await refusal(.init(certificateChainFile: files.chain, privateKeyFile: pastedKey))
        #expect(pasted.contains("tls.privateKeyFile holds PEM text") && !pasted.contains("BEGIN"), "\(pasted)")
        let notPEM = await refusal(.init(certificateChainFile: files.chain, privateKeyFile: files.key, clientCertificateAuthoritiesFile: files.key))
        #expect(notPEM.contains("tls.clientCertificateAuthoritiesFile"), "\(notPEM)")
        let half = await refusal(.init(certificateChainFile: files.chain))
        #expect(half.contains("tls needs certificateChainFile and privateKeyFile"), "\(half)")
    }

    @Test("the environment turns tls on: SWITCHBACK_TLS_CERTIFICATE_CHAIN_FILE, _PRIVATE_KEY_FILE, _CLIENT_CERTIFICATE_AUTHORITIES_FILE")
    func environment() async throws {
        let names = ServerConfiguration.settings.filter { $0.key.hasPrefix("tls.") }.map(\.environmentName).sorted()
        #expect(
            names == [
                "SWITCHBACK_TLS_CERTIFICATE_CHAIN_FILE", "SWITCHBACK_TLS_CLIENT_CERTIFICATE_AUTHORITIES_FILE", "SWITCHBACK_TLS_PRIVATE_KEY_FILE",
            ])
        let server = try Authority("Companion CA")
        let files = try Files(server: server, proxies: try Authority("Proxy CA"))
        defer { files.remove() }
        let configuration = try await ServerConfiguration.load(
            .init(
                file: nil,
                environment: [
                    "SWITCHBACK_TLS_CERTIFICATE_CHAIN_FILE": files.chain, "SWITCHBACK_TLS_PRIVATE_KEY_FILE": files.key,
                    "SWITCHBACK_TLS_CLIENT_CERTIFICATE_AUTHORITIES_FILE": files.clientAuthorities,
                ], secretsDirectory: nil))
        #expect(
            configuration.tls
                == .init(certificateChainFile: files.chain, privateKeyFile: files.key, clientCertificateAuthoritiesFile: files.clientAuthorities))
    }
}
