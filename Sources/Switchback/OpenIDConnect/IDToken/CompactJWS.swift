import Foundation

/// A compact-serialised JWS split into its parts, before any signature check.
struct CompactJWS {
    struct Header {
        let alg: String
        let kid: String?
        let typ: String?
        let crit: [String]?
        /// `x5c` (RFC 7515 §4.1.6): the signing key's certificate chain, leaf first, DER.
        let x5c: [Data]

        /// The header read by ``JSONReader``: `alg` a string, the others strings (or `crit` strings) when present.
        init?(_ bytes: Data) {
            guard let object = JSONReader.object(bytes) else { return nil }
            let members = JSONMembers(object)
            do {
                guard let alg = try members.string("alg") else { return nil }
                self.alg = alg
                kid = try members.string("kid")
                typ = try members.string("typ")
                crit = try members.strings("crit")
                x5c = try (members.strings("x5c") ?? []).map {
                    // Standard base64 (not base64url), RFC 7515 §4.1.6.
                    guard let der = Data(base64Encoded: $0) else { throw JSONMembers.Mismatch() }
                    return der
                }
            } catch {
                return nil
            }
        }
    }

    let header: Header
    let signingInput: ArraySlice<UInt8>
    let payload: Data
    let signature: Data

    init(_ token: String, malformed: SwitchbackError.Code) throws {
        let bytes = Array(token.utf8)
        // The positions of the first two dots and how many there are, in one pass without a list.
        var (first, second, count) = (0, 0, 0)
        for index in bytes.indices where bytes[index] == UInt8(ascii: ".") {
            if count == 0 { first = index } else if count == 1 { second = index }
            count += 1
        }
        guard count == 2 else {
            let reason = count == 4 ? "an encrypted JWT (JWE), which this client cannot decrypt" : "not a compact JWS"
            throw SwitchbackError(malformed, "the token is \(reason)")
        }
        guard let headerData = Base64URL.decode(bytes: bytes[..<first]),
            let payload = Base64URL.decode(bytes: bytes[(first + 1)..<second]),
            let signature = Base64URL.decode(bytes: bytes[(second + 1)...])
        else {
            throw SwitchbackError(malformed, "a part of the token is not base64url")
        }
        guard let header = Header(headerData) else {
            throw SwitchbackError(malformed, "the token's header is not a JSON object with an alg")
        }
        if let critical = header.crit, !critical.isEmpty {
            throw SwitchbackError(malformed, "the token marks header parameters critical that this client does not understand")
        }
        self.header = header
        self.signingInput = bytes[..<second]
        self.payload = payload
        self.signature = signature
    }
}
