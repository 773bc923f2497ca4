import Crypto
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

/// The issuer every fuzzed SD-JWT is signed by: a fixed P-256 key, so the fuzzer reaches what follows the
/// signature (disclosures, digests, `_sd` arrays, the processed payload) rather than stopping at it.
enum FuzzIssuer {
    static let key = try! P256.Signing.PrivateKey(rawRepresentation: Data((1...32).map { UInt8($0) }))
    static let verifier: SDJWTVerifier = {
        let point = key.publicKey.rawRepresentation
        let jwk: JSONValue = .object([
            "kty": .string("EC"), "crv": .string("P-256"), "alg": .string("ES256"), "kid": .string("fuzz"),
            "x": .string(Base64URL.encode(point.prefix(32))), "y": .string(Base64URL.encode(point.suffix(32))),
        ])
        let keys = try! JWKSCache(jwksJSON: Data(JSONValue.object(["keys": .array([jwk])]).description.utf8), logger: Logger(label: "fuzz"))
        return SDJWTVerifier(issuerKeys: keys, type: nil, clock: FixedClock())
    }()

    static func sign(_ payload: Data) -> String {
        let input = Base64URL.encode(Data(#"{"alg":"ES256","kid":"fuzz","typ":"dc+sd-jwt"}"#.utf8)) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(try! key.signature(for: Data(input.utf8)).rawRepresentation)
    }
}

struct FixedClock: WallClock {
    func now() -> Date { Date(timeIntervalSince1970: 1_800_000_000) }
}

extension FuzzTarget {
    /// SD-JWT presentations past the issuer's signature. The input is the issuer's payload and the
    /// disclosures' JSON, separated by zero bytes; the harness encodes each disclosure, adds its digest to the
    /// payload's `_sd` when the payload is an object, signs the payload and presents it without a Key Binding JWT.
    static let sdJWT = FuzzTarget(
        "sd-jwt",
        asserts: """
            SDJWTVerifier verifies or throws SwitchbackError; a verified presentation's claims hold no _sd, _sd_alg \
            or array-element marker, and every claim of the signed payload outside them is kept
            """
    ) { input in
        let parts = input.split(separator: 0, omittingEmptySubsequences: false)
        var payload = Data(parts.first ?? Data())
        let disclosures = parts.dropFirst().map { Base64URL.encode($0) }
        if case .object(var claims)? = JSONReader.value(payload), !disclosures.isEmpty {
            let digests = disclosures.map { JSONValue.string(Base64URL.encode(SHA256.hash(data: Data($0.utf8)))) }
            if case .array(let existing)? = claims["_sd"] { claims["_sd"] = .array(existing + digests) } else { claims["_sd"] = .array(digests) }
            payload = Data(JSONValue.object(claims).description.utf8)
        }
        let presentation = ([FuzzIssuer.sign(payload)] + disclosures).joined(separator: "~") + "~"
        let outcome: Result<VerifiedPresentation, any Error> = blocking {
            do { return .success(try await FuzzIssuer.verifier.verify(presentation, keyBinding: nil)) } catch { return .failure(error) }
        }
        switch outcome {
        case .success(let verified):
            func clean(_ value: JSONValue) -> Bool {
                switch value {
                case .object(let members):
                    return members["_sd"] == nil && members["_sd_alg"] == nil && members["..."] == nil && members.values.allSatisfy(clean)
                case .array(let items): return items.allSatisfy(clean)
                default: return true
                }
            }
            require(clean(.object(verified.claims)), "a disclosure marker is left in the verified claims")
            if case .object(let signed)? = JSONReader.value(payload) {
                for (name, value) in signed where !["_sd", "_sd_alg"].contains(name) {
                    if case .object = value { continue }
                    if case .array = value { continue }
                    require(verified.claims[name] == value, "the signed claim \(name) is not kept as signed")
                }
            }
        case .failure(let error):
            require(error is SwitchbackError, "the verifier threw \(type(of: error)), not SwitchbackError")
        }
    }

    /// DCQL queries as the companion's configuration and the app's request carry them.
    static let dcql = FuzzTarget(
        "dcql",
        asserts: "a DCQL query decodes or not; validate() passes or throws SwitchbackError; a valid query encoded again decodes equal and stays valid"
    ) { input in
        guard let query = try? JSONDecoder().decode(DCQLQuery.self, from: input) else { return }
        do {
            try query.validate()
            let again = try? JSONDecoder().decode(DCQLQuery.self, from: try JSONEncoder().encode(query))
            require(again == query, "a valid query encoded again decodes otherwise")
            require((try? again?.validate()) != nil, "a valid query encoded again is not valid")
        } catch let error as SwitchbackError {
            require(error.code == .invalidConfiguration, "validate() threw \(error.code)")
        } catch {
            require(false, "validate() threw \(type(of: error))")
        }
    }

    /// An mdoc `DeviceResponse` as a wallet posts it, up to the issuer's signature: a fixed document signer
    /// key is trusted, so structure, digests and dates are read before any signature fails.
    static let mdoc = FuzzTarget(
        "mdoc",
        asserts: "MDocVerifier refuses (SwitchbackError) or verifies any DeviceResponse; a CBOR item the input holds is read as CBOR.decode reads it"
    ) { input in
        let outcome: Result<VerifiedPresentation, any Error> = blocking {
            do {
                return .success(
                    try await MDocFuzz.verifier.verify(
                        Base64URL.encode(input),
                        binding: .init(clientID: "x509_hash:fuzz", nonce: "n", encryptionKeyThumbprint: nil, responseURI: "https://v.example/r")))
            } catch { return .failure(error) }
        }
        if case .failure(let error) = outcome { require(error is SwitchbackError, "the verifier threw \(type(of: error))") }
    }
}

enum MDocFuzz {
    struct Keys: MDocIssuerKeys {
        func documentSigner(certificates: [Data]) async throws -> MDocSigner {
            MDocSigner(key: FuzzIssuer.key.publicKey.x963Representation, authorities: [Data([1, 2, 3])])
        }
    }
    static let verifier = MDocVerifier(issuers: Keys(), clock: FixedClock())
}
