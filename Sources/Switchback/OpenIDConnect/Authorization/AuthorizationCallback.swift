public import Foundation

/// The authorization response as it reached the app or its backend.
public enum AuthorizationCallback: Sendable, Equatable {
    /// A redirect; the parameters are in the query or the fragment, per the response mode.
    case redirect(URL)
    /// A `form_post` response: the URL it was posted to and the `application/x-www-form-urlencoded` body.
    case formPost(URL, body: Data)

    /// The URL the response arrived at.
    public var url: URL {
        switch self {
        case .redirect(let url), .formPost(let url, _): url
        }
    }
}

/// The parameters of an authorization response, each present at most once.
struct AuthorizationResponse: Sendable, Equatable {
    let parameters: [String: String]

    /// Reads the parameters from where `mode` puts them. A parameter given twice is an error (RFC 6749 §3.1).
    init(_ callback: AuthorizationCallback, mode: ResponseMode) throws {
        let fields: [(String, String)]?
        switch (callback, mode) {
        case (.formPost(_, let body), .formPost):
            fields = String(data: body, encoding: .utf8).flatMap { FormEncoding.decode($0, plusIsSpace: true) }
        case (.redirect(let url), .query), (.redirect(let url), .fragment):
            let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            let (expected, other) =
                mode == .query
                ? (components?.percentEncodedQuery, components?.percentEncodedFragment)
                : (components?.percentEncodedFragment, components?.percentEncodedQuery)
            // A provider that answers in the other part (a fragment-by-default provider) would otherwise
            // look like a response without state.
            if (expected ?? "").isEmpty, let other, other.contains("state=") || other.contains("code=") || other.contains("error=") {
                throw SwitchbackError(
                    .malformedResponse,
                    "the response arrived in the \(mode == .query ? "fragment" : "query"), but response mode \(mode.rawValue) was requested; request the mode the provider uses"
                )
            }
            fields = FormEncoding.decode(expected ?? "", plusIsSpace: true)
        case (.formPost, _), (.redirect, .formPost):
            throw SwitchbackError(.malformedResponse, "the callback arrived as \(callback.kind), but response mode \(mode.rawValue) was requested")
        }
        guard let fields else {
            throw SwitchbackError(.malformedResponse, "the callback parameters are not valid percent-encoding")
        }
        var parameters: [String: String] = [:]
        for (name, value) in fields {
            guard parameters.updateValue(value, forKey: name) == nil else {
                throw SwitchbackError(.duplicateParameter, "the callback carries \"\(name.prefix(40))\" more than once")
            }
        }
        self.parameters = parameters
    }

    /// The OAuth error response, when the provider sent one.
    public var oauthError: OAuthErrorResponse? {
        parameters["error"].map {
            OAuthErrorResponse(error: $0, errorDescription: parameters["error_description"], errorURI: parameters["error_uri"])
        }
    }
}

extension AuthorizationCallback {
    fileprivate var kind: String {
        switch self {
        case .redirect: "a redirect"
        case .formPost: "a form post"
        }
    }
}
