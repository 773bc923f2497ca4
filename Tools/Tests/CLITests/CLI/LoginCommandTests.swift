import Crypto
import Glibc
import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// `switchback login`, run as the built executable against the emulator and against glewlwyd, with a
/// scripted browser given as `--browser-command` (the user's part: signing in at the provider's page).
@Suite("switchback login")
struct LoginCommandTests {
    /// The user at the emulator's password page: load the authorization URL (its last argument), post the
    /// login form, and follow the provider's redirect to the loopback callback.
    static let emulatorBrowser =
        handOffReader + """
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            page = opener.open(url).read().decode()
            request = re.search(r'name="request" value="([^"]+)"', page).group(1)
            form = urllib.parse.urlencode({"request": request, "username": "alice", "password": "Secret-123"}).encode()
            opener.open(urllib.parse.urljoin(url, "/login"), form).read()
            """

    /// The browser's part of the hand-off: its argument is a private page (never the authorization URL
    /// itself), which it reads for the URL to continue to; `arg` and `url` are left for what follows.
    static let handOffReader = """
        import html, os, re, sys, urllib.parse, urllib.request, http.cookiejar
        arg = sys.argv[-1]
        page = open(urllib.parse.unquote(urllib.parse.urlsplit(arg).path)).read()
        url = html.unescape(re.search(r'id="continue" href="([^"]+)"', page).group(1))

        """

    /// The emulator's defaults, with the RFC 8252 loopback redirect registered for `native-rs`.
    static var loopbackConfiguration: EmulatorConfiguration {
        var configuration = EmulatorConfiguration.defaults
        configuration.clients[0].redirectURIs.append("http://127.0.0.1/callback")
        return configuration
    }

    static func script(_ text: String, name: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-login-\(UUID().uuidString)-\(name)")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    static func login(_ arguments: [String]) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(try VerifyIDTokenCommandTests.executable.path, ["login"] + arguments)
    }

    /// A confidential FAPI client's keys: the JWKS to register (signing and `use: enc`), and the private
    /// keys written where `--private-key` and `--decryption-key` read them.
    struct ClientKeys {
        let jwks: JSONValue
        let directory: URL
        let keyFile: URL
        let decryptionFile: URL

        init() throws {
            let signing = P256.Signing.PrivateKey()
            let encryption = DecryptionKey.generateP256(keyID: "enc-1")
            let signingJWK: JSONValue = .object(
                PublicJWK.p256(signing.publicKey).merging(["kid": .string("sig-1"), "use": .string("sig"), "alg": .string("ES256")]) { $1 })
            jwks = .object(["keys": .array([signingJWK, .object(encryption.publicJWK(algorithm: "ECDH-ES+A256KW"))])])
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-login-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            keyFile = directory.appendingPathComponent("client.pem")
            try signing.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
            decryptionFile = directory.appendingPathComponent("decryption.pem")
            guard case .p256(let key) = encryption.material else { throw CancellationError() }
            try key.pemRepresentation.write(to: decryptionFile, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }

        /// The emulator's registration of a private_key_jwt client with these keys.
        func client(_ clientID: String, redirectURI: String) -> EmulatorConfiguration.Client {
            .init(clientID: clientID, authentication: .privateKeyJWT, redirectURIs: [redirectURI], idTokenAlgorithm: "ES256", jwks: jwks)
        }
    }

    @Test(
        "against the emulator: a public client; a confidential one with private_key_jwt, PAR, DPoP and an encrypted ID token; the claims on stdout, no token anywhere"
    )
    func emulator() async throws {
        let keys = try ClientKeys()
        defer { keys.remove() }
        var configuration = Self.loopbackConfiguration
        configuration.clients.append(keys.client("cli-fapi", redirectURI: "http://127.0.0.1/callback"))
        let (keyFile, decryptionFile) = (keys.keyFile, keys.decryptionFile)
        let browser = try Self.script(Self.emulatorBrowser, name: "browser.py")
        defer { try? FileManager.default.removeItem(atPath: browser) }
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            let public_ = try await Self.login([
                "--issuer", emulator.issuer, "--client-id", "native-rs", "--scope", "openid profile", "--browser-command", "python3 \(browser)",
                "--timeout", "120",
            ])
            #expect(public_.status == 0, "\(public_.stderr)")
            let claims = try JSONDecoder().decode([String: JSONValue].self, from: Data(public_.stdout.utf8))
            #expect(
                claims["sub"] == .string("9b1f7c2e-alice") && claims["aud"] == .string("native-rs") && claims["iss"] == .string(emulator.issuer))

            let fapi = try await Self.login([
                "--issuer", emulator.issuer, "--client-id", "cli-fapi", "--private-key", keyFile.path, "--key-id", "sig-1", "--decryption-key",
                decryptionFile.path,
                "--dpop", "--par", "always", "--browser-command", "python3 \(browser)", "--timeout", "120",
            ])
            #expect(fapi.status == 0, "\(fapi.stderr)")
            let fapiClaims = try JSONDecoder().decode([String: JSONValue].self, from: Data(fapi.stdout.utf8))
            #expect(fapiClaims["aud"] == .string("cli-fapi") && fapiClaims["sub"] == .string("9b1f7c2e-alice"))
            // A JWT is "eyJ" and two dots: "eyJ" alone turns up by chance in the printed random values (the
            // nonce, at_hash, the DPoP key's thumbprint), about once in a thousand runs, as CI once showed.
            let jwt = try Regex(#"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\."#)
            for output in [public_.stdout + public_.stderr, fapi.stdout + fapi.stderr] {
                // On a failure, the line that holds it: which part of the command printed it.
                let line = output.split(separator: "\n").first { $0.contains("access_token") || $0.contains(jwt) }
                #expect(line == nil, "no token is printed: \(line ?? "")")
            }

            // Without the decryption key the encrypted ID token is refused: a typed error on stderr, exit 1.
            let refused = try await Self.login([
                "--issuer", emulator.issuer, "--client-id", "cli-fapi", "--private-key", keyFile.path, "--key-id", "sig-1",
                "--browser-command", "python3 \(browser)", "--timeout", "120",
            ])
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("error: idTokenDecryptionFailed"), "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
        }
    }

    @Test("a callback with another state (a local process or a web page posting first) is ignored; the real one still signs in")
    func foreignCallbackIgnored() async throws {
        let configuration = Self.loopbackConfiguration
        // The "browser" first delivers a forged answer to the loopback port, then signs in for real.
        let browser = try Self.script(
            Self.handOffReader + """
                redirect = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("redirect_uri", [None])[0]
                if redirect: urllib.request.urlopen(redirect + "?code=forged&state=forged").read()
                """ + "\n" + Self.emulatorBrowser, name: "browser.py")
        defer { try? FileManager.default.removeItem(atPath: browser) }
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            let outcome = try await Self.login([
                "--issuer", emulator.issuer, "--client-id", "native-rs", "--par", "never", "--browser-command", "python3 \(browser)", "--timeout",
                "120",
            ])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(outcome.stdout.contains("9b1f7c2e-alice"))
        }
    }

    @Test(
        "a pasted address is taken only on the redirect URI's host, and then only with this sign-in's state: another host or another state is a typed error, exit 1"
    )
    func pastedAddressChecked() async throws {
        let configuration = Self.loopbackConfiguration
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-login-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fifo = directory.appendingPathComponent("paste").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            for (pasted, expected) in [
                ("https://evil.example/callback?code=stolen&state=x", "error: invalidURL"),
                ("http://127.0.0.1:9/callback?code=forged&state=forged", "error: stateMismatch"),
            ] {
                let browser = try Self.script("with open(\"\(fifo)\", \"w\") as paste: paste.write(\"\(pasted)\\n\")", name: "browser.py")
                defer { try? FileManager.default.removeItem(atPath: browser) }
                let outcome = try await Self.loginPasting(
                    [
                        "--issuer", emulator.issuer, "--client-id", "native-rs", "--redirect-uri", "http://127.0.0.1:9/callback",
                        "--browser-command", "python3 \(browser)", "--timeout", "60",
                    ], fifo: fifo)
                #expect(outcome.status == 1 && outcome.stderr.contains(expected), "\(pasted): \(outcome.stderr)")
                #expect(outcome.stdout.isEmpty)
            }
        }
    }

    @Test("--redirect-uri: https, or http only to this machine (the code travels in it); never with --redirect-port")
    func redirectURIChecked() async throws {
        for (uri, extra) in [
            ("http://app.example.com/callback", [String]()), ("https://app.example.com/cb#x", []),
            ("https://app.example.com/cb", ["--redirect-port", "8765"]),
        ] {
            let outcome = try await Self.login(["--issuer", "https://id.example.com", "--client-id", "c", "--redirect-uri", uri] + extra)
            #expect(outcome.status != 0 && outcome.stderr.contains("--redirect-"), "\(uri): \(outcome.stderr)")
        }
    }

    @Test("a browser that never reaches the callback ends with a typed timeout, exit 1")
    func timeout() async throws {
        let configuration = Self.loopbackConfiguration
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            let outcome = try await Self.login([
                "--issuer", emulator.issuer, "--client-id", "native-rs", "--browser-command", "true", "--timeout", "1",
            ])
            #expect(outcome.status == 1)
            #expect(outcome.stderr.contains("error: timedOut"), "\(outcome.stderr)")
        }
    }

    @Test("against glewlwyd, a provider written by others", .enabled(if: Glewlwyd.enabled, Glewlwyd.skipReason))
    func glewlwyd() async throws {
        let peer = try Glewlwyd.require()
        // glewlwyd matches redirect URIs exactly: the loopback callback on a fixed port is registered for this test.
        let port = 47_000 + Int.random(in: 0..<2000)
        try await Glewlwyd.addRedirectURI("http://127.0.0.1:\(port)/callback", client: "native-rs", peer: peer)
        let browser = try Self.script(
            """
            #!/bin/bash
            set -euo pipefail
            url=$(python3 -c 'import html, re, sys, urllib.parse; page = open(urllib.parse.unquote(urllib.parse.urlsplit(sys.argv[1]).path)).read(); print(html.unescape(re.search(r"id=\\"continue\\" href=\\"([^\\"]+)\\"", page).group(1)))' "${@: -1}")
            location=$(bash \(peer.loginScript) "$url")
            curl -s "$location" >/dev/null
            """, name: "browser.sh")
        defer { try? FileManager.default.removeItem(atPath: browser) }
        let outcome = try await Self.login([
            "--issuer", peer.issuer, "--client-id", "native-rs", "--scope", "openid profile email", "--redirect-port", String(port),
            "--browser-command", "bash \(browser)", "--timeout", "120",
        ])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let claims = try JSONDecoder().decode([String: JSONValue].self, from: Data(outcome.stdout.utf8))
        #expect(claims["iss"] == .string(peer.issuer) && claims["aud"] != nil && claims["sub"] != nil)
    }

    @Test(
        "the browser is given a private page (0600, in a 0700 directory) that forwards to the authorization URL: no state, nonce, challenge or request_uri in any process's arguments; the page is gone afterwards"
    )
    func browserArgumentsCarryNoSecret() async throws {
        let configuration = Self.loopbackConfiguration
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-login-\(UUID().uuidString)-argv.json")
        defer { try? FileManager.default.removeItem(at: record) }
        let browser = try Self.script(
            Self.handOffReader + """
                import json, stat
                path = urllib.parse.unquote(urllib.parse.urlsplit(arg).path)
                json.dump({"argv": sys.argv, "file": oct(stat.S_IMODE(os.stat(path).st_mode)), "dir": oct(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)), "path": path, "url": url}, open("\(record.path)", "w"))
                """ + "\n" + Self.emulatorBrowser, name: "browser.py")
        defer { try? FileManager.default.removeItem(atPath: browser) }
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            for par in ["never", "always"] {
                let outcome = try await Self.login([
                    "--issuer", emulator.issuer, "--client-id", "native-rs", "--par", par, "--browser-command", "python3 \(browser)", "--timeout",
                    "120",
                ])
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let seen = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
                let argv = (seen["argv"] as? [String] ?? []).joined(separator: " ")
                #expect(argv.hasSuffix(".html") && argv.contains("file://"), "\(argv)")
                for secret in ["state=", "nonce=", "code_challenge", "request_uri", "client_id"] {
                    #expect(!argv.contains(secret), "\(secret) in \(argv)")
                }
                #expect(seen["file"] as? String == "0o600" && seen["dir"] as? String == "0o700")
                let url = seen["url"] as? String ?? ""
                #expect(
                    url.hasPrefix(emulator.issuer + "/authorize?") && url.contains(par == "never" ? "state=" : "request_uri="),
                    "the page forwards there")
                #expect(!FileManager.default.fileExists(atPath: seen["path"] as? String ?? "/"), "the page is removed after the sign-in")
            }
        }
    }

    /// Runs `switchback login` with standard input read from a FIFO, which a browser script writes the
    /// address it ended on to: the user's paste.
    static func loginPasting(_ arguments: [String], fifo: String) async throws -> ChildProcess.Outcome {
        try await ChildProcess.run(
            "/bin/bash", ["-c", #"exec 3<>"$0"; exec "$1" login "${@:2}" <&3"#, fifo, try VerifyIDTokenCommandTests.executable.path] + arguments)
    }

    /// The user at the Singpass-like emulator: the page's singpass:// link approved in the app, the page
    /// continued, the final redirect (to a host this machine does not serve) pasted into the terminal.
    static func singpassBrowser(issuer: String, fifo: String) -> String {
        handOffReader + """
            class Keep(urllib.request.HTTPRedirectHandler):
                def redirect_request(self, *args): return None
            jar = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
            opener = urllib.request.build_opener(jar, Keep)
            page = opener.open(url).read().decode()
            txn = re.search(r'singpass://auth\\?txn=([A-Za-z0-9_-]+)', page).group(1)
            for action in ["open", "approve"]:
                urllib.request.urlopen("\(issuer)/authenticator/" + action, urllib.parse.urlencode({"txn": txn}).encode()).read()
            follow = html.unescape(re.search(r'id="continue" href="([^"]+)"', page).group(1))
            try:
                opener.open(urllib.parse.urljoin("\(issuer)/", follow))
                raise SystemExit("no redirect")
            except urllib.error.HTTPError as answer:
                location = answer.headers["Location"]
            with open("\(fifo)", "w") as paste: paste.write(location + "\\n")
            """
    }

    @Test(
        "--provider singpass with a registered https redirect against a strict FAPI provider: PAR, DPoP with exp, private_key_jwt, Login's context, an encrypted ID token, iss; the address pasted; two runs prove two DPoP keys"
    )
    func singpassHTTPSRedirect() async throws {
        let keys = try ClientKeys()
        defer { keys.remove() }
        var configuration = EmulatorConfiguration.defaults
        configuration.clients.append(keys.client("cli-singpass", redirectURI: "https://app.example.com/oauth/callback"))
        let (keyFile, decryptionFile) = (keys.keyFile, keys.decryptionFile)
        let fifo = keys.directory.appendingPathComponent("paste").path
        #expect(mkfifo(fifo, 0o600) == 0)
        try await EmulatorHarness.withEmulator(profile: .singpass, configuration: configuration) { emulator in
            let browser = try Self.script(Self.singpassBrowser(issuer: emulator.issuer, fifo: fifo), name: "browser.py")
            defer { try? FileManager.default.removeItem(atPath: browser) }
            var thumbprints: [String] = []
            for _ in 0..<2 {
                let outcome = try await Self.loginPasting(
                    [
                        "--provider", "singpass", "--issuer", emulator.issuer, "--client-id", "cli-singpass", "--private-key", keyFile.path,
                        "--key-id", "sig-1", "--decryption-key", decryptionFile.path, "--redirect-uri", "https://app.example.com/oauth/callback",
                        "--browser-command", "python3 \(browser)", "--timeout", "120",
                    ], fifo: fifo)
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let claims = try JSONDecoder().decode([String: JSONValue].self, from: Data(outcome.stdout.utf8))
                #expect(claims["aud"] == .string("cli-singpass") && claims["iss"] == .string(emulator.issuer))
                #expect(claims["acr"] == .string(Singpass.acr))
                // A JWT ("eyJ" and two dots), not "eyJ" alone, which a random value can hold.
                #expect(!(outcome.stdout + outcome.stderr).contains(try Regex(#"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\."#)), "no token is printed")
                if let range = outcome.stderr.range(of: #"jkt [A-Za-z0-9_-]{43}"#, options: .regularExpression) {
                    thumbprints.append(String(outcome.stderr[range]))
                }
            }
            #expect(thumbprints.count == 2 && Set(thumbprints).count == 2, "two sign-ins, two DPoP keys: \(thumbprints)")
            // Without --provider the same client is refused: no Login context, no DPoP.
            let bare = try await Self.loginPasting(
                [
                    "--issuer", emulator.issuer, "--client-id", "cli-singpass", "--private-key", keyFile.path, "--key-id", "sig-1",
                    "--redirect-uri", "https://app.example.com/oauth/callback", "--browser-command", "true", "--timeout", "5",
                ], fifo: fifo)
            #expect(bare.status == 1 && bare.stderr.contains("error:"), "\(bare.stderr)")
            // A scope Singpass does not allow a Login app (its contract) is refused before any browser opens.
            let profile = try await Self.loginPasting(
                [
                    "--provider", "singpass", "--issuer", emulator.issuer, "--client-id", "cli-singpass", "--private-key", keyFile.path,
                    "--key-id", "sig-1", "--decryption-key", decryptionFile.path, "--redirect-uri", "https://app.example.com/oauth/callback",
                    "--scope", "openid profile", "--browser-command", "false", "--timeout", "5",
                ], fifo: fifo)
            #expect(profile.status == 1 && profile.stderr.contains("not profile"), "\(profile.stderr)")
        }
    }

    @Test("--provider uaepass: the documented endpoints (no discovery), client_secret_basic, the documented scope, the identity from userinfo")
    func uaePass() async throws {
        var configuration = EmulatorConfiguration.defaults
        configuration.clients[2].redirectURIs.append("http://127.0.0.1/callback")
        try await EmulatorHarness.withEmulator(profile: .uaePass(), configuration: configuration) { emulator in
            #expect(configuration.clients[2].clientID == "backend")
            let browser = try Self.script(Self.emulatorBrowser, name: "browser.py")
            defer { try? FileManager.default.removeItem(atPath: browser) }
            let outcome = try await ChildProcess.run(
                try VerifyIDTokenCommandTests.executable.path,
                [
                    "login", "--provider", "uaepass", "--issuer", emulator.issuer, "--client-id", "backend", "--browser-command",
                    "python3 \(browser)",
                    "--timeout", "120",
                ], environment: ["SWITCHBACK_CLIENT_SECRET": "backend-secret"])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let claims = try JSONDecoder().decode([String: JSONValue].self, from: Data(outcome.stdout.utf8))
            // UAE Pass's userinfo: sub UAEPASS/<uuid> beside uuid, and no acr (its contract).
            #expect(claims["sub"] == .string("UAEPASS/9b1f7c2e-alice") && claims["uuid"] == .string("9b1f7c2e-alice"))
            #expect(claims["userType"] == .string("SOP3") && claims["acr"] == nil)
        }
    }
}
