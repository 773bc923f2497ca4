import Foundation
import NIOSSL
@_spi(SwitchbackInternals) import Switchback

extension ServerConfiguration.TLS {
    /// The public listener's TLS: TLS 1.2 or later, HTTP/1.1 by ALPN, and with
    /// ``clientCertificateAuthoritiesFile`` a client certificate required and verified against those
    /// authorities alone (not the system's). Every problem names its setting, never a file's content.
    func serverConfiguration() throws -> TLSConfiguration {
        func read<T>(_ setting: String, _ path: String, _ load: (String) throws -> T) throws -> T {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SwitchbackError(.invalidConfiguration, "tls.\(setting): \(path.prefix(200)) could not be read")
            }
            do {
                return try load(path)
            } catch {
                throw SwitchbackError(.invalidConfiguration, "tls.\(setting): \(path.prefix(200)) holds no usable PEM")
            }
        }
        let chain = try read("certificateChainFile", certificateChainFile) { try NIOSSLCertificate.fromPEMFile($0) }
        guard !chain.isEmpty else {
            throw SwitchbackError(.invalidConfiguration, "tls.certificateChainFile: \(certificateChainFile.prefix(200)) holds no certificate")
        }
        let key = try read("privateKeyFile", privateKeyFile) { try NIOSSLPrivateKey(file: $0, format: .pem) }
        var configuration: TLSConfiguration
        if let authoritiesFile = clientCertificateAuthoritiesFile {
            let authorities = try read("clientCertificateAuthoritiesFile", authoritiesFile) { try NIOSSLCertificate.fromPEMFile($0) }
            guard !authorities.isEmpty else {
                throw SwitchbackError(
                    .invalidConfiguration, "tls.clientCertificateAuthoritiesFile: \(authoritiesFile.prefix(200)) holds no certificate")
            }
            configuration = .makeServerConfigurationWithMTLS(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key), trustRoots: .certificates(authorities))
            // The proxy is named by its certificate, not by a host name the server could check.
            configuration.certificateVerification = .noHostnameVerification
        } else {
            configuration = .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        }
        configuration.minimumTLSVersion = .tlsv12
        // TLS 1.2 only with forward secrecy and AEAD (ECDHE with AES-GCM or ChaCha20-Poly1305): no RSA key
        // exchange, no CBC. TLS 1.3's suites are all of that kind and are not set here.
        configuration.cipherSuiteValues = [
            .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
            .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        ]
        configuration.applicationProtocols = ["http/1.1"]
        // A certificate that does not belong to the key fails here, at start, rather than at the first handshake.
        do {
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw SwitchbackError(
                .invalidConfiguration, "tls: the certificate chain and the private key could not be used together (is the key the leaf's?)")
        }
        return configuration
    }
}
