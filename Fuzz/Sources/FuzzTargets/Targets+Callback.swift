import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback

/// One prepared sign-in whose callback the fuzzer writes: the client checks it as an app would, and a
/// callback that passes the checks reaches a token endpoint that answers `invalid_grant`.
enum CallbackFuzz {
    static let issuer = "https://id.example.com"
    static let redirectURI = URL(string: "https://app.example.com/oauth/callback")!
    static let transport = TokenEndpoint()
    static let client = OIDCClient(
        configuration: ClientConfiguration(clientID: "app", redirectURI: redirectURI),
        provider: .static(
            ProviderMetadata(
                issuer: issuer, authorizationEndpoint: URL(string: "\(issuer)/authorize")!, tokenEndpoint: URL(string: "\(issuer)/token")!,
                jwksURI: URL(string: "\(issuer)/jwks")!)),
        transport: transport, logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))
    static let session = blocking { try! await client.prepareAuthorization() }
}

/// A token endpoint that refuses every code, keeping only the last request and a count (a transport that
/// kept them all would grow for the whole run).
final class TokenEndpoint: HTTPTransport, @unchecked Sendable {  // @unchecked: every access holds `lock`.
    private let lock = NSLock()
    private var sent = 0
    private var last: HTTPRequest?

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        lock.withLock {
            sent += 1
            last = request
        }
        return HTTPResponse(status: 400, headers: ["content-type": "application/json"], body: Data(#"{"error":"invalid_grant"}"#.utf8))
    }

    var count: Int { lock.withLock { sent } }
    var lastRequest: HTTPRequest? { lock.withLock { last } }
}

extension FuzzTarget {
    /// An authorization response at the app's redirect URI, against URLComponents' reading of the same URL.
    static let callback = FuzzTarget(
        "callback",
        asserts: """
            a callback URL (STATE in it stands for the sign-in's state) is refused with SwitchbackError, or reaches the \
            token endpoint only when URLComponents reads \
            it as the redirect URI's scheme, host and path with this sign-in's state once and a code, and the code sent \
            is the code URLComponents reads
            """
    ) { input in
        // `STATE` stands for this sign-in's random state, so that the fuzzer reaches what follows the state check.
        guard let text = text(input)?.replacingOccurrences(of: "STATE", with: CallbackFuzz.session.state), let url = URL(string: text) else {
            return
        }
        let before = CallbackFuzz.transport.count
        let outcome: Result<Credential, any Error> = blocking {
            do {
                return .success(try await CallbackFuzz.client.completeAuthorization(.redirect(url), session: CallbackFuzz.session))
            } catch { return .failure(error) }
        }
        guard case .failure(let error) = outcome else {
            require(false, "a sign-in completed against a token endpoint that refuses every code")
            return
        }
        require(error is SwitchbackError, "completeAuthorization threw \(type(of: error))")
        let sent = CallbackFuzz.transport.count - before
        guard sent > 0, let request = CallbackFuzz.transport.lastRequest else { return }
        require(sent == 1, "more than one request for one callback")
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let expected = URLComponents(url: CallbackFuzz.redirectURI, resolvingAgainstBaseURL: false)
        require(
            components?.scheme?.lowercased() == expected?.scheme && components?.host?.lowercased() == expected?.host
                && components?.path == expected?.path,
            "a callback URLComponents does not read as the redirect URI reached the token endpoint")
        // Form rules for the query's values (`+` is a space), as a browser's URLSearchParams reads them.
        let items = (components?.percentEncodedQueryItems ?? []).map {
            URLQueryItem(name: $0.name, value: $0.value.flatMap { $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding })
        }
        let states = items.filter { $0.name == "state" }
        require(states.count == 1 && states[0].value == CallbackFuzz.session.state, "a callback without this sign-in's state once was redeemed")
        let codes = items.filter { $0.name == "code" }
        let body = FormEncoding.decode(String(decoding: request.body ?? Data(), as: UTF8.self), plusIsSpace: true) ?? []
        let sentCode = body.first { $0.0 == "code" }?.1
        require(codes.count == 1 && codes[0].value == sentCode && sentCode?.isEmpty == false, "the code sent is not the one URLComponents reads")
    }
}
