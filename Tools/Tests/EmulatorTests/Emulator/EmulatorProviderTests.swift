import Crypto
import _CryptoExtras
import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The emulator as a well-behaved provider, driven by the core client over loopback HTTP.
@Suite("Emulator: generic provider")
struct EmulatorProviderTests {
    @Test("code flow for the RS256 and the ES256 client, then refresh and userinfo", arguments: [("native-rs", "RS256"), ("native-es", "ES256")])
    func codeFlow(clientID: String, algorithm: String) async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator, clientID: clientID)
            let session = try await client.prepareAuthorization()
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                Issue.record("expected a redirect to the app")
                return
            }
            let credential = try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
            #expect(credential.idTokenClaims?.nonce == session.nonce)
            #expect(try CompactJWS(try #require(credential.idToken), malformed: .idTokenMalformed).header.alg == algorithm)
            let refreshed = try await client.refresh(credential)
            #expect(refreshed.accessToken != credential.accessToken)
            #expect(refreshed.refreshToken != credential.refreshToken)
            let claims = try await client.userInfo(for: refreshed)
            #expect(claims["name"] == .string("Alice Example"))
            await expectCode(.tokenEndpointError) { try await client.refresh(credential) }
        }
    }

    @Test("client_secret_basic with the confidential client; a wrong secret is a 401, returned promptly, not a hang")
    func confidentialClient() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            for (secret, succeeds) in [("backend-secret", true), ("wrong", false)] {
                let client = EmulatorHarness.client(emulator, clientID: "backend", authentication: .clientSecretBasic(secret: secret))
                let session = try await client.prepareAuthorization()
                guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                    Issue.record("expected a redirect to the app")
                    return
                }
                do {
                    _ = try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
                    #expect(succeeds)
                } catch let error as SwitchbackError {
                    #expect(!succeeds)
                    // RFC 6749 §5.2: 401 with WWW-Authenticate. URLSession cannot read the body of a
                    // challenged response without answering the challenge, so only the status is certain.
                    #expect(error.httpStatus == 401, "\(error)")
                    #expect(error.oauthError == nil || error.oauthError?.error == "invalid_client")
                }
            }
        }
    }

    @Test("PAR: the pushed request signs in once; its request_uri cannot be used again")
    func pushedAuthorizationRequest() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator, par: .always)
            let session = try await client.prepareAuthorization()
            #expect(session.requestURI?.hasPrefix("urn:ietf:params:oauth:request_uri:") == true)
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                Issue.record("expected a redirect to the app")
                return
            }
            let credential = try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
            #expect(credential.idTokenClaims?.nonce == session.nonce)
            guard case .page(400, _) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                Issue.record("a used request_uri must be refused")
                return
            }
            let wrongSecret = EmulatorHarness.client(
                emulator, clientID: "backend", authentication: .clientSecretPost(secret: "wrong"), par: .always)
            await expectCode(.parFailed) { try await wrongSecret.prepareAuthorization() }
        }
    }

    @Test("a replayed callback: the client refuses it without redeeming; the provider refuses a second redemption and revokes")
    func codeReplay() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                Issue.record("expected a redirect to the app")
                return
            }
            let callback = AuthorizationCallback.redirect(try #require(URL(string: location)))
            let credential = try await client.completeAuthorization(callback, session: session)
            // The same deep link delivered twice to the same client: refused before the token endpoint,
            // so the credential stays valid.
            await expectCode(.callbackReplayed) { try await client.completeAuthorization(callback, session: session) }
            #expect(try await client.userInfo(for: credential)["sub"] == .string("9b1f7c2e-alice"))
            // Another client instance (the app relaunched with the session restored) reaches the provider,
            // which refuses the code and revokes what it produced.
            let relaunched = EmulatorHarness.client(emulator)
            let error = await expectFailure("a replayed code must be refused") {
                try await relaunched.completeAuthorization(callback, session: session)
            }
            #expect(error?.code == .tokenEndpointError)
            #expect(error?.oauthError?.error == "invalid_grant")
            await expectCode(.userInfoInvalid) { try await client.userInfo(for: credential) }
        }
    }

    @Test("form_post: an auto-submitting form whose fields the client accepts")
    func formPost() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization(AuthorizationOptions(responseMode: .formPost))
            guard case .page(200, let html) = try await EmulatorBrowser().signIn(session.authorizationURL),
                let post = EmulatorBrowser.formPost(html)
            else {
                Issue.record("expected an auto-submitting form")
                return
            }
            #expect(html.contains("document.forms[0].submit()"))
            let credential = try await client.completeAuthorization(.formPost(post.action, body: post.body), session: session)
            #expect(credential.subject == "9b1f7c2e-alice")
        }
    }

    @Test("bad input: unknown client or redirect URI gets an error page, a missing PKCE challenge an error redirect")
    func badAuthorizeRequests() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let transport = URLSessionTransport()
            let base = "\(emulator.issuer)/authorize?response_type=code&scope=openid"
            let unknownClient = try await transport.send(
                HTTPRequest(method: .get, url: try #require(URL(string: "\(base)&client_id=nobody&redirect_uri=x"))))
            #expect(unknownClient.status == 400)
            let lookalike = try await transport.send(
                HTTPRequest(
                    method: .get,
                    url: try #require(URL(string: "\(base)&client_id=native-rs&redirect_uri=com.example.app%3A%2Foauth%2Fcallback%2F"))))
            #expect(lookalike.status == 400)
            let noPKCE = try await transport.send(
                HTTPRequest(
                    method: .get,
                    url: try #require(URL(string: "\(base)&client_id=native-rs&redirect_uri=com.example.app%3A%2Foauth%2Fcallback&state=s1"))))
            #expect(noPKCE.status == 302)
            #expect(noPKCE.headers["location"]?.hasPrefix("com.example.app:/oauth/callback?error=invalid_request") == true)
            #expect(noPKCE.headers["location"]?.contains("state=s1") == true)
            let garbage = try await transport.send(
                .form(
                    try #require(URL(string: "\(emulator.issuer)/token")),
                    [
                        ("grant_type", "authorization_code"), ("client_id", "native-rs"), ("code", "nope"), ("redirect_uri", "x"),
                        ("code_verifier", "v"),
                    ]))
            #expect(garbage.status == 400)
        }
    }

    @Test("end_session: a valid id_token_hint signs the user out (refresh tokens revoked) and returns to a registered URI with state")
    func endSession() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let credential = try await EmulatorFaultTests.signIn(client)
            let endpoint = try #require(try await client.metadata().endSessionEndpoint)
            let hint = try #require(credential.idToken)
            func open(_ fields: [(String, String)]) async throws -> HTTPResponse {
                try await URLSessionTransport().send(
                    HTTPRequest(method: .get, url: try #require(URL(string: endpoint.absoluteString + "?" + FormEncoding.encode(fields)))))
            }
            let unregistered = try await open([("id_token_hint", hint), ("post_logout_redirect_uri", "https://evil.example/out")])
            #expect(unregistered.status == 400)
            var parts = hint.split(separator: ".").map(String.init)
            parts[2] = (parts[2].hasPrefix("A") ? "B" : "A") + parts[2].dropFirst()
            let forged = try await open([
                ("id_token_hint", parts.joined(separator: ".")), ("post_logout_redirect_uri", "https://app.example.com/signed-out"),
            ])
            #expect(forged.status == 400)
            // Neither refusal signed the user out.
            let stillValid = try await client.refresh(credential)

            let out = try await open([
                ("id_token_hint", hint), ("post_logout_redirect_uri", "https://app.example.com/signed-out"), ("state", "a b&c"),
            ])
            #expect(out.status == 302)
            #expect(out.headers["location"] == "https://app.example.com/signed-out?state=a%20b%26c")
            await expectCode(.tokenEndpointError) { try await client.refresh(stillValid) }
            #expect(try await open([]).status == 200)
        }
    }

    @Test("signing keys given in the configuration: the same JWKS after a restart, tokens verify; a bad PEM stops the start")
    func givenSigningKeys() async throws {
        var configuration = EmulatorConfiguration.defaults
        configuration.signingKeys = .init(
            rs256: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation, es256: P256.Signing.PrivateKey().pemRepresentation
        )
        func jwks(_ emulator: Emulator) async throws -> String {
            let response = try await URLSessionTransport().send(
                HTTPRequest(method: .get, url: try #require(URL(string: emulator.issuer + "/jwks"))))
            return String(decoding: response.body, as: UTF8.self)
        }
        var first = ""
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            first = try await jwks(emulator)
            let credential = try await EmulatorFaultTests.signIn(EmulatorHarness.client(emulator, clientID: "native-es"))
            #expect(credential.subject == "9b1f7c2e-alice")
        }
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            let again = try await jwks(emulator)
            #expect(again == first)
            let credential = try await EmulatorFaultTests.signIn(EmulatorHarness.client(emulator))
            #expect(credential.subject == "9b1f7c2e-alice")
        }
        configuration.signingKeys = .init(rs256: "-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----")
        await #expect(throws: (any Error).self) { try await Emulator.start(configuration: configuration) }
    }
}
