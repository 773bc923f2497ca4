import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

extension ServerConfiguration {
    /// Refuses what would be unsafe or cannot work.
    public func validate() throws {
        func fail(_ message: String) -> SwitchbackError { SwitchbackError(.invalidConfiguration, message) }
        guard (0...65535).contains(port) else { throw fail("port must be 0…65535") }
        if let publicURL {
            guard let url = URL(string: publicURL), EndpointSecurity.isAcceptable(url), url.query == nil, url.fragment == nil else {
                throw fail("publicURL must be an https URL (http only on loopback) without query or fragment")
            }
        }
        let needsProvider = exchange != nil || permission != nil || bridge != nil || handOff != nil || completion != nil
        if needsProvider, provider == nil { throw fail("the exchange, permission, bridge, handOff and completion routes need a provider section") }
        if let provider {
            guard let issuer = URL(string: provider.issuer), EndpointSecurity.isAcceptable(issuer) else {
                throw fail("provider.issuer must be an https URL")
            }
            guard !provider.clientID.isEmpty else { throw fail("provider.clientID is empty") }
            guard [provider.clientSecret, provider.privateKey, provider.privateKeyFile].compactMap({ $0 }).count == 1 else {
                throw fail("give the provider one of clientSecret (client_secret_basic), privateKey or privateKeyFile (private_key_jwt)")
            }
            guard provider.decryptionKey == nil || provider.decryptionKeyFile == nil else {
                throw fail("give the provider decryptionKey or decryptionKeyFile, not both")
            }
            // A key pasted where its path belongs would be printed by --print-config and repeated by the
            // file's read error: refused without repeating it.
            for (setting, path, inline) in [
                ("privateKeyFile", provider.privateKeyFile, "privateKey"), ("decryptionKeyFile", provider.decryptionKeyFile, "decryptionKey"),
            ] {
                if let path, path.contains("\n") || path.contains("-----BEGIN") {
                    throw fail("provider.\(setting) holds a key, not a path: give the PEM text as provider.\(inline)")
                }
            }
            if provider.clientSecret == nil, ClientAssertionSigner.Algorithm(rawValue: provider.keyAlgorithm ?? "ES256") == nil {
                throw fail("provider.keyAlgorithm must be one of \(ClientAssertionSigner.Algorithm.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if let metadata = provider.metadata, metadata.issuer != provider.issuer {
                throw fail("provider.metadata.issuer must equal provider.issuer")
            }
            if let reserved = provider.forwardedParameters.first(where: AuthorizationOptions.reservedNames.contains) {
                throw fail("provider.forwardedParameters cannot hold \(reserved): the server sets it")
            }
            if let reserved = provider.authorizationParameters.keys.sorted().first(where: AuthorizationOptions.reservedNames.contains) {
                throw fail("provider.authorizationParameters cannot hold \(reserved): the server sets it")
            }
            do {
                try SingpassAuthenticationContext.check(
                    parameters: provider.authorizationParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
            } catch let error as SwitchbackError {
                throw fail("provider.authorizationParameters: \(error.message)")
            }
        }
        if let exchange {
            if exchange.returns == .tokens, provider?.dpop == true {
                throw fail(
                    "exchange.returns tokens with provider.dpop: the tokens are bound to a key of this server's sign-in, of no use to the app; return a session"
                )
            }
            guard !exchange.redirectURIs.isEmpty, exchange.redirectURIs.allSatisfy({ URL(string: $0)?.scheme != nil }) else {
                throw fail("exchange.redirectURIs must list the app's absolute redirect URIs")
            }
        }
        if let permission {
            guard let server = URL(string: permission.server), EndpointSecurity.isAcceptable(server) else {
                throw fail("permission.server must be the biometrics server's https issuer URL")
            }
            guard !permission.appCallbackURIs.isEmpty,
                permission.appCallbackURIs.allSatisfy({ URL(string: $0).map(EndpointSecurity.isAcceptable) ?? false })
            else {
                throw fail("permission.appCallbackURIs must list https universal links")
            }
            guard (1...64).contains(permission.type.utf8.count), permission.type.allSatisfy({ $0.isLetter || $0.isNumber || ".-_".contains($0) })
            else {
                throw fail("permission.type must name BankID's permission type (payment.v1, …)")
            }
            guard permission.backendToken.count >= 32 else {
                throw fail(
                    "permission.backendToken must be a secret of at least 32 characters: your backend sends it to register each statement (openssl rand -base64 32 makes one)"
                )
            }
            guard permission.lifetime >= 10, permission.lifetime <= 3600 else { throw fail("permission.lifetime must be 10…3600 seconds") }
            if let issuer = provider.map({ BankIDNorwayEnvironment.ofIssuer($0.issuer) }) ?? nil,
                let server = BankIDNorwayEnvironment.ofBiometricsServer(permission.server), issuer != server
            {
                throw fail(
                    "permission.server is BankID's \(server.rawValue) biometrics server but provider.issuer is its \(issuer.rawValue) issuer; each accepts only its own environment's tokens: use \(issuer.biometricsServer)"
                )
            }
        }
        if let bridge {
            guard !bridge.schemes.isEmpty, bridge.schemes.allSatisfy(Self.isDeepLinkScheme) else {
                throw fail("bridge.schemes must list lower-case custom schemes (not http, https, javascript, data or file)")
            }
            guard bridge.codeLifetime > 0, bridge.codeLifetime <= 600 else { throw fail("bridge.codeLifetime must be 1…600 seconds") }
        }
        if let handOff {
            _ = try RedirectAllowList(handOff.allowedRedirects)
            guard !handOff.allowedRedirects.isEmpty else { throw fail("handOff.allowedRedirects is empty: no redeemed code could go anywhere") }
            guard handOff.codeLifetime > 0, handOff.codeLifetime <= 600 else { throw fail("handOff.codeLifetime must be 1…600 seconds") }
            if handOff.validation == .jwt, handOff.audience?.isEmpty ?? true { throw fail("handOff.audience is required for jwt validation") }
            if handOff.audience?.isEmpty ?? true, handOff.requiredScope?.isEmpty ?? true {
                throw fail(
                    "handOff needs audience (this server as the token's aud), requiredScope (a scope granted for hand-off), or both: "
                        + "otherwise any access token of the app, meant for any API, buys a web session")
            }
            if let scope = handOff.requiredScope, scope.isEmpty || scope.contains(" ") {
                throw fail("handOff.requiredScope is one scope, without spaces")
            }
            if let clients = handOff.acceptedClients, clients.isEmpty || clients.contains(where: \.isEmpty) {
                throw fail("handOff.acceptedClients must list client IDs (leave it out to accept provider.clientID only)")
            }
        }
        if let completion {
            guard let link = URL(string: completion.appLink),
                link.scheme == "https" || (link.scheme == "http" && EndpointSecurity.isLoopback(link.host ?? ""))
            else {
                throw fail("completion.appLink must be an https universal link")
            }
            guard completion.maximumWait > 0, completion.maximumWait <= 120 else { throw fail("completion.maximumWait must be 1…120 seconds") }
            if let recheck = completion.storeRecheck, !(0.1...300).contains(recheck) {
                throw fail("completion.storeRecheck must be 0.1…300 seconds")
            }
        }
        if let responsePage {
            guard let link = URL(string: responsePage.appLink), let host = link.host?.lowercased(), !host.isEmpty,
                link.scheme == "https" || (link.scheme == "http" && EndpointSecurity.isLoopback(host)), link.query == nil, link.fragment == nil
            else {
                throw fail("responsePage.appLink must be an https universal link without a query or fragment")
            }
            if let publicHost = publicURL.flatMap(URL.init(string:))?.host?.lowercased(), publicHost == host {
                throw fail("responsePage.appLink is on this server's host \(host): a button to its own host stays in the browser")
            }
        }
        guard session.lifetime > 0 else { throw fail("session.lifetime must be positive") }
        guard ["Lax", "Strict"].contains(session.sameSite) else { throw fail("session.sameSite must be Lax or Strict") }
        guard !session.cookieName.isEmpty, session.cookieName.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else {
            throw fail("session.cookieName must be letters, digits, _ or -")
        }
        guard session.cookiePath.hasPrefix("/"), !session.cookiePath.contains(";") else {
            throw fail("session.cookiePath must start with / and hold no ;")
        }
        guard (0...1_000_000).contains(limits.startsPerMinutePerAddress), (0...100_000_000).contains(limits.startsPerMinute),
            limits.pendingAuthorizations > 0, limits.waitingStatusRequests > 0
        else {
            throw fail(
                "limits must not be negative (startsPerMinutePerAddress at most 1000000, startsPerMinute at most 100000000), and pendingAuthorizations and waitingStatusRequests must be positive"
            )
        }
        if let header = limits.clientAddressHeader, header.isEmpty || !header.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        {
            throw fail("limits.clientAddressHeader must be a header name")
        }
        guard (1...10).contains(limits.trustedHops) else { throw fail("limits.trustedHops must be 1…10") }
        if let appAttest {
            guard !appAttest.appIDs.isEmpty, appAttest.appIDs.allSatisfy({ $0.split(separator: ".").count >= 2 && !$0.contains(" ") }) else {
                throw fail("appAttest.appIDs must list TEAMID.bundle.id values")
            }
            guard ["production", "development"].contains(appAttest.environment) else {
                throw fail("appAttest.environment must be production or development")
            }
            guard appAttest.keyLifetime >= 86400 else { throw fail("appAttest.keyLifetime must be at least a day (86400 seconds)") }
        }
        if let playIntegrity {
            let packageName = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/
            guard !playIntegrity.packageNames.isEmpty, playIntegrity.packageNames.allSatisfy({ $0.wholeMatch(of: packageName) != nil }) else {
                throw fail("playIntegrity.packageNames must list Android package names (com.example.app)")
            }
            guard playIntegrity.certificateDigests.allSatisfy({ Base64URL.decode(PlayIntegrityVerifier.unpadded($0))?.count == 32 }) else {
                throw fail("playIntegrity.certificateDigests must be base64url SHA-256 digests, as the verdict writes them")
            }
            let labels: Set = ["MEETS_DEVICE_INTEGRITY", "MEETS_BASIC_INTEGRITY", "MEETS_STRONG_INTEGRITY", "MEETS_VIRTUAL_INTEGRITY"]
            guard !playIntegrity.deviceVerdicts.isEmpty, playIntegrity.deviceVerdicts.allSatisfy(labels.contains) else {
                throw fail("playIntegrity.deviceVerdicts must name at least one of \(labels.sorted().joined(separator: ", "))")
            }
            guard (10...3600).contains(playIntegrity.maximumAge) else { throw fail("playIntegrity.maximumAge must be 10…3600 seconds") }
            if let appAttest, appAttest.required != playIntegrity.required {
                // A request with neither cannot be told iOS from Android, so one answer must hold for both.
                throw fail("appAttest.required and playIntegrity.required must agree: a start with neither cannot be told apart")
            }
            do {
                _ = try PlayIntegrityVerifier(configuration: playIntegrity)
            } catch let error as SwitchbackError {
                throw fail(error.message)
            }
        }
        if let wallet {
            guard let link = URL(string: wallet.appLink), link.scheme == "https", link.host != nil, link.fragment == nil else {
                throw fail("wallet.appLink must be an https link of the app, without a fragment")
            }
            guard ["openid4vp", "haip-vp"].contains(wallet.scheme) else { throw fail("wallet.scheme must be openid4vp or haip-vp") }
            switch wallet.clientIdentifierPrefix {
            case "x509_hash": break
            case "x509_san_dns":
                guard let url = publicURL.flatMap(URL.init(string:)), url.scheme == "https", url.host != nil else {
                    throw fail("wallet.clientIdentifierPrefix x509_san_dns needs an https publicURL, whose host the verifier's certificate names")
                }
            case "redirect_uri":
                // Unsigned requests: anyone on the path could change what the wallet is asked. Development only.
                let loopback: Set<String> = ["127.0.0.1", "::1", "localhost"]
                guard loopback.contains(host), publicURL.flatMap(URL.init(string:)).flatMap(\.host).map(loopback.contains) ?? true else {
                    throw fail("wallet.clientIdentifierPrefix redirect_uri sends unsigned requests: only for development, on a loopback host")
                }
            default: throw fail("wallet.clientIdentifierPrefix must be x509_hash, x509_san_dns or redirect_uri")
            }
            // The wallet waits for the verdict: a minute is beyond what a wallet's HTTP client is likely to wait.
            guard wallet.statusListTimeout.isFinite, wallet.statusListTimeout >= 0.1, wallet.statusListTimeout <= 60 else {
                throw fail("wallet.statusListTimeout must be from 0.1 to 60 seconds")
            }
            try wallet.query.validate()
            let formats = Set(wallet.query.credentials.map(\.format))
            guard !formats.contains("dc+sd-jwt") || wallet.issuerTrustAnchorsFile != nil else {
                throw fail("wallet.issuerTrustAnchorsFile is required when the query asks for dc+sd-jwt")
            }
            guard !formats.contains("mso_mdoc") || wallet.mdocTrustAnchorsFile != nil else {
                throw fail("wallet.mdocTrustAnchorsFile is required when the query asks for mso_mdoc")
            }
        }
        if let appleIdentity {
            guard !appleIdentity.merchantIdentifier.isEmpty, !appleIdentity.teamIdentifier.isEmpty else {
                throw fail("appleIdentity needs merchantIdentifier and teamIdentifier")
            }
            guard !appleIdentity.documentTypes.isEmpty else { throw fail("appleIdentity.documentTypes names no document type") }
        }
        if let metrics {
            guard (0...65535).contains(metrics.port), !metrics.host.isEmpty else { throw fail("metrics needs a host and a port (0…65535)") }
            if metrics.port != 0, metrics.port == port { throw fail("metrics.port must differ from port: metrics are never served publicly") }
        }
        if let tls {
            guard !tls.certificateChainFile.isEmpty, !tls.privateKeyFile.isEmpty else {
                throw fail("tls needs certificateChainFile and privateKeyFile")
            }
            for (setting, path) in [
                ("certificateChainFile", tls.certificateChainFile), ("privateKeyFile", tls.privateKeyFile),
                ("clientCertificateAuthoritiesFile", tls.clientCertificateAuthoritiesFile ?? ""),
            ] where path.contains("\n") || path.contains("-----BEGIN") {
                throw fail("tls.\(setting) holds PEM text, not a path: give the path of a file that holds it")
            }
        }
        if !recordKeys.isEmpty { _ = try RecordKeys(recordKeys) }
        if postgresURL != nil, recordKeys.isEmpty {
            throw fail(
                "recordKeys is required with postgresURL: every instance seals the shared records under the same server-held key, so that whoever can write to the database cannot make one (openssl rand -base64 32 makes one)"
            )
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw fail("logLevel must be trace, debug, info, notice, warning, error or critical, not \(logLevel.prefix(20))")
        }
        guard limits.shutdownGrace >= 0, limits.shutdownGrace <= 300 else { throw fail("limits.shutdownGrace must be 0…300 seconds") }
        guard limits.idleTimeout >= 1, limits.idleTimeout <= 3600 else { throw fail("limits.idleTimeout must be 1…3600 seconds") }
        guard limits.bodyTimeout >= 1, limits.bodyTimeout <= 3600 else { throw fail("limits.bodyTimeout must be 1…3600 seconds") }
        guard limits.writeTimeout >= 1, limits.writeTimeout <= 3600 else { throw fail("limits.writeTimeout must be 1…3600 seconds") }
        guard limits.maxConnections == 0 || limits.maxConnections > limits.waitingStatusRequests else {
            throw fail("limits.maxConnections must be 0 (no cap) or more than limits.waitingStatusRequests: each waiting request holds a connection")
        }
        for proxy in limits.trustedProxies {
            guard let network = ClientAddress.Network(proxy) else {
                throw fail("limits.trustedProxies: \(proxy.prefix(60)) is not an address or a network (a.b.c.d/n, v6/n)")
            }
            guard network.prefixLength > 0 else {
                throw fail(
                    "limits.trustedProxies: \(proxy) trusts every address on the Internet to write the client's address, so any client could choose its own; name your load balancers' addresses or subnet"
                )
            }
        }
        if limits.clientAddressHeader != nil, limits.trustedProxies.isEmpty {
            throw fail("limits.trustedProxies must name your proxies' addresses: the header is read only on their connections")
        }
        if limits.clientAddressHeader != nil, limits.directClients {
            throw fail("limits.directClients and limits.clientAddressHeader contradict each other: choose one")
        }
        if !EndpointSecurity.isLoopback(host), limits.clientAddressHeader == nil, !limits.directClients {
            // Behind a proxy, every client would be the proxy's address: 30 starts a minute would lock everyone out.
            throw fail(
                "the server listens on \(host): set limits.clientAddressHeader and limits.trustedProxies when it is behind a proxy, or limits.directClients: true when clients reach it directly"
            )
        }
        // Behind a proxy the browser's origin and a DPoP proof's htu are the public URL, not the bound address.
        if handOff != nil, publicURL == nil, !EndpointSecurity.isLoopback(host) {
            throw fail("publicURL is required with handOff when the server listens beyond loopback: the redeem form's origin and DPoP proofs name it")
        }
        for association in associations { try association.validate() }
        if let postgresURL {
            do {
                _ = try PostgresCompanionStore.configuration(postgresURL)
            } catch let error as SwitchbackError {
                throw fail("postgresURL: \(error.message)")
            }
        }
    }

    static func isDeepLinkScheme(_ scheme: String) -> Bool {
        guard let first = scheme.unicodeScalars.first, ("a"..."z").contains(first),
            scheme.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "+" || $0 == "-" || $0 == "." })
        else { return false }
        return !["http", "https", "javascript", "data", "file", "about", "blob", "vbscript"].contains(scheme)
    }
}
