// The emulator needs macOS 14 (Hummingbird 2) while the package's floor is macOS 13, so these tests
// are compiled where CI runs them.
#if os(Linux)
    import Crypto
    import Foundation
    import Testing
    @_spi(SwitchbackInternals) @testable import Switchback
    import SwitchbackEmulator
    @_spi(SwitchbackInternals) import SwitchbackTesting

    /// `switchback login`, run as the built executable against the emulator and against glewlwyd, with a
    /// scripted browser given as `--browser-command` (the user's part: signing in at the provider's page).
    @Suite("switchback login")
    struct LoginCommandTests {
        /// The user at the emulator's password page: load the authorization URL (its last argument), post the
        /// login form, and follow the provider's redirect to the loopback callback.
        static let emulatorBrowser = """
            import re, sys, urllib.parse, urllib.request, http.cookiejar
            url = sys.argv[-1]
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            page = opener.open(url).read().decode()
            request = re.search(r'name="request" value="([^"]+)"', page).group(1)
            form = urllib.parse.urlencode({"request": request, "username": "alice", "password": "Secret-123"}).encode()
            opener.open(urllib.parse.urljoin(url, "/login"), form).read()
            """

        static func script(_ text: String, name: String) throws -> String {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-login-\(UUID().uuidString)-\(name)")
            try text.write(to: file, atomically: true, encoding: .utf8)
            return file.path
        }

        static func login(_ arguments: [String]) async throws -> ChildProcess.Outcome {
            try await ChildProcess.run(try VerifyIDTokenCommandTests.executable.path, ["login"] + arguments)
        }

        @Test(
            "against the emulator: a public client; a confidential one with private_key_jwt, PAR, DPoP and an encrypted ID token; the claims on stdout, no token anywhere"
        )
        func emulator() async throws {
            let signing = P256.Signing.PrivateKey()
            let encryption = DecryptionKey.generateP256(keyID: "enc-1")
            let signingJWK: JSONValue = .object(
                PublicJWK.p256(signing.publicKey).merging(["kid": .string("sig-1"), "use": .string("sig"), "alg": .string("ES256")]) { $1 })
            var configuration = EmulatorConfiguration.defaults
            configuration.clients[0].redirectURIs.append("http://127.0.0.1/callback")
            configuration.clients.append(
                .init(
                    clientID: "cli-fapi", authentication: .privateKeyJWT, redirectURIs: ["http://127.0.0.1/callback"], idTokenAlgorithm: "ES256",
                    jwks: .object(["keys": .array([signingJWK, .object(encryption.publicJWK(algorithm: "ECDH-ES+A256KW"))])])
                ))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-login-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let keyFile = directory.appendingPathComponent("client.pem")
            try signing.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
            let decryptionFile = directory.appendingPathComponent("decryption.pem")
            guard case .p256(let key) = encryption.material else { throw CancellationError() }
            try key.pemRepresentation.write(to: decryptionFile, atomically: true, encoding: .utf8)
            let browser = try Self.script(Self.emulatorBrowser, name: "browser.py")
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
                for output in [public_.stdout + public_.stderr, fapi.stdout + fapi.stderr] {
                    #expect(!output.contains("access_token") && !output.contains("eyJ"), "no token is printed")
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
            var configuration = EmulatorConfiguration.defaults
            configuration.clients[0].redirectURIs.append("http://127.0.0.1/callback")
            // The "browser" first delivers a forged answer to the loopback port, then signs in for real.
            let browser = try Self.script(
                """
                import re, sys, urllib.parse, urllib.request
                url = sys.argv[-1]
                redirect = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("redirect_uri", [None])[0]
                if redirect: urllib.request.urlopen(redirect + "?code=forged&state=forged").read()
                """ + "\n" + Self.emulatorBrowser, name: "browser.py")
            try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
                let outcome = try await Self.login([
                    "--issuer", emulator.issuer, "--client-id", "native-rs", "--par", "never", "--browser-command", "python3 \(browser)", "--timeout",
                    "120",
                ])
                #expect(outcome.status == 0, "\(outcome.stderr)")
                #expect(outcome.stdout.contains("9b1f7c2e-alice"))
            }
        }

        @Test("a browser that never reaches the callback ends with a typed timeout, exit 1")
        func timeout() async throws {
            var configuration = EmulatorConfiguration.defaults
            configuration.clients[0].redirectURIs.append("http://127.0.0.1/callback")
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
                location=$(bash \(peer.loginScript) "${@: -1}")
                curl -s "$location" >/dev/null
                """, name: "browser.sh")
            let outcome = try await Self.login([
                "--issuer", peer.issuer, "--client-id", "native-rs", "--scope", "openid profile email", "--redirect-port", String(port),
                "--browser-command", "bash \(browser)", "--timeout", "120",
            ])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let claims = try JSONDecoder().decode([String: JSONValue].self, from: Data(outcome.stdout.utf8))
            #expect(claims["iss"] == .string(peer.issuer) && claims["aud"] != nil && claims["sub"] != nil)
        }
    }
#endif
