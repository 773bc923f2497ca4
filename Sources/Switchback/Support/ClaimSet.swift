package import JWTKit

/// A JWT payload made of arbitrary claims, for signing tokens whose claims are built as JSON
/// (the emulator's ID tokens, the testing product's tokens). Its `verify` checks no claim: relying
/// parties validate through `IDTokenValidator`; the emulator reads its own `id_token_hint` with it,
/// which may be expired.
package struct ClaimSet: JWTPayload {
    package let claims: [String: JSONValue]

    package init(claims: [String: JSONValue]) {
        self.claims = claims
    }

    package init(from decoder: any Decoder) throws {
        claims = try decoder.singleValueContainer().decode([String: JSONValue].self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(claims)
    }

    package func verify(using algorithm: some JWTAlgorithm) async throws {}
}
