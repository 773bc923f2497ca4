import Foundation
import HTTPTypes
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback

extension CompanionService {
    /// `POST /revoke`: revokes one token the app holds, at the provider's RFC 7009 endpoint, authenticated as
    /// this server's client. An app whose codes the companion redeems (UAE Pass's and Norwegian BankID's
    /// client secret is the companion's) cannot revoke its own tokens otherwise.
    ///
    /// Anyone may call it: revoking a token takes nothing from whoever holds it but that token, and the
    /// provider revokes only tokens issued to this client (RFC 7009 §2.1) and answers 200 for one it does
    /// not know (§2.2), so the route tells nobody whether a token exists. The token is never logged.
    func revoke(_ request: Request) async throws -> Response {
        guard configuration.exchange != nil else { throw CompanionError(.notConfigured, "backend code exchange is off: the app revokes itself") }
        let body = try await decode(CompanionAPI.Revocation.self, from: request)
        guard (1...8192).contains(body.token.utf8.count) else { throw CompanionError(.invalidRequest, "the token is empty or too long") }
        guard ["refresh_token", "access_token"].contains(body.tokenTypeHint) else {
            throw CompanionError(.invalidRequest, "token_type_hint is refresh_token or access_token")
        }
        let client = try await requireProvider().anyClient()
        do {
            try await client.tokenClient().revoke(body.token, typeHint: body.tokenTypeHint)
        } catch let error as SwitchbackError where error.code == .invalidConfiguration {
            throw CompanionError(.notConfigured, "the provider publishes no revocation endpoint")
        } catch let error as SwitchbackError where (400..<500).contains(error.httpStatus ?? 0) {
            // A token the provider will not revoke for this client (another client's, a type it does not take)
            // is answered as RFC 7009 §2.2 answers an unknown one: the caller learns nothing of which tokens exist.
            logger.notice(
                "a revocation was refused by the provider",
                metadata: ["reason": "\(error.oauthError?.error.prefix(40) ?? "")", "hint": "\(body.tokenTypeHint)"])
            return Replies.json(["revoked": body.tokenTypeHint])
        } catch let error as SwitchbackError {
            logger.notice("a revocation failed", metadata: ["reason": "\(error.code)", "hint": "\(body.tokenTypeHint)"])
            throw CompanionError(.providerFailed, "the provider could not be asked to revoke the token")
        }
        metrics.record(.revocation)
        return Replies.json(["revoked": body.tokenTypeHint])
    }
}
