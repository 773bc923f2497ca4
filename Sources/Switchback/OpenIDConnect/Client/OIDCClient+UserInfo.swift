import Foundation

extension OIDCClient {
    /// How the access token is presented at the userinfo endpoint (RFC 6750 §2.1 and §2.2).
    public enum UserInfoTokenPlacement: Sendable {
        /// `GET` with `Authorization: Bearer` (the default, and what RFC 6750 recommends).
        case authorizationHeader
        /// `POST` with `access_token` in a form body, for providers that accept only that.
        case formBody
    }

    /// Fetches the userinfo claims with the access token; the `sub` must equal the ID token's.
    public func userInfo(for credential: Credential, placement: UserInfoTokenPlacement = .authorizationHeader) async throws -> [String: JSONValue] {
        let metadata = try await metadata()
        guard let endpoint = metadata.userinfoEndpoint else {
            throw SwitchbackError(.invalidConfiguration, "the provider publishes no userinfo_endpoint")
        }
        let accept = "application/json, application/jwt"
        let response: HTTPResponse
        switch placement {
        case .formBody where credential.tokenType.caseInsensitiveCompare("DPoP") != .orderedSame:
            do {
                response = try await transport.send(.form(endpoint, [("access_token", credential.accessToken)], headers: ["Accept": accept]))
            } catch let error as CancellationError {
                throw error
            } catch {
                throw SwitchbackError(.transportFailed, "could not reach the userinfo endpoint", underlying: error)
            }
        default:
            // RFC 9449 §7: a DPoP-bound token goes in the header only, with a proof naming this request and token.
            response = try await send(HTTPRequest(method: .get, url: endpoint, headers: ["Accept": accept]), authorizedBy: credential)
        }
        guard response.status == 200 else {
            throw SwitchbackError(.userInfoInvalid, "the userinfo endpoint answered HTTP \(response.status)", httpStatus: response.status)
        }
        let claims = try await userInfoClaims(response, metadata: metadata)
        guard case .string(let sub)? = claims["sub"], !sub.isEmpty else {
            throw SwitchbackError(.userInfoInvalid, "the userinfo response has no sub")
        }
        if let expected = credential.subject, sub != expected {
            throw SwitchbackError(.userInfoSubjectMismatch, "the userinfo sub differs from the ID token's")
        }
        return claims
    }

    private func userInfoClaims(_ response: HTTPResponse, metadata: ProviderMetadata) async throws -> [String: JSONValue] {
        guard response.mediaType == "application/jwt" else {
            guard let claims = try? JSONDecoder().decode([String: JSONValue].self, from: response.body) else {
                throw SwitchbackError(.userInfoInvalid, "the userinfo response is not a JSON object")
            }
            return claims
        }
        let token = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        var allowed = configuration.idTokenSigningAlgorithms
        if let supported = metadata.userinfoSigningAlgValuesSupported { allowed.formIntersection(supported) }
        let payload = try await idTokenValidator().verifiedPayload(of: token, allowed: allowed, malformed: .userInfoInvalid)
        guard let claims = try? JSONDecoder().decode([String: JSONValue].self, from: payload) else {
            throw SwitchbackError(.userInfoInvalid, "the signed userinfo payload is not a JSON object")
        }
        if let iss = claims["iss"], iss != .string(metadata.issuer) {
            throw SwitchbackError(.userInfoInvalid, "the signed userinfo names another issuer")
        }
        switch claims["aud"] {
        case nil, .string(configuration.clientID)?: break
        case .array(let audiences)? where audiences.contains(.string(configuration.clientID)): break
        default: throw SwitchbackError(.userInfoInvalid, "the signed userinfo is addressed to another client")
        }
        return claims
    }
}
