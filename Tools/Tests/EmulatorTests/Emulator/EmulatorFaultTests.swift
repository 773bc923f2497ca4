import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
import SwitchbackTesting
import ToolsTestSupport

/// Every emulator fault met by the core client over loopback: accepted where a real provider's
/// behaviour is legitimate, refused with the exact typed error where it is not.
@Suite("Emulator: faults")
struct EmulatorFaultTests {
    enum Expected: Sendable, CustomStringConvertible {
        case accepted
        case refused(SwitchbackError.Code)

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .refused(let code): "refused with \(code)"
            }
        }
    }

    /// Faults asked for with the authorization request (`emulator_fault`) that show at sign-in.
    static let signInFaults: [(Fault, Expected)] = [
        (.badSignature, .refused(.signatureInvalid)),
        (.hs256, .refused(.unsupportedAlgorithm)),
        (.algNone, .refused(.unsupportedAlgorithm)),
        (.wrongIssuer, .refused(.idTokenIssuerInvalid)),
        (.missingIssuer, .refused(.idTokenIssuerInvalid)),
        (.wrongAudience, .refused(.audienceInvalid)),
        (.missingAudience, .refused(.audienceInvalid)),
        (.missingSubject, .refused(.subjectMissing)),
        (.missingIssuedAt, .refused(.issuedAtInvalid)),
        (.wrongNonce, .refused(.nonceMismatch)),
        (.badAccessTokenHash, .refused(.accessTokenHashInvalid)),
        (.missingAccessTokenHash, .accepted),
        (.badCodeHash, .refused(.codeHashInvalid)),
        (.missingCodeHash, .accepted),
        (.wrongIssuerParameter, .refused(.issuerParameterMismatch)),
        (.missingIssuerParameter, .refused(.issuerParameterMissing)),
        (.authorizationError, .refused(.authorizationError)),
        (.tokenUnavailable, .refused(.tokenEndpointError)),
        (.tokenGarbage, .refused(.invalidTokenResponse)),
    ]

    static func signIn(
        _ client: OIDCClient, faults: [Fault] = [], mode: ResponseMode = .query
    ) async throws -> Credential {
        var options = AuthorizationOptions(responseMode: mode)
        if !faults.isEmpty { options.extraParameters = [("emulator_fault", faults.map(\.rawValue).joined(separator: ","))] }
        let session = try await client.prepareAuthorization(options)
        return try await client.completeAuthorization(try await callback(for: session), session: session)
    }

    /// Plays the browser and turns where it lands into the callback the app receives.
    static func callback(for session: AuthorizationSession) async throws -> AuthorizationCallback {
        try EmulatorBrowser.callback(try await EmulatorBrowser().signIn(session.authorizationURL))
    }

    static func check(_ expected: Expected, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Credential) async {
        switch expected {
        case .accepted:
            do {
                let credential = try await body()
                #expect(credential.subject == "9b1f7c2e-alice", sourceLocation: sourceLocation)
            } catch {
                Issue.record("expected success, got \(error)", sourceLocation: sourceLocation)
            }
        case .refused(let code):
            await expectCode(code, sourceLocation: sourceLocation, body)
        }
    }

    @Test("per-request faults at sign-in, for the RS256 and the ES256 client", arguments: signInFaults, ["native-rs", "native-es"])
    func signInFault(fault: (Fault, Expected), clientID: String) async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator, clientID: clientID)
            await Self.check(fault.1) { try await Self.signIn(client, faults: [fault.0]) }
        }
    }

    @Test("an authorization error delivered by form_post reaches the app as the provider's typed error")
    func formPostError() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let error = await expectFailure("an error response must not sign in") {
                try await Self.signIn(client, faults: [.authorizationError], mode: .formPost)
            }
            #expect(error?.code == .authorizationError)
            #expect(error?.oauthError?.error == "access_denied")
        }
    }

    @Test(
        "refreshed ID tokens that change iss, sub or aud are refused",
        arguments: [
            (Fault.refreshChangesIssuer, SwitchbackError.Code.idTokenIssuerInvalid),
            (.refreshChangesSubject, .refreshedIDTokenMismatch),
            (.refreshChangesAudience, .refreshedIDTokenMismatch),
        ])
    func refreshFault(fault: Fault, code: SwitchbackError.Code) async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            // The fault follows the grant: sign-in is untouched, the refresh shows it.
            let credential = try await Self.signIn(client, faults: [fault])
            await expectCode(code) { try await client.refresh(credential) }
        }
    }

    @Test("keys rotated after the first sign-in, just before signing: the client refetches the JWKS and accepts")
    func keyRotation() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let first = try await Self.signIn(client)
            let second = try await Self.signIn(client, faults: [.rotateKeys])
            let firstKid = try CompactJWS(try #require(first.idToken), malformed: .idTokenMalformed).header.kid
            let secondKid = try CompactJWS(try #require(second.idToken), malformed: .idTokenMalformed).header.kid
            #expect(firstKid != nil && secondKid != nil && firstKid != secondKid)
            // The first token's key is gone: it no longer verifies.
            await expectCode(.unknownSigningKey) {
                try await client.idTokenValidator().validate(try #require(first.idToken), expectations: .init(nonce: first.idTokenClaims?.nonce))
            }
        }
    }

    @Test("keys rotated over HTTP (POST /emulator/rotate-keys): new kids, and the client follows")
    func rotationOverHTTP() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let before = try await Self.signIn(client)
            let rotated = try await URLSessionTransport().send(.form(try #require(URL(string: emulator.issuer + "/emulator/rotate-keys")), []))
            #expect(rotated.status == 200)
            let beforeToken = try #require(before.idToken)
            let oldKid = try #require(try CompactJWS(beforeToken, malformed: .idTokenMalformed).header.kid)
            #expect(!String(decoding: rotated.body, as: UTF8.self).contains(oldKid))
            let after = try await Self.signIn(client)
            #expect(after.subject == "9b1f7c2e-alice")
        }
    }

    @Test("an unparseable key in the JWKS is skipped; the good keys still verify")
    func unparseableKey() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            await emulator.setFaults([.unparseableJWK], forClient: "native-es")
            let jwks = try await URLSessionTransport().send(HTTPRequest(method: .get, url: try #require(URL(string: emulator.issuer + "/jwks"))))
            #expect(String(decoding: jwks.body, as: UTF8.self).contains("\"kid\":\"unparseable\""))
            for clientID in ["native-rs", "native-es"] {
                let credential = try await Self.signIn(EmulatorHarness.client(emulator, clientID: clientID))
                #expect(credential.subject == "9b1f7c2e-alice")
            }
        }
    }

    @Test("a token endpoint that is down does not use the code up: the same callback completes once it is back")
    func tokenEndpointRecovers() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            await emulator.setFaults([.tokenUnavailable], forClient: "native-rs")
            let session = try await client.prepareAuthorization()
            let callback = try await Self.callback(for: session)
            let error = await expectFailure("a 503 must not sign in") { try await client.completeAuthorization(callback, session: session) }
            #expect(error?.code == .tokenEndpointError)
            #expect(error?.httpStatus == 503)
            #expect(error?.oauthError?.error == "temporarily_unavailable")
            await emulator.setFaults([], forClient: "native-rs")
            let credential = try await client.completeAuthorization(callback, session: session)
            #expect(credential.subject == "9b1f7c2e-alice")
        }
    }

    @Test("a token endpoint slower than the client's timeout is a transport failure, not a hang")
    func tokenEndpointSlow() async throws {
        var configuration = EmulatorConfiguration.defaults
        configuration.slowResponseDelay = 60
        configuration.clients[0].faults = [.tokenSlow]
        try await EmulatorHarness.withEmulator(configuration: configuration) { emulator in
            func client(_ clientID: String) throws -> OIDCClient {
                OIDCClient(
                    configuration: ClientConfiguration(
                        clientID: clientID, redirectURI: try #require(URL(string: "com.example.app:/oauth/callback"))),
                    provider: .discovery(issuer: emulator.issuer),
                    transport: URLSessionTransport(timeout: 40)
                )
            }
            // The same 40 s timeout is enough without the fault, even on a loaded machine (2 s was not, once in
            // CI, nor 8 s, 15 s or 25 s, for the control's discovery request with the whole suite running on two
            // cores); with it the server would answer after 60 s (successfully), so the error can only come from
            // the client's own timeout.
            let control = try await Self.signIn(try client("native-es"))
            #expect(control.subject == "9b1f7c2e-alice")
            await expectCode(.transportFailed) { try await Self.signIn(try client("native-rs")) }
        }
    }

    @Test("faults switched per client at run time over HTTP, as a test of the command-line emulator would")
    func faultsOverHTTP() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let transport = URLSessionTransport()
            let control = try #require(URL(string: emulator.issuer + "/emulator/faults"))
            let set = try await transport.send(.form(control, [("client_id", "native-rs"), ("faults", "wrong-nonce")]))
            #expect(set.status == 200)
            let client = EmulatorHarness.client(emulator)
            await expectCode(.nonceMismatch) { try await Self.signIn(client) }
            // Other clients are untouched.
            #expect(try await Self.signIn(EmulatorHarness.client(emulator, clientID: "native-es")).subject == "9b1f7c2e-alice")
            let unknown = try await transport.send(.form(control, [("client_id", "native-rs"), ("faults", "wrong-nonce,no-such-fault")]))
            #expect(unknown.status == 400)
            #expect(String(decoding: unknown.body, as: UTF8.self).contains("no-such-fault"))
            let cleared = try await transport.send(.form(control, [("client_id", "native-rs"), ("faults", "")]))
            #expect(cleared.status == 200)
            #expect(try await Self.signIn(client).subject == "9b1f7c2e-alice")
        }
    }

    @Test("an unknown per-request fault is an invalid_request error redirect, not a crash")
    func unknownRequestFault() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            var options = AuthorizationOptions()
            options.extraParameters = [("emulator_fault", "no-such-fault")]
            let session = try await client.prepareAuthorization(options)
            let page = try await URLSessionTransport().send(HTTPRequest(method: .get, url: session.authorizationURL))
            #expect(page.status == 302)
            let location = try #require(page.headers["location"].flatMap { URL(string: $0) })
            await expectCode(.authorizationError) { try await client.completeAuthorization(.redirect(location), session: session) }
        }
    }

    @Test("the same callback completed twice at once: one sign-in, one callbackReplayed, and one redemption")
    func concurrentCompletion() async throws {
        try await EmulatorHarness.withEmulator { emulator in
            let client = EmulatorHarness.client(emulator)
            let session = try await client.prepareAuthorization()
            let callback = try await Self.callback(for: session)
            async let first = Result(catching: { try await client.completeAuthorization(callback, session: session) })
            async let second = Result(catching: { try await client.completeAuthorization(callback, session: session) })
            let results = await [first, second]
            let credentials = results.compactMap { try? $0.get() }
            let codes = results.compactMap { result -> SwitchbackError.Code? in
                if case .failure(let error as SwitchbackError) = result { return error.code }
                return nil
            }
            #expect(credentials.count == 1)
            #expect(codes == [.callbackReplayed])
            // Had the code been redeemed twice, the provider would have revoked the winner's tokens.
            #expect(try await client.userInfo(for: try #require(credentials.first))["sub"] == .string("9b1f7c2e-alice"))
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
