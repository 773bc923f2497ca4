public import JWTKit
public import Switchback

/// A JWT payload made of arbitrary claims, for signing tokens whose claims are built as JSON
/// (the emulator's ID tokens, this product's tokens). Its `verify` checks no claim: relying
/// parties validate through `IDTokenValidator`; the emulator reads its own `id_token_hint` with it,
/// which may be expired.
@_spi(SwitchbackInternals) public struct ClaimSet: JWTPayload {
    @_spi(SwitchbackInternals) public let claims: [String: JSONValue]

    @_spi(SwitchbackInternals) public init(claims: [String: JSONValue]) {
        self.claims = claims
    }

    @_spi(SwitchbackInternals) public init(from decoder: any Decoder) throws {
        claims = try decoder.singleValueContainer().decode([String: JSONValue].self)
    }

    @_spi(SwitchbackInternals) public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(claims)
    }

    @_spi(SwitchbackInternals) public func verify(using algorithm: some JWTAlgorithm) async throws {}
}
