public import Foundation
public import Logging
@_spi(SwitchbackInternals) public import Switchback

/// Where a credential's issuer keys come from, given what the credential says of its issuer before its
/// signature is checked: its `iss` and its header's `kid` and `x5c`. The source decides whether that issuer
/// is one it trusts; the signature is then checked with the keys it returns.
public protocol CredentialIssuerKeys: Sendable {
    /// The keys for a credential naming `issuer` (nil when it has no `iss`), whose header carries
    /// `certificates` (`x5c`, leaf first, DER; empty when absent) and `keyID` (`kid`). Throws
    /// ``SwitchbackError/Code/presentationInvalid`` for an issuer it does not trust.
    func keys(issuer: String?, certificates: [Data], keyID: String?) async throws -> JWKSCache
    /// The keys of the Status List Token at `uri` (draft-ietf-oauth-status-list-20 §11.3) for a credential
    /// naming `issuer`, whose own chain is `credentialChain`; the token's header carries `certificates` and
    /// `keyID`. By default the credential's issuer's keys (§11.3: the list signed as the credential is).
    func statusListKeys(uri: String, issuer: String?, credentialChain: [Data], certificates: [Data], keyID: String?) async throws -> JWKSCache
}

extension CredentialIssuerKeys {
    public func statusListKeys(uri: String, issuer: String?, credentialChain: [Data], certificates: [Data], keyID: String?) async throws
        -> JWKSCache
    {
        try await keys(issuer: issuer, certificates: certificates, keyID: keyID)
    }
}

/// One issuer's keys, given as a key set.
public struct FixedIssuerKeys: CredentialIssuerKeys {
    let keys: JWKSCache

    public init(_ keys: JWKSCache) { self.keys = keys }

    public func keys(issuer: String?, certificates: [Data], keyID: String?) async throws -> JWKSCache { keys }
}

/// Issuer keys from JWT VC Issuer Metadata (SD-JWT VC §4): for an `iss` among `trustedIssuers` (https
/// URLs), the document at `/.well-known/jwt-vc-issuer` inserted between the URL's host and its path, whose
/// `issuer` must be that `iss` (§4.3), and whose keys are inline (`jwks`) or at `jwks_uri` (https), exactly
/// one of the two (§4.2). A credential of any other issuer is refused before anything is fetched, so a
/// credential cannot make the verifier fetch from where it likes. Each issuer's keys are kept and, for
/// `jwks_uri`, refetched as ``JWKSCache`` does for an unknown `kid`.
public actor JWTVCIssuerMetadata: CredentialIssuerKeys {
    public let trustedIssuers: Set<String>
    private let transport: any HTTPTransport
    private let clock: any WallClock
    private let logger: Logger
    private var cache: [String: Task<JWKSCache, any Error>] = [:]

    public init(trustedIssuers: Set<String>, transport: any HTTPTransport, clock: any WallClock = SystemClock(), logger: Logger) {
        self.trustedIssuers = trustedIssuers
        self.transport = transport
        self.clock = clock
        self.logger = logger
    }

    /// `https://host/.well-known/jwt-vc-issuer/path` for the issuer `https://host/path` (§4.1).
    public static func metadataURL(for issuer: String) -> URL? {
        guard var components = URLComponents(string: issuer), components.scheme == "https", components.host?.isEmpty == false,
            components.query == nil, components.fragment == nil
        else { return nil }
        let path = components.path == "/" ? "" : components.path
        components.path = "/.well-known/jwt-vc-issuer" + path
        return components.url
    }

    public func keys(issuer: String?, certificates: [Data], keyID: String?) async throws -> JWKSCache {
        guard let issuer, trustedIssuers.contains(issuer) else {
            throw SwitchbackError(.presentationInvalid, "the credential's issuer is not one this verifier trusts")
        }
        if let pending = cache[issuer] {
            do { return try await pending.value } catch { cache[issuer] = nil }
        }
        let (transport, clock, logger) = (self.transport, self.clock, self.logger)
        let task = Task { try await Self.fetch(issuer, transport: transport, clock: clock, logger: logger) }
        cache[issuer] = task
        do {
            return try await task.value
        } catch {
            // A failed fetch is not kept: the next credential asks again.
            cache[issuer] = nil
            throw error
        }
    }

    private static func fetch(_ issuer: String, transport: any HTTPTransport, clock: any WallClock, logger: Logger) async throws -> JWKSCache {
        guard let url = metadataURL(for: issuer) else {
            throw SwitchbackError(.invalidConfiguration, "the trusted issuer \(issuer.prefix(80)) is not an https URL")
        }
        let response = try await transport.send(HTTPRequest(method: .get, url: url, headers: ["Accept": "application/json"]))
        guard response.status == 200, response.body.count <= 256 * 1024, let document = JSONReader.object(response.body) else {
            throw SwitchbackError(.malformedResponse, "the issuer's JWT VC metadata could not be read (HTTP \(response.status))")
        }
        guard document["issuer"] == .string(issuer) else {
            throw SwitchbackError(.presentationInvalid, "the issuer's JWT VC metadata names another issuer (SD-JWT VC §4.3)")
        }
        switch (document["jwks"], document["jwks_uri"]) {
        case (let jwks?, nil):
            return try JWKSCache(jwksJSON: Data(jwks.description.utf8), clock: clock, logger: logger)
        case (nil, .string(let text)?):
            guard let jwksURI = URL(string: text), jwksURI.scheme == "https" else {
                throw SwitchbackError(.malformedResponse, "the issuer's jwks_uri is not an https URL")
            }
            return JWKSCache(jwksURI: jwksURI, transport: transport, clock: clock, logger: logger)
        default:
            throw SwitchbackError(.malformedResponse, "the issuer's JWT VC metadata must have exactly one of jwks and jwks_uri (SD-JWT VC §4.2)")
        }
    }
}
