import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// The legacy implicit response type (`id_token token`) that the companion's bridge accepts from providers
/// that offer nothing else: the tokens are trusted only through the ID token's signature, nonce and
/// `at_hash`, and an app's own sign-in refuses the shape.
@Suite("Implicit responses (id_token token)")
struct ImplicitResponseTests {
    static let redirect = "https://app.example.com/oauth/callback"

    /// The backend's client, as the companion holds it.
    static func client(_ emulator: Emulator) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "backend", redirectURI: URL(string: redirect)!, authentication: .clientSecretBasic(secret: "backend-secret"),
                pushedAuthorization: .never
            ),
            provider: .discovery(issuer: emulator.issuer)
        )
    }

    static let implicit = AuthorizationOptions(responseType: .idTokenToken)

    @Test("fragment and form_post: the tokens sign in after nonce and at_hash checks; no code, no verifier, no refresh token; completes once")
    func signsIn() async throws {
        try await EmulatorHarness.withEmulator(profile: .legacyImplicit) { emulator in
            let client = Self.client(emulator)
            #expect(try await client.metadata().responseTypesSupported == ["code", "id_token token"])
            let session = try await client.prepareAuthorization(Self.implicit)
            #expect(session.responseType == .idTokenToken && session.responseMode == .fragment)
            let query = try #require(session.authorizationURL.query)
            #expect(query.contains("response_type=id_token%20token") && !query.contains("code_challenge"))
            let landing = try await EmulatorBrowser().signIn(session.authorizationURL)
            guard case .redirect(let location) = landing else { throw RigFailure("no redirect: \(landing)") }
            #expect(location.hasPrefix(Self.redirect + "#access_token="))
            let callback = AuthorizationCallback.redirect(try #require(URL(string: location)))
            let credential = try await client.completeAuthorization(callback, session: session)
            #expect(credential.subject == "9b1f7c2e-alice")
            #expect(credential.idTokenClaims?.nonce == session.nonce)
            #expect(credential.refreshToken == nil && !credential.accessToken.isEmpty)
            await expectCode(.callbackReplayed) { try await client.completeAuthorization(callback, session: session) }

            var formPost = Self.implicit
            formPost.responseMode = .formPost
            let posted = try await client.prepareAuthorization(formPost)
            let answer = try EmulatorBrowser.callback(try await EmulatorBrowser().signIn(posted.authorizationURL))
            guard case .formPost = answer else { throw RigFailure("expected a form_post answer") }
            #expect(try await client.completeAuthorization(answer, session: posted).subject == "9b1f7c2e-alice")
        }
    }

    @Test(
        "an ID token that does not vouch for the access token or the request is refused",
        arguments: [
            (Fault.missingAccessTokenHash, SwitchbackError.Code.accessTokenHashInvalid), (.badAccessTokenHash, .accessTokenHashInvalid),
            (.wrongNonce, .nonceMismatch), (.badSignature, .signatureInvalid), (.wrongAudience, .audienceInvalid),
        ])
    func refusedTokens(fault: Fault, expected: SwitchbackError.Code) async throws {
        try await EmulatorHarness.withEmulator(profile: .legacyImplicit) { emulator in
            let client = Self.client(emulator)
            await emulator.setFaults([fault], forClient: "backend")
            let session = try await client.prepareAuthorization(Self.implicit)
            let callback = try EmulatorBrowser.callback(try await EmulatorBrowser().signIn(session.authorizationURL))
            await expectCode(expected) { try await client.completeAuthorization(callback, session: session) }
        }
    }

    @Test("a tampered response: another access token, a code added, the ID token or access token missing, a foreign state")
    func tampered() async throws {
        try await EmulatorHarness.withEmulator(profile: .legacyImplicit) { emulator in
            let client = Self.client(emulator)
            func answer() async throws -> (AuthorizationSession, [(String, String)]) {
                let session = try await client.prepareAuthorization(Self.implicit)
                guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL),
                    let fragment = URLComponents(string: location)?.percentEncodedFragment,
                    let fields = FormEncoding.decode(fragment, plusIsSpace: false)
                else { throw RigFailure("no fragment response") }
                return (session, fields)
            }
            func callback(_ fields: [(String, String)]) -> AuthorizationCallback {
                .redirect(URL(string: Self.redirect + "#" + FormEncoding.encode(fields))!)
            }
            let cases: [(SwitchbackError.Code, ([(String, String)]) -> [(String, String)])] = [
                (.accessTokenHashInvalid, { $0.map { $0.0 == "access_token" ? ($0.0, "substituted-token-from-another-sign-in") : $0 } }),
                (.malformedResponse, { $0 + [("code", "injected-code")] }),
                (.idTokenMissing, { $0.filter { $0.0 != "id_token" } }),
                (.invalidTokenResponse, { $0.filter { $0.0 != "access_token" } }),
                (.stateMismatch, { $0.map { $0.0 == "state" ? ($0.0, "another-state") : $0 } }),
            ]
            for (expected, change) in cases {
                let (session, fields) = try await answer()
                await expectCode(expected) { try await client.completeAuthorization(callback(change(fields)), session: session) }
            }
        }
    }

    @Test("refused before anything is shown: the query mode, a provider that lists no implicit type, an app's own sign-in")
    func refusals() async throws {
        try await EmulatorHarness.withEmulator(profile: .legacyImplicit) { emulator in
            var query = Self.implicit
            query.responseMode = .query
            await expectCode(.invalidConfiguration) { try await Self.client(emulator).prepareAuthorization(query) }

            // The emulator refuses an implicit request without a nonce, and one asking for the query.
            for extra in ["", "&nonce=n-0123456789&response_mode=query"] {
                let url = try #require(
                    URL(
                        string: emulator.issuer
                            + "/authorize?response_type=id_token%20token&client_id=backend&redirect_uri=\(FormEncoding.escape(Self.redirect))&scope=openid&state=s-0123456789"
                            + extra))
                guard case .redirect(let location) = try await EmulatorBrowser().open(url) else { throw RigFailure("no error redirect") }
                #expect(location.contains("error=invalid_request") && !location.contains("access_token"), "\(location)")
            }

            let coordinator = SignInCoordinator(.app(Self.client(emulator)), host: RecordingUserAgentHost(), opener: RecordingURLOpener())
            await expectCode(.strategyNotSupported) {
                try await coordinator.signIn(SignInRequest(provider: "legacy", strategy: .systemBrowser, options: Self.implicit))
            }
        }
        try await EmulatorHarness.withEmulator(profile: .generic) { emulator in
            await expectCode(.invalidConfiguration) { try await Self.client(emulator).prepareAuthorization(Self.implicit) }
        }
    }

    @Test("a session saved before response types existed reads back as a code session")
    func oldJournal() throws {
        let session = AuthorizationSession(
            issuer: "https://id.example.com", clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!, state: "s", nonce: "n",
            pkce: PKCE(entropy: FixedEntropy()), responseMode: .query, maxAge: nil, requestURI: nil,
            authorizationURL: URL(string: "https://id.example.com/authorize")!, createdAt: Date(timeIntervalSince1970: 1_700_000_000)
        )
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(session)) as? [String: Any])
        #expect(object.removeValue(forKey: "responseType") as? String == "code")
        let old = try JSONDecoder().decode(AuthorizationSession.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old == session)
    }
}
