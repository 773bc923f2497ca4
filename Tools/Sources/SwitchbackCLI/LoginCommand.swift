import ArgumentParser
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
@_spi(SwitchbackInternals) import Switchback

/// `switchback login`: signs in against any OpenID provider from a terminal, with the whole client
/// (discovery, PAR, PKCE, `iss`, private_key_jwt, DPoP, encrypted ID tokens, every ID-token check), the
/// way a developer checks a provider registration before writing app code. The redirect is the RFC 8252
/// loopback `http://127.0.0.1:PORT/callback`, or a registered https redirect URI whose address the user
/// pastes back. `--provider` applies a preset's rules. Prints the validated claims as JSON; never a token.
///
/// The browser is handed a file in a directory only this user can read, which forwards to the
/// authorization URL: the URL (its `state`, `nonce` and PKCE challenge, or PAR's `request_uri`) never
/// appears in a process's arguments, where another local user could read it and finish a sign-in of
/// their own at this user's loopback listener.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in against an OpenID provider from the terminal and print the validated claims as JSON.",
        discussion: """
            Register http://127.0.0.1:PORT/callback with the provider (or give --redirect-port for a fixed one), or \
            give a registered https redirect URI with --redirect-uri and paste the address the browser ends on. \
            The browser command is given a private file that forwards to the authorization URL, never the URL \
            itself. The loopback listener takes only an answer carrying this sign-in's state, on 127.0.0.1. \
            The claims go to stdout (exit 0), a typed error to stderr (exit 1). No token is ever printed.
            """
    )

    @Option(help: "The provider's issuer (its discovery document is fetched; with --provider uaepass, the base of its documented endpoints).")
    var issuer: String?

    @Option(
        help:
            "Apply a preset's rules: \(ProviderChoice.allValueStrings.joined(separator: ", ")) (singpass: PAR, DPoP, the FAPI issuer and Login's context; uaepass: the documented endpoints and scope, the identity from userinfo)."
    )
    var provider: ProviderChoice = .generic

    @Option(help: "With --provider singpass or uaepass and no --issuer: production or staging.")
    var environment: EnvironmentChoice = .production

    @Option(name: .customLong("client-id"), help: "The client ID registered with the provider.")
    var clientID: String

    @Option(
        name: .customLong("client-secret"),
        help:
            "A client secret (client_secret_basic). Prefer SWITCHBACK_CLIENT_SECRET in the environment: a command line shows in ps and the shell's history."
    )
    var clientSecret: String?

    @Option(name: .customLong("private-key"), help: "A PEM file with the private_key_jwt key (ES256, ES384, ES512 or RS256, told apart by the key).")
    var privateKey: String?

    @Option(name: .customLong("key-id"), help: "The kid of the private_key_jwt key.")
    var keyID: String?

    @Option(name: .customLong("decryption-key"), help: "A PEM file with the private key the provider encrypts ID tokens to (EC or RSA).")
    var decryptionKey: String?

    @Option(help: "Scopes, space-separated (default: the preset's, else openid); openid is added when the identity is an ID token.")
    var scope: String?

    @Option(name: .customLong("acr-values"), help: "acr_values to request, space-separated.")
    var acrValues: String?

    @Option(name: .customLong("login-hint"), help: "A login_hint.")
    var loginHint: String?

    @Flag(help: "Bind the code and tokens to a DPoP key made for this sign-in (RFC 9449).")
    var dpop = false

    @Option(help: "Pushed authorization requests: auto (when offered), always, never.")
    var par: PARChoice = .auto

    @Option(name: .customLong("redirect-port"), help: "The loopback port of the redirect URI (0 picks a free one).")
    var redirectPort: Int = 0

    @Option(
        name: .customLong("redirect-uri"),
        help: "A registered redirect URI that is not this machine's loopback (Singpass registers https ones); paste the address the browser ends on.")
    var redirectURI: String?

    @Option(
        name: .customLong("browser-command"),
        help: "The command that opens the authorization URL, given as its last argument (default: the desktop's opener).")
    var browserCommand: String?

    @Option(help: "Seconds to wait for the provider's answer.")
    var timeout: Double = 300

    enum PARChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never

        var policy: ClientConfiguration.PARPolicy {
            switch self {
            case .auto: .whenOffered
            case .always: .always
            case .never: .never
            }
        }
    }

    func validate() throws {
        guard clientSecret == nil || privateKey == nil else { throw ValidationError("give --client-secret or --private-key, not both") }
        guard issuer != nil || provider.defaultIssuer(environment) != nil else {
            throw ValidationError("--issuer is required with --provider \(provider.preset.name)")
        }
        if let redirectURI {
            // The code travels in this URL: https, or http only to this machine.
            guard let url = URL(string: redirectURI), let scheme = url.scheme?.lowercased(), url.host != nil, url.fragment == nil,
                scheme == "https" || (scheme == "http" && EndpointSecurity.isLoopback(url.host))
            else {
                throw ValidationError("--redirect-uri must be an https URL (http only on loopback) without a fragment")
            }
            guard redirectPort == 0 else { throw ValidationError("give --redirect-uri or --redirect-port, not both") }
        }
        guard (0...65535).contains(redirectPort) else { throw ValidationError("--redirect-port must be 0 to 65535") }
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be between 0 and 86400 seconds") }
    }

    func run() async throws {
        do {
            let claims = try await signIn()
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(claims), as: UTF8.self))
        } catch let error as SwitchbackError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    private func signIn() async throws -> [String: JSONValue] {
        var logger = Logger(label: "switchback.login")
        logger.logLevel = .error
        let rules = provider.rules
        let issuer = self.issuer ?? provider.defaultIssuer(environment) ?? ""
        var listener: LoopbackRedirect?
        let redirect: URL
        if let given = redirectURI.flatMap(URL.init(string:)) {
            redirect = given
        } else {
            let started = try await LoopbackRedirect.start(port: redirectPort, logger: logger)
            listener = started
            redirect = started.redirectURI
        }
        defer { if let listener { Task { await listener.stop() } } }
        let source: ProviderSource
        if rules.documentedEndpoints {
            guard let base = URL(string: issuer) else { throw SwitchbackError(.invalidConfiguration, "--issuer is not a URL") }
            source = .static(.uaePass(base: base))
        } else {
            source = .discovery(issuer: issuer)
        }
        let client = OIDCClient(configuration: try await clientConfiguration(redirectURI: redirect, rules: rules), provider: source, logger: logger)
        var options = try await rules.options(userScopes: scope)
        if let loginHint { options.loginHint = loginHint }
        options.acrValues += acrValues.map { $0.split(separator: " ").map(String.init) } ?? []
        let session = try await client.prepareAuthorization(options)
        if let key = session.dpopKey {
            // The thumbprint is public (bound tokens carry it as cnf.jkt); the key itself dies with the command.
            FileHandle.standardError.write(Data("The code and tokens are bound to a DPoP key made for this sign-in (jkt \(key.thumbprint)).\n".utf8))
        }
        let page = try BrowserHandOff(forwardingTo: session.authorizationURL)
        let interruptions = page.removedOnInterrupt()
        defer {
            interruptions.forEach { $0.cancel() }
            page.remove()
        }
        let callback: AuthorizationCallback
        if let listener {
            FileHandle.standardError.write(Data("Waiting for the provider at \(listener.redirectURI.absoluteString) (opening the browser)…\n".utf8))
            try openBrowser(page.url)
            callback = try await listener.callback(state: session.state, timeout: timeout)
        } else {
            FileHandle.standardError.write(
                Data(
                    """
                    Opening the browser. The sign-in ends at \(redirect.absoluteString) (the page may not load: that is expected).
                    Copy the whole address from the browser's address bar, paste it here and press Return:

                    """.utf8))
            try openBrowser(page.url)
            callback = .redirect(try await PastedCallback.read(expecting: redirect, timeout: timeout))
        }
        let credential = try await client.completeAuthorization(callback, session: session)
        return try await claims(of: credential, client: client)
    }

    private func clientConfiguration(redirectURI: URL, rules: ProviderChoice.Rules) async throws -> ClientConfiguration {
        let authentication: ClientAuthentication
        if let clientSecret = clientSecret ?? ProcessInfo.processInfo.environment["SWITCHBACK_CLIENT_SECRET"], privateKey == nil {
            authentication = .clientSecretBasic(secret: clientSecret)
        } else if let privateKey {
            let pem = try Self.read(privateKey, what: "private key")
            authentication = .privateKeyJWT(try await Self.signer(pem: pem, keyID: keyID))
        } else {
            authentication = .none
        }
        let decryptionKeys = try decryptionKey.map { [try DecryptionKey(pem: try Self.read($0, what: "decryption key"))] } ?? []
        return ClientConfiguration(
            clientID: clientID, redirectURI: redirectURI, authentication: authentication,
            idTokenSigningAlgorithms: SigningAlgorithms.asymmetric, pushedAuthorization: rules.requiresPAR ? .always : par.policy,
            dpop: dpop || rules.requiresDPoP ? .perSignIn : .off, decryptionKeys: decryptionKeys, identitySource: rules.identitySource
        )
    }

    /// The signer for whichever algorithm the key is for: the EC curves first, then RSA.
    static func signer(pem: String, keyID: String?) async throws -> ClientAssertionSigner {
        for algorithm in [ClientAssertionSigner.Algorithm.es256, .es384, .es512, .rs256] {
            if let signer = try? await ClientAssertionSigner(algorithm: algorithm, privateKeyPEM: pem, keyID: keyID) { return signer }
        }
        throw SwitchbackError(.invalidConfiguration, "the private key is not a PEM EC (P-256, P-384, P-521) or RSA private key")
    }

    static func read(_ path: String, what: String) throws -> String {
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SwitchbackError(.invalidConfiguration, "the \(what) file \(path) could not be read")
        }
    }

    /// The ID token's claims (every one, as signed), or the userinfo answer for a provider without ID tokens.
    private func claims(of credential: Credential, client: OIDCClient) async throws -> [String: JSONValue] {
        if let idToken = credential.idToken {
            let validator = try await client.idTokenValidator()
            // Already validated; decoded again only to print every claim, including those the core does not model.
            let parts = idToken.split(separator: ".")
            guard parts.count == 3, let payload = Base64URL.decode(parts[1]),
                case .object(let claims) = try JSONDecoder().decode(JSONValue.self, from: payload)
            else {
                throw SwitchbackError(.idTokenMalformed, "the validated ID token could not be read again (\(validator.issuer))")
            }
            return claims
        }
        return credential.userInfoClaims ?? [:]
    }

    private func openBrowser(_ url: URL) throws {
        let words = browserCommand.map { $0.split(separator: " ").map(String.init) } ?? Self.defaultOpener
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = words + [url.absoluteString]
        process.standardOutput = FileHandle.standardError
        do {
            try process.run()
        } catch {
            throw SwitchbackError(.userAgentFailed, "the browser command \(words.first ?? "?") could not be started")
        }
    }

    static var defaultOpener: [String] {
        #if os(macOS)
            ["open"]
        #else
            ["xdg-open"]
        #endif
    }
}

/// The RFC 8252 loopback redirect: `http://127.0.0.1:PORT/callback`, answering the first request there
/// (GET with a query, or a form_post) and keeping its URL for the client.
actor LoopbackRedirect {
    let redirectURI: URL
    private let group: ServiceGroup
    private let server: Task<Void, any Error>
    private let received: AsyncStream<AuthorizationCallback>

    private init(redirectURI: URL, group: ServiceGroup, server: Task<Void, any Error>, received: AsyncStream<AuthorizationCallback>) {
        self.redirectURI = redirectURI
        self.group = group
        self.server = server
        self.received = received
    }

    static func start(port: Int, logger: Logger) async throws -> LoopbackRedirect {
        let (callbacks, delivery) = AsyncStream<AuthorizationCallback>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let (ports, bound) = AsyncStream<Int>.makeStream()
        let router = Router()
        let page =
            "<!doctype html><title>Switchback login</title><p>The provider's answer reached the terminal, which says whether it signed in. You can close this window.</p>"
        router.get("/callback") { request, _ in
            // The Host header names the port; only the loopback address is listened on.
            if let url = URL(string: "http://127.0.0.1:\(Self.port(request))\(request.uri.description)") { delivery.yield(.redirect(url)) }
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: page)))
        }
        router.post("/callback") { request, _ in
            var request = request
            let body = try await request.collectBody(upTo: 64 * 1024)
            if let url = URL(string: "http://127.0.0.1:\(Self.port(request))/callback") {
                delivery.yield(.formPost(url, body: Data(String(buffer: body).utf8)))
            }
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: page)))
        }
        let app = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "switchback-login"),
            onServerRunning: { channel in
                bound.yield(channel.localAddress?.port ?? port)
                bound.finish()
            },
            logger: logger
        )
        let group = ServiceGroup(services: [app], logger: logger)
        let server = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let actual = await iterator.next(), let redirectURI = URL(string: "http://127.0.0.1:\(actual)/callback") else {
            server.cancel()
            throw SwitchbackError(.invalidConfiguration, "could not listen on 127.0.0.1:\(port)")
        }
        return LoopbackRedirect(redirectURI: redirectURI, group: group, server: server, received: callbacks)
    }

    private static func port(_ request: Request) -> Int {
        request.head.authority.flatMap { $0.split(separator: ":").last.flatMap { Int($0) } } ?? 80
    }

    /// The provider's answer for `state` (answers for any other state are ignored), or
    /// ``SwitchbackError/Code/timedOut``.
    func callback(state: String, timeout: Double) async throws -> AuthorizationCallback {
        let received = self.received
        return try await withThrowingTaskGroup(of: AuthorizationCallback?.self) { group in
            group.addTask {
                for await callback in received where Self.state(of: callback) == state { return callback }
                return nil
            }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(timeout * 1_000_000_000))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let callback = first else {
                throw SwitchbackError(.timedOut, "the provider did not answer at the loopback redirect within \(Int(timeout)) s")
            }
            return callback
        }
    }

    private static func state(of callback: AuthorizationCallback) -> String? {
        let encoded: String?
        switch callback {
        case .redirect(let url): encoded = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery
        case .formPost(_, let body): encoded = String(decoding: body, as: UTF8.self)
        }
        return FormEncoding.decode(encoded ?? "", plusIsSpace: true)?.first { $0.0 == "state" }?.1
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await server.result
    }
}
