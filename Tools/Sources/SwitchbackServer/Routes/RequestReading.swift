import Foundation
@_spi(SwitchbackInternals) import Switchback

/// What the routes read from a request's header or query text before anything is looked up: functions of
/// the text alone, apart from the routes, so that the fuzz build compiles them without the server stack.
enum RequestReading {
    /// The session ID an `Authorization: Session …` header carries, else the first cookie named `cookieName`
    /// in a `Cookie` header (RFC 6265 §5.4: pairs joined by `;`), when it has the shape of one this server issued.
    static func sessionID(authorization: String?, cookie: String?, cookieName: String) -> String? {
        var id: Substring?
        if let authorization, authorization.lowercased().hasPrefix("session ") {
            id = authorization.dropFirst(8)
        } else if let cookie {
            id = cookie.split(separator: ";").lazy.map { $0.trimmingSpaces() }
                .first { $0.hasPrefix(cookieName + "=") }
                .map { $0.dropFirst(cookieName.count + 1) }
        }
        guard let id, Secrets.isIssued(String(id)) else { return nil }
        return String(id)
    }

    /// Why an authorization response's query was not forwarded; the text names the rule, never the values.
    struct Refused: Error, Equatable {
        let message: String
    }

    /// The members of an authorization response the response page forwards (RFC 6749 §4.1.2 and §4.1.2.1,
    /// RFC 9207 `iss`), in this order; anything else the query carries stays behind.
    static let responseMembers = ["code", "state", "iss", "error", "error_description", "error_uri"]

    /// The response members of `query` (form rules: `+` is a space), each at most once (RFC 6749 §3.1),
    /// with `state` and a code or an error.
    static func authorizationResponse(query: String) throws(Refused) -> [(String, String)] {
        guard let fields = FormEncoding.decode(query, plusIsSpace: true) else { throw Refused(message: "the answer's query is malformed") }
        var forwarded: [(String, String)] = []
        for name in responseMembers {
            let values = fields.filter { $0.0 == name }.map(\.1)
            guard values.count <= 1 else { throw Refused(message: "the answer repeats \(name)") }
            if let value = values.first { forwarded.append((name, value)) }
        }
        guard forwarded.contains(where: { $0.0 == "code" || $0.0 == "error" }), forwarded.contains(where: { $0.0 == "state" }) else {
            throw Refused(message: "this is not an authorization response: it needs state and a code or an error")
        }
        return forwarded
    }
}
