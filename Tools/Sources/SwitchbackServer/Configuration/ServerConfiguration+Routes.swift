public import Foundation
@_spi(SwitchbackInternals) public import Switchback

// The route sections: each present section turns its routes on.
extension ServerConfiguration {
    /// What a successful backend exchange gives the app.
    public enum ExchangeResult: String, Sendable, Codable {
        /// The provider's tokens: the app calls APIs with them; the refresh token lives on the device.
        case tokens
        /// An opaque first-party session: the provider's tokens never leave the server.
        case session
    }

    /// Backend code exchange: the server redeems the code as a confidential client.
    public struct Exchange: Sendable, Codable, Equatable {
        /// The app's redirect URIs the server may redeem codes for.
        public var redirectURIs: [String]
        public var returns: ExchangeResult

        public init(redirectURIs: [String], returns: ExchangeResult = .session) {
            self.redirectURIs = redirectURIs
            self.returns = returns
        }
    }

    /// The upfront permission proxy (Norwegian BankID).
    /// Norwegian BankID's upfront permission ("Authorization Code flow for upfront permissions"): a
    /// client-credentials token from the provider with ``scope``, then a permission registered at the
    /// `permissions_endpoint` the biometrics server's own discovery document names, in the shape BankID's
    /// examples post (BankIDNorge/oidc-integration-examples, `Permission.cs`): `type`, `iat`, `exp` and the
    /// statement base64url-encoded as `permission`. The type is the deployment's, agreed with BankID; each
    /// statement is one transaction's, registered by your backend (`POST /permission/statement`, with
    /// ``backendToken``) and taken once by the app's `POST /permission`, with a fresh `nonce` and `id` as
    /// BankID's examples make for every permission (`PaymentController.cs`). An app only names the
    /// statement it was given and which of the allowed `app_callback_uri`s it returns to.
    public struct Permission: Sendable, Codable, Equatable {
        /// The biometrics server's issuer (`https://app.bankid.no`; test
        /// `https://current.aletheia-test.idtech.no`), whose `/.well-known/openid-configuration` names
        /// its `permissions_endpoint`.
        public var server: String
        /// The client-credentials scope the permissions API takes.
        public var scope: String
        /// The exact `app_callback_uri` values the app may ask a permission for.
        public var appCallbackURIs: [String]
        /// The permission type (BankID's examples: `payment.v1`).
        public var type: String
        /// The secret your backend sends as `Authorization: Bearer` to register a statement; at least 32
        /// characters. A secret: give it through the secrets directory or the environment.
        public var backendToken: String
        /// Seconds from the permission's `iat` to its `exp` (BankID's example: 600); a registered statement
        /// waits for the app as long.
        public var lifetime: TimeInterval

        public init(
            server: String, scope: String = "openid permissions/client", appCallbackURIs: [String], type: String, backendToken: String,
            lifetime: TimeInterval = 600
        ) {
            self.server = server
            self.scope = scope
            self.appCallbackURIs = appCallbackURIs
            self.type = type
            self.backendToken = backendToken
            self.lifetime = lifetime
        }

        private enum Keys: String, CodingKey { case server, scope, appCallbackURIs, type, backendToken, lifetime, statement }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Keys.self)
            // One statement for every sign-in had every user approve the same transaction: refused by name.
            guard !c.contains(.statement) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .statement, in: c,
                    debugDescription:
                        "permission.statement is no longer read: each permission's statement is one transaction's, registered by your backend at POST /permission/statement (Documentation/Companion.md)"
                )
            }
            self.init(
                server: try c.decode(String.self, forKey: .server),
                scope: try c.decodeIfPresent(String.self, forKey: .scope) ?? "openid permissions/client",
                appCallbackURIs: try c.decode([String].self, forKey: .appCallbackURIs), type: try c.decode(String.self, forKey: .type),
                backendToken: try c.decodeIfPresent(String.self, forKey: .backendToken) ?? "",
                lifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .lifetime) ?? 600
            )
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(server, forKey: .server)
            try c.encode(scope, forKey: .scope)
            try c.encode(appCallbackURIs, forKey: .appCallbackURIs)
            try c.encode(type, forKey: .type)
            try c.encode(backendToken, forKey: .backendToken)
            try c.encode(lifetime, forKey: .lifetime)
        }
    }

    /// The native-callback bridge: the provider returns to this server, which returns to the app's deep link
    /// with a one-time code.
    public struct Bridge: Sendable, Codable, Equatable {
        /// Deep-link schemes the bridge may return to (`myapp` for `myapp://oauth/…`).
        public var schemes: [String]
        public var returns: ExchangeResult
        /// How long the one-time code in the deep link stays redeemable.
        public var codeLifetime: TimeInterval
        /// What the provider is asked for: `code` (the default), or `id_token token` for a provider that
        /// offers only the legacy implicit shape. Implicit tokens arrive in the browser's fragment, are posted
        /// here by the forwarding page, validated (nonce, `at_hash`) and turned into the same one-time code.
        public var responseType: ResponseType

        public init(schemes: [String], returns: ExchangeResult = .session, codeLifetime: TimeInterval = 60, responseType: ResponseType = .code) {
            self.schemes = schemes
            self.returns = returns
            self.codeLifetime = codeLifetime
            self.responseType = responseType
        }
    }

    /// How a hand-off checks the app's access token.
    public enum TokenValidation: String, Sendable, Codable {
        /// The provider's introspection endpoint (RFC 7662), as this server's client.
        case introspection
        /// A JWT access token (RFC 9068) verified locally with the provider's keys.
        case jwt
    }

    /// Session hand-off from the app to a web app through a one-time code.
    public struct HandOff: Sendable, Codable, Equatable {
        public var validation: TokenValidation
        /// The `aud` the access token must carry: this server, as the resource the token was issued for.
        /// Required for ``TokenValidation/jwt``; with introspection, an answer that names no audience is
        /// then refused. A hand-off needs this, ``requiredScope``, or both: a token the app holds for
        /// another API must not buy a web session.
        public var audience: String?
        /// A scope the access token must have been granted (`scope`, space-separated), dedicated to session
        /// hand-off, such as `web-session`.
        public var requiredScope: String?
        /// Accept only sender-constrained (DPoP-bound) tokens: a Bearer token, which anyone who copied it
        /// could present, is refused.
        public var dpopBoundOnly: Bool
        /// Where a redeemed code may send the browser: origins with a path prefix.
        public var allowedRedirects: [String]
        public var codeLifetime: TimeInterval
        /// The clients whose access tokens buy a hand-off: the token's `client_id` (and `azp`, and an
        /// introspected `aud`) must be one of them. Nil: only `provider.clientID`. A token the provider
        /// issued to another relying party for the same user is refused.
        public var acceptedClients: [String]?

        public init(
            validation: TokenValidation = .introspection, audience: String? = nil, requiredScope: String? = nil, dpopBoundOnly: Bool = false,
            allowedRedirects: [String], codeLifetime: TimeInterval = 60, acceptedClients: [String]? = nil
        ) {
            self.validation = validation
            self.audience = audience
            self.requiredScope = requiredScope
            self.dpopBoundOnly = dpopBoundOnly
            self.allowedRedirects = allowedRedirects
            self.codeLifetime = codeLifetime
            self.acceptedClients = acceptedClients
        }
    }

    /// Backend completion (MitID): the provider returns to this server, whose final page opens the app.
    public struct Completion: Sendable, Codable, Equatable {
        /// The universal link the final page's button opens.
        public var appLink: String
        public var returns: ExchangeResult
        /// The longest a status request waits before answering `pending`.
        public var maximumWait: TimeInterval
        /// How often a waiting status request also reads the store when no notification woke it; nil (the
        /// default) for never. A waiter reads the store when it is notified, when the store's listener
        /// starts again after a lost connection, and at its deadline; set this only where PostgreSQL's
        /// notifications cannot reach the companion (a pooler in transaction mode, which does not carry
        /// `LISTEN`).
        public var storeRecheck: TimeInterval?

        public init(appLink: String, returns: ExchangeResult = .session, maximumWait: TimeInterval = 25, storeRecheck: TimeInterval? = nil) {
            self.appLink = appLink
            self.returns = returns
            self.maximumWait = maximumWait
            self.storeRecheck = storeRecheck
        }
    }
}

extension ServerConfiguration {
    /// The response page: the provider redirects to this server's `/response`, and its button opens
    /// `appLink` with the response's members (`code`, `state`, `iss`, `error`, `error_description`,
    /// `error_uri`), for the app to redeem as its own. The server keeps nothing.
    public struct ResponsePage: Sendable, Codable, Equatable {
        /// The app's universal link the button opens, on a host other than this server's (iOS opens a
        /// universal link only from a tap on a page of another host).
        public var appLink: String

        public init(appLink: String) {
            self.appLink = appLink
        }
    }
}

extension ServerConfiguration.Exchange {
    private enum Keys: String, CodingKey { case redirectURIs, returns }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            redirectURIs: try c.decode([String].self, forKey: .redirectURIs),
            returns: try c.decodeIfPresent(ServerConfiguration.ExchangeResult.self, forKey: .returns) ?? .session)
    }
}

extension ServerConfiguration.Bridge {
    private enum Keys: String, CodingKey { case schemes, returns, codeLifetime, responseType }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            schemes: try c.decode([String].self, forKey: .schemes),
            returns: try c.decodeIfPresent(ServerConfiguration.ExchangeResult.self, forKey: .returns) ?? .session,
            codeLifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .codeLifetime) ?? 60,
            responseType: try c.decodeIfPresent(ResponseType.self, forKey: .responseType) ?? .code
        )
    }
}

extension ServerConfiguration.HandOff {
    private enum Keys: String, CodingKey { case validation, audience, requiredScope, dpopBoundOnly, allowedRedirects, codeLifetime, acceptedClients }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            validation: try c.decodeIfPresent(ServerConfiguration.TokenValidation.self, forKey: .validation) ?? .introspection,
            audience: try c.decodeIfPresent(String.self, forKey: .audience),
            requiredScope: try c.decodeIfPresent(String.self, forKey: .requiredScope),
            dpopBoundOnly: try c.decodeIfPresent(Bool.self, forKey: .dpopBoundOnly) ?? false,
            allowedRedirects: try c.decode([String].self, forKey: .allowedRedirects),
            codeLifetime: try c.decodeIfPresent(TimeInterval.self, forKey: .codeLifetime) ?? 60,
            acceptedClients: try c.decodeIfPresent([String].self, forKey: .acceptedClients)
        )
    }
}

extension ServerConfiguration.Completion {
    private enum Keys: String, CodingKey { case appLink, returns, maximumWait, storeRecheck }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        self.init(
            appLink: try c.decode(String.self, forKey: .appLink),
            returns: try c.decodeIfPresent(ServerConfiguration.ExchangeResult.self, forKey: .returns) ?? .session,
            maximumWait: try c.decodeIfPresent(TimeInterval.self, forKey: .maximumWait) ?? 25,
            storeRecheck: try c.decodeIfPresent(TimeInterval.self, forKey: .storeRecheck)
        )
    }
}
