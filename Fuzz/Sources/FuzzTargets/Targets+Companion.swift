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

    /// The JSON bodies the companion's app-facing routes decode.
    static let companionBodies = FuzzTarget(
        "companion-bodies",
        asserts: "every companion request body type decodes or throws DecodingError; a body that decodes, encoded again, decodes equal"
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
    }
}
