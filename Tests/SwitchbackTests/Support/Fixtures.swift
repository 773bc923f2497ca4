import Foundation
@_spi(SwitchbackInternals) @testable import Switchback

/// Reads the files in `Tests/SwitchbackTests/Fixtures`.
enum Fixtures {
    /// A published JWS example: the signer's public key, the compact token and its algorithm.
    struct JWSVector: Decodable {
        let alg: String
        let jwkPublic: JSONValue
        let jws: String

        enum CodingKeys: String, CodingKey {
            case alg, jws
            case jwkPublic = "jwk_public"
        }

        /// The JWKS document holding only this vector's key.
        var jwks: Data { Data(JSONValue.object(["keys": .array([jwkPublic])]).description.utf8) }

        /// The payload bytes the token carries.
        var payload: Data { Base64URL.decode(jws.split(separator: ".")[1])! }

        /// The token with one character in the middle of its signature changed.
        var withChangedSignature: String {
            var characters = Array(jws)
            let signatureStart = jws.lastIndex(of: ".").map { jws.distance(from: jws.startIndex, to: $0) + 1 }!
            let middle = signatureStart + (characters.count - signatureStart) / 2
            characters[middle] = characters[middle] == "A" ? "B" : "A"
            return String(characters)
        }
    }

    static func data(_ name: String) throws -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures") else {
            throw CocoaError(.fileNoSuchFile)
        }
        return try Data(contentsOf: url)
    }

    static func jwsVectors(_ file: String) throws -> [String: JWSVector] {
        try JSONDecoder().decode([String: JWSVector].self, from: data(file))
    }
}
