import Foundation
@_spi(SwitchbackInternals) import Switchback
import ServerParsers

extension FuzzTarget {
    /// The `X-Forwarded-For` entry a rate limit keys on.
    static let clientAddress = FuzzTarget(
        "client-address",
        asserts: """
            ClientAddress reads an address or nothing; an address it reads agrees with inet_pton where the text is a bare \
            address, and its bucket, read again as an address, gives the same bucket
            """
    ) { input in
        guard let text = text(input) else { return }
        if let failure = ServerParsersFuzz.clientAddress(text) { require(false, failure) }
    }

    /// A hand-off's `goto` against the allow-list.
    static let redirect = FuzzTarget(
        "redirect",
        asserts: """
            RedirectAllowList permits a URL only when URLComponents reads it as https (http on loopback) on an allowed \
            host, with a path under an allowed prefix at a segment boundary and no user-info
            """
    ) { input in
        guard let text = text(input) else { return }
        if let failure = ServerParsersFuzz.redirect(text) { require(false, failure) }
    }

    /// The session a request names: an `Authorization: Session …` header, else the session cookie.
    static let sessionCookie = FuzzTarget(
        "session-cookie",
        asserts: """
            RequestReading.sessionID reads from a Cookie header the first pair with the session cookie's name, as a \
            split on ; with Foundation's trim reads it, and only an ID of the issued shape; an Authorization: Session \
            header comes first, and one of another scheme leaves the cookie to be read
            """
    ) { input in
        guard let text = text(input) else { return }
        if let failure = ServerParsersFuzz.sessionCookie(text) { require(false, failure) }
    }

    /// The response page's query (the provider's redirect to the companion's `/response`).
    static let responseQuery = FuzzTarget(
        "response-query",
        asserts: """
            the response page forwards state and a code or an error, each response member at most once and in order, \
            with the values URLComponents reads (form rules), and the link it forwards reads back in the app, with \
            URLComponents, as the same members and values
            """
    ) { input in
        guard let text = text(input) else { return }
        if let failure = ServerParsersFuzz.responseQuery(text) { require(false, failure) }
    }

    /// An IACA's revocation list, fetched from the distribution point a document signer names, and those names.
    static let crl = FuzzTarget(
        "crl",
        asserts: """
            RevocationList reads a list (after an even first byte) or refuses it with its Refused error; a list read \
            signs the input's own tbsCertList bytes, keeps serials without leading zeros, reads the same again, and is \
            never believed under an IACA whose key signed nothing here; a certificate's distribution points (after an \
            odd first byte) are http(s) URLs with a host
            """
    ) { input in
        if let failure = ServerParsersFuzz.revocationList(Array(input)) { require(false, failure) }
    }

    /// The JSON bodies the companion's app-facing routes decode.
    static let companionBodies = FuzzTarget(
        "companion-bodies",
        asserts:
            "every companion request body type decodes or throws DecodingError; a body that decodes, encoded again, decodes equal; a permission request has exactly its two fields"
    ) { input in
        func check<Body: Codable & Equatable>(_ type: Body.Type) {
            do {
                let body = try JSONDecoder().decode(type, from: input)
                require((try? JSONDecoder().decode(type, from: JSONEncoder().encode(body))) == body, "\(type) does not survive encoding")
            } catch is DecodingError {
            } catch {
                require(false, "\(type) threw \(Swift.type(of: error))")
            }
        }
        check(CompanionAPI.ExchangeStart.self)
        check(CompanionAPI.CompletionStart.self)
        check(CompanionAPI.BridgeStart.self)
        check(CompanionAPI.Exchange.self)
        check(CompanionAPI.CompletionStatus.self)
        check(CompanionAPI.BridgeRedeem.self)
        check(CompanionAPI.Revocation.self)
        check(CompanionAPI.PermissionRequest.self)
        check(CompanionAPI.HandOffRequest.self)
        check(CompanionAPI.WalletStart.self)
        check(CompanionAPI.WalletRedeem.self)
        check(CompanionAPI.AppleIdentityVerify.self)
        check(CompanionAPI.AttestationRegistration.self)
        // `POST /permission` takes its two fields and nothing else: the permission's type and statement are the backend's.
        if (try? JSONDecoder().decode(CompanionAPI.PermissionRequest.self, from: input)) != nil {
            let names = ((try? JSONSerialization.jsonObject(with: input)) as? [String: Any]).map { Set($0.keys) }
            require(names == ["app_callback_uri", "statement_id"], "a permission request with other fields was taken: \(names ?? [])")
        }
    }
}
