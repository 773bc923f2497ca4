import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The singpass profile (FAPI 2.0): PAR only, private_key_jwt only, DPoP-bound tokens, the Singpass app
/// hand-off with a registered app_launch_url, and the tap-to-return page — with the core's DPoP support.
@Suite("Emulator: singpass profile and DPoP")
struct EmulatorSingpassTests {
    static let launchURL = "https://app.example.com/appswitch"

    /// The client's encryption key: Singpass encrypts every ID token to the `use: enc` key the client registered.
    static let decryptionKey = DecryptionKey.generateP256(keyID: "client-enc-1")

    static func withEmulator(
        profile: Profile = .singpass, _ body: (Emulator, EmulatorHarness.Keys) async throws -> Void
    ) async throws {
        let keys = try await EmulatorHarness.clientKeys()
        guard case .object(let signing) = keys.jwks, case .array(let signingKeys)? = signing["keys"] else { throw CancellationError() }
        var configuration = EmulatorConfiguration.defaults
        configuration.clients.append(
            .init(
                clientID: "singpass-app", authentication: .privateKeyJWT, redirectURIs: ["https://app.example.com/oauth/callback"],
                idTokenAlgorithm: "ES256",
                jwks: .object(["keys": .array(signingKeys + [.object(decryptionKey.publicJWK(algorithm: "ECDH-ES+A256KW"))])]),
                appReturnURLs: [launchURL]
            ))
        try await EmulatorHarness.withEmulator(profile: profile, configuration: configuration) { try await body($0, keys) }
    }

    static func client(
        _ emulator: Emulator, keys: EmulatorHarness.Keys, dpop: ClientConfiguration.DPoPPolicy = .perSignIn,
        decryptionKeys: [DecryptionKey] = [decryptionKey]
    ) throws -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "singpass-app", redirectURI: try #require(URL(string: "https://app.example.com/oauth/callback")),
                authentication: .privateKeyJWT(keys.signer), dpop: dpop, decryptionKeys: decryptionKeys
            ),
            provider: .discovery(issuer: emulator.issuer)
        )
    }

    static func launchOptions(
        _ url: String = launchURL, httpsType: String? = "app_claimed_https",
        context: [(String, String)] = SingpassAuthenticationContext.appAuthenticationDefault.parameters
    ) -> AuthorizationOptions {
        AuthorizationOptions(
            extraParameters: [("app_launch_url", url)] + (httpsType.map { [("redirect_uri_https_type", $0)] } ?? []) + context)
    }

    /// Signs in through the Singpass app and the tap-to-return page; returns the session and the tapped URL.
    static func signIn(_ emulator: Emulator, client: OIDCClient) async throws -> (AuthorizationSession, URL) {
        let session = try await client.prepareAuthorization(Self.launchOptions())
        #expect(session.requestURI != nil, "FAPI 2.0 requests go by PAR")
        let browser = EmulatorBrowser()
        let (link, page) = try await browser.handOff(session.authorizationURL)
        #expect(link.absoluteString.hasPrefix("singpass://auth?txn="))
        let back = try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .approve())
        #expect(back?.absoluteString == Self.launchURL)
        let tapped = try EmulatorMitIDTests.returnLink(
            try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer)))
        return (session, tapped)
    }

    @Test(
        "PAR with private_key_jwt and DPoP, the Singpass app, the tap-to-return page; DPoP-bound tokens for userinfo; no refresh token, the grant refused"
    )
    func signIn() async throws {
        try await Self.withEmulator { emulator, keys in
            let client = try Self.client(emulator, keys: keys)
            let metadata = try await client.metadata()
            #expect(metadata.requirePushedAuthorizationRequests)
            let (session, tapped) = try await Self.signIn(emulator, client: client)
            let credential = try await client.completeAuthorization(.redirect(tapped), session: session)
            #expect(credential.tokenType == "DPoP")
            #expect(credential.idTokenClaims?.acr == Singpass.acr)
            #expect(try await client.userInfo(for: credential)["sub"] == .string("9b1f7c2e-alice"))
            // Singpass's token endpoint takes the authorization_code grant only (its contract): no refresh token.
            #expect(credential.refreshToken == nil)
            let refused = await expectFailure("Singpass issues no refresh token") { _ = try await client.refresh(credential) }
            #expect(refused?.code == .noRefreshToken)
        }
    }

    @Test("a DPoP-bound access token is refused as a Bearer token, with a proof by another key, and with a replayed proof")
    func boundTokenMisuse() async throws {
        try await Self.withEmulator { emulator, keys in
            let client = try Self.client(emulator, keys: keys)
            let (session, tapped) = try await Self.signIn(emulator, client: client)
            let credential = try await client.completeAuthorization(.redirect(tapped), session: session)
            let key = try #require(credential.dpopKey)
            let userinfo = try #require(URL(string: emulator.issuer + "/userinfo"))
            let transport = URLSessionTransport()
            func call(_ scheme: String, proof: String?) async throws -> Int {
                var headers = ["Authorization": "\(scheme) \(credential.accessToken)"]
                if let proof { headers["DPoP"] = proof }
                return try await transport.send(HTTPRequest(method: .get, url: userinfo, headers: headers)).status
            }
            #expect(try await call("Bearer", proof: nil) == 401)
            let stranger = try DPoPKey().proof(method: "GET", url: userinfo, accessToken: credential.accessToken, now: Date(), jti: "stranger-1")
            #expect(try await call("DPoP", proof: stranger) == 401)
            let proof = try key.proof(method: "GET", url: userinfo, accessToken: credential.accessToken, now: Date(), jti: "once-1")
            #expect(try await call("DPoP", proof: proof) == 200)
            #expect(try await call("DPoP", proof: proof) == 401)
            let wrongTarget = try key.proof(method: "POST", url: userinfo, accessToken: credential.accessToken, now: Date(), jti: "once-2")
            #expect(try await call("DPoP", proof: wrongTarget) == 401)
        }
    }

    @Test(
        "FAPI 2.0 refusals: no DPoP at the token endpoint, a front-channel request without PAR, a client secret, an unregistered app_launch_url, a WebView"
    )
    func refusals() async throws {
        try await Self.withEmulator { emulator, keys in
            // Without DPoP the pushed request itself is refused (a proof or dpop_jkt is required at PAR): invalid_request,
            // as Singpass documents a missing proof (its contract's missingDPoPError).
            let withoutDPoP = try Self.client(emulator, keys: keys, dpop: .off)
            let error = await expectFailure("a pushed request without a DPoP proof must be refused") {
                try await withoutDPoP.prepareAuthorization(Self.launchOptions())
            }
            #expect(error?.code == .parFailed)
            #expect(error?.oauthError?.error == "invalid_request")

            let frontChannel = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "singpass-app", redirectURI: try #require(URL(string: "https://app.example.com/oauth/callback")),
                    pushedAuthorization: .never
                ),
                provider: .discovery(issuer: emulator.issuer)
            )
            await expectCode(.parRequired) { try await frontChannel.prepareAuthorization() }
            let direct = try #require(URL(string: emulator.issuer + "/authorize?client_id=singpass-app&response_type=code"))
            guard case .page(400, _) = try await EmulatorBrowser().open(direct) else {
                Issue.record("the authorization endpoint must refuse requests that were not pushed")
                return
            }

            let secretClient = EmulatorHarness.client(
                emulator, clientID: "backend", authentication: .clientSecretBasic(secret: "backend-secret"), par: .always)
            await expectCode(.parFailed) { try await secretClient.prepareAuthorization() }

            let client = try Self.client(emulator, keys: keys)
            let unregistered = try await client.prepareAuthorization(Self.launchOptions("https://evil.example/launch"))
            let refused = try await EmulatorBrowser().open(unregistered.authorizationURL)
            let launchError = await expectFailure("an unregistered app_launch_url must be refused") {
                try await client.completeAuthorization(.redirect(try EmulatorMitIDTests.returnLink(refused)), session: unregistered)
            }
            #expect(launchError?.oauthError?.error == "invalid_request")

            let inWebView = try await client.prepareAuthorization(Self.launchOptions())
            guard case .page(403, _) = try await EmulatorBrowser(userAgent: EmulatorBrowser.webView).open(inWebView.authorizationURL) else {
                Issue.record("Singpass must refuse an embedded WebView")
                return
            }
        }
    }

    /// A compact JWS over `claims` with the client's P-256 key, its header naming `alg`.
    static func assertion(_ keys: EmulatorHarness.Keys, alg: String = "ES256", claims: [String: JSONValue]) throws -> String {
        let key = try P256.Signing.PrivateKey(pemRepresentation: keys.pem)
        let header = Base64URL.encode(
            Data(JSONValue.object(["alg": .string(alg), "kid": .string("client-key-1"), "typ": .string("JWT")]).description.utf8))
        let payload = Base64URL.encode(Data(JSONValue.object(claims).description.utf8))
        let signature = try key.signature(for: Data("\(header).\(payload)".utf8))
        return "\(header).\(payload).\(Base64URL.encode(signature.rawRepresentation))"
    }

    @Test("client assertions: aud is the issuer alone, ES256/ES384/ES512 only, at most 120 s; the core's signer meets all three")
    func assertionRules() async throws {
        try await Self.withEmulator { emulator, keys in
            let now = Date().timeIntervalSince1970.rounded(.down)
            func claims(aud: JSONValue = .string(emulator.issuer), lifetime: Double = 60) -> [String: JSONValue] {
                [
                    "iss": .string("singpass-app"), "sub": .string("singpass-app"), "aud": aud, "iat": .number(now),
                    "exp": .number(now + lifetime),
                    "jti": .string(UUID().uuidString),
                ]
            }
            // The hand-made assertion is accepted when it follows the rules, so each refusal below is for its one difference.
            // Client authentication comes first; an accepted assertion then meets the missing DPoP proof (400, not 401).
            let good = try await EmulatorClientAssertionTests.post(emulator, assertion: try Self.assertion(keys, claims: claims()))
            #expect(good.status == 400 && good.body.contains("a DPoP proof is required"), "\(good.body)")
            let refused: [(String, String)] = [
                (try Self.assertion(keys, claims: claims(aud: .string(emulator.issuer + "/token"))), "another audience"),
                (
                    try Self.assertion(keys, claims: claims(aud: .array([.string(emulator.issuer), .string("https://elsewhere.example")]))),
                    "single string"
                ),
                (try Self.assertion(keys, claims: claims(lifetime: 121)), "at most 120 seconds"),
                (try Self.assertion(keys, alg: "RS256", claims: claims()), "ES256, ES384, ES512"),
            ]
            for (assertion, reason) in refused {
                let response = try await EmulatorClientAssertionTests.post(emulator, assertion: assertion)
                #expect(response.status == 401 && response.body.contains(reason), "\(reason): \(response.body)")
            }
            var withoutIssuedAt = claims()
            withoutIssuedAt["iat"] = nil
            let missing = try await EmulatorClientAssertionTests.post(emulator, assertion: try Self.assertion(keys, claims: withoutIssuedAt))
            #expect(missing.status == 401 && missing.body.contains("must carry iat"), "\(missing.body)")
            // The core's signer: aud is the issuer for the token endpoint too, and its lifetime is capped at 120 s.
            let signer = try await ClientAssertionSigner(algorithm: .es256, privateKeyPEM: keys.pem, keyID: "client-key-1", lifetime: 600)
            #expect(signer.lifetime == 120)
            let fromCore = try await signer.assertion(clientID: "singpass-app", audience: emulator.issuer, now: Date(), entropy: SystemEntropy())
            let accepted = try await EmulatorClientAssertionTests.post(emulator, assertion: fromCore)
            #expect(accepted.status == 400 && accepted.body.contains("a DPoP proof is required"), "\(accepted.body)")
        }
    }

    @Test("ID tokens are signed then encrypted (ECDH-ES+A256KW, A256CBC-HS512, cty JWT) to the registered key; no key or another key fails typed")
    func encryptedIDTokens() async throws {
        try await Self.withEmulator { emulator, keys in
            let client = try Self.client(emulator, keys: keys)
            let (session, tapped) = try await Self.signIn(emulator, client: client)
            let credential = try await client.completeAuthorization(.redirect(tapped), session: session)
            #expect(credential.subject == "9b1f7c2e-alice")
            // The credential keeps the signed token from inside the JWE, which the provider's keys verify.
            #expect(credential.idToken?.split(separator: ".", omittingEmptySubsequences: false).count == 3)

            for (keys2, expected) in [
                ([DecryptionKey](), SwitchbackError.Code.idTokenDecryptionFailed),
                ([.generateP256(keyID: "client-enc-1")], .idTokenDecryptionFailed),
            ] {
                let other = try Self.client(emulator, keys: keys, decryptionKeys: keys2)
                let (session, tapped) = try await Self.signIn(emulator, client: other)
                let error = await expectFailure("an ID token the client cannot decrypt must be refused") {
                    try await other.completeAuthorization(.redirect(tapped), session: session)
                }
                #expect(error?.code == expected)
            }
        }
    }

    @Test(
        "userinfo is a JWS inside a JWE (application/jwt) for a client with an encryption key; the client decrypts and verifies it, iss and aud included"
    )
    func encryptedUserInfo() async throws {
        try await Self.withEmulator { emulator, keys in
            let client = try Self.client(emulator, keys: keys)
            let (session, tapped) = try await Self.signIn(emulator, client: client)
            let credential = try await client.completeAuthorization(.redirect(tapped), session: session)
            let key = try #require(credential.dpopKey)
            let userinfo = try #require(URL(string: emulator.issuer + "/userinfo"))
            let proof = try key.proof(method: "GET", url: userinfo, accessToken: credential.accessToken, now: Date(), jti: "userinfo-raw")
            let raw = try await URLSessionTransport().send(
                HTTPRequest(
                    method: .get, url: userinfo, headers: ["Authorization": "DPoP \(credential.accessToken)", "DPoP": proof]
                ))
            #expect(raw.mediaType == "application/jwt")
            let token = String(decoding: raw.body, as: UTF8.self)
            #expect(CompactJWE.isEncrypted(token) && token.split(separator: ".", omittingEmptySubsequences: false).count == 5)
            #expect(!token.contains("alice"), "nothing readable without the key")

            let claims = try await client.userInfo(for: credential)
            #expect(claims["sub"] == .string("9b1f7c2e-alice"))
            #expect(claims["iss"] == .string(emulator.issuer) && claims["aud"] == .string("singpass-app"))
        }
    }

    @Test("a client that holds a decryption key refuses a plain ID token (no silent downgrade)")
    func plainIDTokenRefused() async throws {
        try await EmulatorClientAssertionTests.withEmulator { emulator, keys in
            let client = OIDCClient(
                configuration: ClientConfiguration(
                    clientID: "fapi", redirectURI: try #require(URL(string: "com.example.app:/oauth/callback")),
                    authentication: .privateKeyJWT(keys.signer),
                    pushedAuthorization: .always, decryptionKeys: [Self.decryptionKey]
                ),
                provider: .discovery(issuer: emulator.issuer)
            )
            await expectCode(.idTokenNotEncrypted) { _ = try await EmulatorFaultTests.signIn(client) }
        }
    }

    @Test("redirect_uri_https_type: app_claimed_https gets the tap page, standard_https (or none) a plain 302 to the redirect URI")
    func redirectHTTPSType() async throws {
        try await Self.withEmulator { emulator, keys in
            let client = try Self.client(emulator, keys: keys)
            for httpsType in ["standard_https", nil] {
                let session = try await client.prepareAuthorization(Self.launchOptions(httpsType: httpsType))
                let browser = EmulatorBrowser()
                let (link, page) = try await browser.handOff(session.authorizationURL)
                _ = try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .approve())
                let answer = try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer))
                guard case .redirect(let target) = answer, let location = URL(string: target) else {
                    Issue.record("\(httpsType ?? "no type"): expected a 302, got \(answer)")
                    continue
                }
                #expect(target.hasPrefix("https://app.example.com/oauth/callback?code="))
                let credential = try await client.completeAuthorization(.redirect(location), session: session)
                #expect(credential.subject == "9b1f7c2e-alice")
            }
            #expect(ProviderPreset.singpass.authorizationParameters.contains { $0 == ("redirect_uri_https_type", "app_claimed_https") })
        }
    }

    @Test("the contract's short code lifetime wins over the configuration's: an expired code is invalid_grant")
    func codeLifetime() async throws {
        #expect(ProviderContract.singpass.seconds(.codeLifetime) == 60 && Profile.singpass.contract == .singpass)
        var profile = Profile.singpass
        profile.contract = ProviderContract.singpass.replacing(.codeLifetime, with: .seconds(1))
        try await Self.withEmulator(profile: profile) { emulator, keys in
            let client = try Self.client(emulator, keys: keys)
            let (session, tapped) = try await Self.signIn(emulator, client: client)
            try await Task.sleep(for: .milliseconds(2100))
            let error = await expectFailure("an expired code must not be redeemed") {
                try await client.completeAuthorization(.redirect(tapped), session: session)
            }
            #expect(error?.oauthError?.error == "invalid_grant")
            #expect(error?.oauthError?.errorDescription?.contains("expired") == true)
        }
    }

    /// Pushes `fields` (with a fresh client assertion) and `proof`, as a client outside the core would.
    static func push(
        _ emulator: Emulator, keys: EmulatorHarness.Keys, _ fields: [(String, String)], proof: String?
    ) async throws -> (status: Int, body: String) {
        let assertion = try await keys.signer.assertion(
            clientID: "singpass-app", audience: emulator.issuer, now: Date(), entropy: SystemEntropy())
        let form =
            fields + [
                ("client_id", "singpass-app"), ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                ("client_assertion", assertion),
            ]
        let response = try await URLSessionTransport().send(
            .form(try #require(URL(string: emulator.issuer + "/par")), form, headers: proof.map { ["DPoP": $0] } ?? [:]))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// A request the core would push: PKCE, 43-character state and nonce, Login's context.
    static func requestFields(state: String = String(repeating: "s", count: 43), nonce: String = String(repeating: "n", count: 43))
        -> [(String, String)]
    {
        [
            ("response_type", "code"), ("redirect_uri", "https://app.example.com/oauth/callback"), ("scope", "openid"), ("state", state),
            ("nonce", nonce), ("code_challenge", PKCE(entropy: SystemEntropy()).challenge), ("code_challenge_method", "S256"),
        ] + SingpassAuthenticationContext.appAuthenticationDefault.parameters
    }

    /// A DPoP proof with the claims given, signed by `key`'s P-256 key (the core's proofs always carry `exp`).
    static func proof(_ key: P256.Signing.PrivateKey, claims: [String: JSONValue]) throws -> String {
        let header: JSONValue = .object(["typ": .string("dpop+jwt"), "alg": .string("ES256"), "jwk": .object(PublicJWK.p256(key.publicKey))])
        let input = Base64URL.encode(Data(header.description.utf8)) + "." + Base64URL.encode(Data(JSONValue.object(claims).description.utf8))
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    @Test("every sign-in proves a DPoP key of its own: two sign-ins, two keys; the code is bound to its sign-in's key; the credential keeps it")
    func keyPerSignIn() async throws {
        try await Self.withEmulator { emulator, keys in
            let client = try Self.client(emulator, keys: keys)
            let (first, firstTapped) = try await Self.signIn(emulator, client: client)
            let (second, secondTapped) = try await Self.signIn(emulator, client: client)
            let firstKey = try #require(first.dpopKey)
            let secondKey = try #require(second.dpopKey)
            #expect(firstKey.thumbprint != secondKey.thumbprint)
            // The first sign-in's code, redeemed with the second sign-in's key, is refused: the code is bound at PAR.
            let swapped = AuthorizationSession(
                issuer: first.issuer, clientID: first.clientID, redirectURI: first.redirectURI, state: first.state, nonce: first.nonce,
                pkce: first.pkce, responseMode: first.responseMode, maxAge: first.maxAge, requestURI: first.requestURI,
                authorizationURL: first.authorizationURL, createdAt: first.createdAt, dpopKey: secondKey)
            let error = await expectFailure("a code redeemed with another sign-in's key must be refused") {
                try await client.completeAuthorization(.redirect(firstTapped), session: swapped)
            }
            #expect(error?.oauthError?.error == "invalid_grant")
            let credential = try await client.completeAuthorization(.redirect(secondTapped), session: second)
            #expect(credential.dpopKey == secondKey)
            // The session, as a journal keeps it, and the credential, as a store keeps it, carry the key.
            let restored = try JSONDecoder().decode(AuthorizationSession.self, from: try JSONEncoder().encode(second))
            #expect(restored.dpopKey == secondKey && restored == second)
            let stored = try JSONDecoder().decode(Credential.self, from: try JSONEncoder().encode(credential))
            #expect(stored.dpopKey == secondKey)
            #expect(try await client.userInfo(for: stored)["sub"] == .string("9b1f7c2e-alice"))
            #expect(!"\(credential)".contains("PRIVATE") && !"\(second)".contains("PRIVATE"))
        }
    }

    @Test("Singpass refuses a DPoP proof without exp, or whose exp is past or more than 2 minutes after iat; the core's proofs carry exp")
    func proofExpiry() async throws {
        try await Self.withEmulator { emulator, keys in
            let key = P256.Signing.PrivateKey()
            let now = Date().timeIntervalSince1970.rounded(.down)
            func claims(exp: Double?) -> [String: JSONValue] {
                var claims: [String: JSONValue] = [
                    "jti": .string(UUID().uuidString), "htm": .string("POST"), "htu": .string(emulator.issuer + "/par"), "iat": .number(now),
                ]
                claims["exp"] = exp.map(JSONValue.number)
                return claims
            }
            let accepted = try await Self.push(
                emulator, keys: keys, Self.requestFields(), proof: try Self.proof(key, claims: claims(exp: now + 60)))
            #expect(accepted.status == 201, "\(accepted.body)")
            for (exp, reason) in [(nil, "has no exp"), (now + 121, "within 120 seconds"), (now - 1, "after iat")] as [(Double?, String)] {
                let refused = try await Self.push(
                    emulator, keys: keys, Self.requestFields(), proof: try Self.proof(key, claims: claims(exp: exp)))
                #expect(refused.status == 400 && refused.body.contains("invalid_dpop_proof") && refused.body.contains(reason), "\(refused.body)")
            }
            let core = try DPoPKey().proof(method: "POST", url: try #require(URL(string: emulator.issuer + "/par")), now: Date(), jti: "core-1")
            let payload = try #require(Base64URL.decode(core.split(separator: ".")[1]))
            guard case .object(let coreClaims) = try JSONDecoder().decode(JSONValue.self, from: payload),
                case .number(let iat)? = coreClaims["iat"]
            else {
                Issue.record("the core's proof has claims with an iat")
                return
            }
            #expect(coreClaims["exp"] == .number(iat + DPoPKey.proofLifetime))
        }
    }

    @Test(
        "Singpass refuses state or nonce under 30 characters or outside its alphabet, a Login request without authentication_context_type, an undocumented type, and a bad message"
    )
    func singpassRequestRules() async throws {
        try await Self.withEmulator { emulator, keys in
            let good = try await Self.push(emulator, keys: keys, Self.requestFields(), proof: nil)
            #expect(good.status == 400 && good.body.contains("dpop"), "only the missing DPoP proof is wrong: \(good.body)")
            var cases: [([(String, String)], String)] = [
                (Self.requestFields(state: String(repeating: "s", count: 29)), "state must be 30 to 255"),
                (Self.requestFields(nonce: String(repeating: "n", count: 42) + "<"), "nonce must be 30 to 255"),
                (Self.requestFields().filter { !$0.0.hasPrefix("authentication_context") }, "mandatory for Login apps"),
            ]
            for (type, message, reason) in [
                ("LOGIN", nil, "not one of the values"), ("APP_AUTHENTICATION_DEFAULT", String(repeating: "a", count: 101), "1 to 100"),
                ("APP_AUTHENTICATION_DEFAULT", "Sign in <b>", "only letters"),
            ] as [(String, String?, String)] {
                let fields =
                    Self.requestFields().filter { !$0.0.hasPrefix("authentication_context") }
                    + [("authentication_context_type", type)] + (message.map { [("authentication_context_message", $0)] } ?? [])
                cases.append((fields, reason))
            }
            for (fields, reason) in cases {
                let key = DPoPKey()
                let proof = try key.proof(
                    method: "POST", url: try #require(URL(string: emulator.issuer + "/par")), now: Date(), jti: UUID().uuidString)
                let refused = try await Self.push(emulator, keys: keys, fields, proof: proof)
                #expect(refused.status == 400 && refused.body.contains(reason), "\(reason): \(refused.body)")
            }
            // What the core sends passes: its state and nonce are 43 base64url characters, the preset carries the context.
            let session = try await Self.client(emulator, keys: keys).prepareAuthorization(Self.launchOptions())
            #expect(session.state.count == 43 && session.nonce.count == 43)
            let context = try await ProviderPreset.singpass.request(strategy: .systemBrowser).options.extraParameters
            #expect(context.contains { $0 == ("authentication_context_type", "APP_AUTHENTICATION_DEFAULT") })
        }
    }

    @Test("Singpass refuses a client whose JWKS has no use:enc key: every ID token is encrypted to one")
    func encryptionKeyRequired() async throws {
        let keys = try await EmulatorHarness.clientKeys()
        var configuration = EmulatorConfiguration.defaults
        configuration.clients.append(
            .init(
                clientID: "singpass-app", authentication: .privateKeyJWT, redirectURIs: ["https://app.example.com/oauth/callback"],
                idTokenAlgorithm: "ES256", jwks: keys.jwks, appReturnURLs: [Self.launchURL]
            ))
        try await EmulatorHarness.withEmulator(profile: .singpass, configuration: configuration) { emulator in
            let error = await expectFailure("a client without an encryption key must be refused") {
                try await Self.client(emulator, keys: keys, decryptionKeys: []).prepareAuthorization(Self.launchOptions())
            }
            #expect(error?.oauthError?.errorDescription?.contains("use:enc") == true)
        }
    }
}
