extension ProviderContract {
    /// Singpass under FAPI 2.0 (Login and Myinfo v5 apps).
    public static let singpass = ProviderContract(
        provider: "singpass",
        terms: [
            Term(
                .pushedRequestLifetime, .seconds(60),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/1.-authorization-request",
                says: #""We set this value to be 60 seconds" (the request_uri's expires_in)"#),
            Term(
                .codeLifetime, .seconds(60),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/3.-token-exchange",
                says: "codes live 60 seconds under FAPI 2.0 (2 minutes in the pre-FAPI API)"),
            Term(
                .refreshTokens, .flag(false),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/singpass-authentication-api/2.-token-endpoint",
                says: #""only the following grant(s) is supported: authorization_code""#),
            Term(
                .redirectsInvalidRequestURI, .flag(true),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/2.-handling-the-redirect",
                says:
                    "its example error redirect: redirect?error=invalid_request_uri&error_description=The%20request_uri%20provided%20is%20invalid&state=…; GovTech's MockPass answers a 400 instead"
            ),
            Term(
                .allowedScopes, .list(["openid", "user.identity", "name", "email", "mobileno"]),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/1.-authorization-request",
                says:
                    #""For Login apps, there are some basic scopes that are allowed. The scopes are user.identity, name, email, and mobileno"; openid is required, and a scope the app may not ask for is invalid_scope (an older FAPI draft allowed only openid and sub_account; MockPass allows openid, uinfin, user.identity and name)"#
            ),
            Term(
                .subjectAttributes, .flag(true),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/4.-parsing-the-id-token",
                says:
                    #"sub_attributes is "only returned if the user.identity, name, email, or mobileno scope is requested"; user.identity gives account_type, identity_number and identity_coi"#
            ),
            Term(
                .missingDPoPError, .text("invalid_request"),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/1.-authorization-request",
                says:
                    #"invalid_request "will also be returned if you did not send either the DPoP header or the dpop_jkt parameter" (PAR); the token exchange page says the same of a missing DPoP header"#
            ),
            Term(
                .invalidDPoPError, .text("invalid_dpop_proof"),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/3.-token-exchange",
                says: #"invalid_dpop_proof: "The DPoP header which you have provided is invalid, expired, or malformed" (PAR, token and userinfo)"#
            ),
            Term(
                .clientKeyCurves, .list(["P-256", "P-384", "P-521"]),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/technical-concepts/json-web-key-sets-jwks",
                says:
                    "every key: a unique kid, kty EC, crv P-256, P-384 or P-521, no private part (d); at least one encryption key (use enc) and one signing key (use sig)"
            ),
            Term(
                .keyEncryptionAlgorithms, .list(["ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW"]),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/technical-concepts/json-web-key-sets-jwks",
                says: "an encryption key's alg is one of ECDH-ES+A128KW, ECDH-ES+A192KW and ECDH-ES+A256KW"
            ),
            Term(
                .idTokenContentEncryption, .text("A256CBC-HS512"),
                source: "https://docs.developer.singpass.gov.sg/docs/technical-specifications/integration-guide/4.-parsing-the-id-token",
                says:
                    #"the sample JWE header's "enc":"A256CBC-HS512" (singpass/demo-app decrypts ID tokens with the same; MockPass encrypts with A256GCM)"#,
                status: .assumed("shown by the sample header and Singpass's demo app, not stated as a rule")
            ),
        ])
}
