import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport

@Suite("RFC 9207 iss response parameter and callback checks")
struct RFC9207Tests {
    static let redirect = URL(string: "https://client.example/cb")!

    static func session(state: String) -> AuthorizationSession {
        AuthorizationSession(
            issuer: "https://honest.as.example", clientID: "c", redirectURI: redirect, state: state, nonce: "n",
            pkce: try! PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), responseMode: .query, maxAge: nil,
            requestURI: nil, authorizationURL: URL(string: "https://honest.as.example/authorize")!, createdAt: Date()
        )
    }

    static func metadata(issuer: String = "https://honest.as.example", promisesIss: Bool = false) -> ProviderMetadata {
        ProviderMetadata(
            issuer: issuer, authorizationEndpoint: URL(string: "\(issuer)/authorize")!,
            tokenEndpoint: URL(string: "\(issuer)/token")!, jwksURI: URL(string: "\(issuer)/jwks")!,
            authorizationResponseIssParameterSupported: promisesIss
        )
    }

    static let successQuery =
        "code=x1848ZT64p4IirMPT0R-X3141MFPTuBX-VFL_cvaplMH58&state=ZWVlNDBlYzA1NjdkMDNhYjg3ZjUxZjAyNGQzMTM2NzI&iss=https%3A%2F%2Fhonest.as.example"
    static let errorQuery = "error=access_denied&state=N2JjNGJhY2JiZjRhYzA3MGJkMzNmMDE5OWJhZmJhZjA&iss=https%3A%2F%2Fhonest.as.example"

    func check(_ query: String, state: String, metadata: ProviderMetadata, url: String = "https://client.example/cb") throws -> String {
        try CallbackValidator.code(
            from: .redirect(URL(string: "\(url)?\(query)")!), session: Self.session(state: state), metadata: metadata
        )
    }

    @Test("§2.1 example: iss matches the issuer, the code is accepted")
    func successExample() throws {
        let code = try check(Self.successQuery, state: "ZWVlNDBlYzA1NjdkMDNhYjg3ZjUxZjAyNGQzMTM2NzI", metadata: Self.metadata(promisesIss: true))
        #expect(code == "x1848ZT64p4IirMPT0R-X3141MFPTuBX-VFL_cvaplMH58")
    }

    @Test("§2.1 example at a client whose issuer differs: rejected before redeeming")
    func successExampleWrongIssuer() {
        expectCode(.issuerParameterMismatch) {
            try check(
                Self.successQuery, state: "ZWVlNDBlYzA1NjdkMDNhYjg3ZjUxZjAyNGQzMTM2NzI", metadata: Self.metadata(issuer: "https://attacker.example"))
        }
    }

    @Test("§2.2 error example: the OAuth error is surfaced when iss matches")
    func errorExample() throws {
        do {
            _ = try check(Self.errorQuery, state: "N2JjNGJhY2JiZjRhYzA3MGJkMzNmMDE5OWJhZmJhZjA", metadata: Self.metadata())
            Issue.record("an error response must throw")
        } catch let error as SwitchbackError {
            #expect(error.code == .authorizationError)
            #expect(error.oauthError?.error == "access_denied")
        }
    }

    @Test("§2.2 error example at a client whose issuer differs: the error's origin is not trusted")
    func errorExampleWrongIssuer() {
        expectCode(.issuerParameterMismatch) {
            try check(Self.errorQuery, state: "N2JjNGJhY2JiZjRhYzA3MGJkMzNmMDE5OWJhZmJhZjA", metadata: Self.metadata(issuer: "https://other.example"))
        }
    }

    @Test("missing iss is rejected when metadata promises it")
    func missingIssWhenPromised() {
        expectCode(.issuerParameterMissing) {
            try check("code=abc&state=s1", state: "s1", metadata: Self.metadata(promisesIss: true))
        }
    }

    @Test("missing iss is accepted when metadata does not promise it")
    func missingIssNotPromised() throws {
        #expect(try check("code=abc&state=s1", state: "s1", metadata: Self.metadata()) == "abc")
    }

    @Test("iss is compared exactly after URL-decoding: a trailing slash is a different issuer")
    func issTrailingSlash() {
        expectCode(.issuerParameterMismatch) {
            try check("code=abc&state=s1&iss=https%3A%2F%2Fhonest.as.example%2F", state: "s1", metadata: Self.metadata())
        }
    }

    @Test("a wrong state is a thrown error, even on an error response")
    func stateMismatch() {
        expectCode(.stateMismatch) { try check("code=abc&state=other", state: "s1", metadata: Self.metadata()) }
        expectCode(.stateMismatch) { try check("error=access_denied&state=other", state: "s1", metadata: Self.metadata()) }
        expectCode(.stateMissing) { try check("code=abc", state: "s1", metadata: Self.metadata()) }
    }

    @Test("a parameter given twice is refused")
    func duplicateParameter() {
        expectCode(.duplicateParameter) { try check("code=a&code=b&state=s1", state: "s1", metadata: Self.metadata()) }
        expectCode(.duplicateParameter) { try check("code=a&state=s1&state=s1", state: "s1", metadata: Self.metadata()) }
    }

    @Test(
        "look-alike redirect URIs are rejected",
        arguments: [
            "http://client.example/cb", "https://client.example.evil/cb", "https://evil.example/cb", "https://client.example:8443/cb",
            "https://client.example/cb/", "https://client.example/CB", "https://client.example/cb2", "https://user@client.example/cb",
            "https://client.example/cb%2F", "https://client.example//cb", "myapp://client.example/cb",
        ])
    func lookAlikeRedirect(url: String) {
        expectCode(.redirectURIMismatch) { try check("code=abc&state=s1", state: "s1", metadata: Self.metadata(), url: url) }
    }

    @Test("case in scheme and host and an explicit default port still match")
    func equivalentRedirect() throws {
        #expect(try check("code=abc&state=s1", state: "s1", metadata: Self.metadata(), url: "HTTPS://Client.Example:443/cb") == "abc")
    }

    @Test("an error response carries error_description and error_uri")
    func errorFields() {
        do {
            _ = try check(
                "error=invalid_request&error_description=bad%20thing&error_uri=https%3A%2F%2Fd.example&state=s1", state: "s1",
                metadata: Self.metadata())
        } catch let error as SwitchbackError {
            #expect(error.oauthError == OAuthErrorResponse(error: "invalid_request", errorDescription: "bad thing", errorURI: "https://d.example"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("a success callback without a code is refused")
    func codeMissing() {
        expectCode(.codeMissing) { try check("state=s1", state: "s1", metadata: Self.metadata()) }
    }

    @Test("fragment and form_post responses are read from the right place")
    func otherModes() throws {
        let session = Self.session(state: "s1")
        let fragmentSession = AuthorizationSession(
            issuer: session.issuer, clientID: "c", redirectURI: Self.redirect, state: "s1", nonce: "n", pkce: session.pkce,
            responseMode: .fragment, maxAge: nil, requestURI: nil, authorizationURL: session.authorizationURL, createdAt: Date()
        )
        #expect(
            try CallbackValidator.code(
                from: .redirect(URL(string: "https://client.example/cb#code=f1&state=s1")!), session: fragmentSession, metadata: Self.metadata())
                == "f1")
        // A response in the query for a fragment session is named as such, not taken for a missing state.
        expectCode(.malformedResponse) {
            try CallbackValidator.code(
                from: .redirect(URL(string: "https://client.example/cb?code=f1&state=s1")!), session: fragmentSession, metadata: Self.metadata())
        }
        let postSession = AuthorizationSession(
            issuer: session.issuer, clientID: "c", redirectURI: Self.redirect, state: "a b/c&d", nonce: "n", pkce: session.pkce,
            responseMode: .formPost, maxAge: nil, requestURI: nil, authorizationURL: session.authorizationURL, createdAt: Date()
        )
        let body = Data("code=p1&state=a+b%2Fc%26d".utf8)
        #expect(try CallbackValidator.code(from: .formPost(Self.redirect, body: body), session: postSession, metadata: Self.metadata()) == "p1")
    }

    @Test("a form_post error response is surfaced, not swallowed")
    func formPostError() {
        let base = Self.session(state: "s1")
        let session = AuthorizationSession(
            issuer: base.issuer, clientID: "c", redirectURI: Self.redirect, state: "s1", nonce: "n", pkce: base.pkce,
            responseMode: .formPost, maxAge: nil, requestURI: nil, authorizationURL: base.authorizationURL, createdAt: Date()
        )
        expectCode(.authorizationError) {
            try CallbackValidator.code(
                from: .formPost(Self.redirect, body: Data("error=access_denied&state=s1".utf8)), session: session, metadata: Self.metadata())
        }
    }
}
