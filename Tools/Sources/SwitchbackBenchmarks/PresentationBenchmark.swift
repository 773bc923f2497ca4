import Crypto
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer

/// SD-JWT VC presentations verified per second (the companion's per-answer work before the DCQL check),
/// beside the raw cost of their two ES256 signatures (the issuer's and the Key Binding JWT's) through
/// swift-crypto alone: the floor of what a verification can cost. Two rows: the issuer's key given, and
/// the issuer's `x5c` chain validated to a trust anchor on every presentation (the companion's way).
/// ISO mdoc is not verified yet, so it has no row.
enum PresentationBenchmark {
    static func run() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        let audience = "x509_hash:benchmark-verifier"
        let presentation = try wallet.presentation(disclosing: ["given_name", "family_name", "birthdate"], audience: audience, nonce: "n-1")
        let binding = SDJWTVerifier.KeyBinding(audience: audience, nonce: "n-1")
        let jwk = JSONValue.object(["keys": .array([.object(PublicJWK.ec(curve: "P-256", x963: issuer.authority.key.publicKey.x963Representation))])])
        let fixed = SDJWTVerifier(
            issuers: FixedIssuerKeys(try JWKSCache(jwksJSON: Data(jwk.description.utf8), logger: Logger(label: "bench"))))
        let chained = SDJWTVerifier(issuers: try X509IssuerKeys(anchorsPEM: issuer.authority.rootPEM, clock: SystemClock()))
        for verifier in [fixed, chained] {
            let verified = try await verifier.verify(presentation, keyBinding: binding)
            guard verified.keyBound, verified.claims["given_name"] == "Erika" else {
                throw BenchmarkError(description: "the benchmark presentation did not verify")
            }
        }
        // The two signatures, verified as any verifier must: hash the signing input and check the signature.
        let issuerJWT = presentation.split(separator: "~").first.map(String.init) ?? ""
        let keyBindingJWT = presentation.split(separator: "~").last.map(String.init) ?? ""
        let issuerCheck = try signatureCheck(issuerJWT, key: issuer.authority.key.publicKey)
        let holderKey = try holderPublicKey(issuerJWT)
        let holderCheck = try signatureCheck(keyBindingJWT, key: holderKey)
        guard issuerCheck(), holderCheck() else { throw BenchmarkError(description: "raw verification of the presentation failed") }

        let raw = try await Benchmarks.rate { if !issuerCheck() || !holderCheck() { throw BenchmarkError(description: "raw verification failed") } }
        let withKey = try await Benchmarks.rate { _ = try await fixed.verify(presentation, keyBinding: binding) }
        let withChain = try await Benchmarks.rate { _ = try await chained.verify(presentation, keyBinding: binding) }
        print("\nSD-JWT VC presentations (3 of 4 claims disclosed, Key Binding JWT) vs their two raw ES256 signature checks, one core")
        print(Benchmarks.pad("case", 30) + Benchmarks.pad("presentations/s", 18) + Benchmarks.pad("raw pairs/s", 14) + "ratio")
        for (name, rate) in [("dc+sd-jwt, issuer key given", withKey), ("dc+sd-jwt, x5c to an anchor", withChain)] {
            print(
                Benchmarks.pad(name, 30) + Benchmarks.pad(String(format: "%.0f", rate), 18) + Benchmarks.pad(String(format: "%.0f", raw), 14)
                    + String(format: "%.1f%%", rate / raw * 100))
        }
    }

    /// A check of `jwt`'s ES256 signature with `key`, parsed once.
    static func signatureCheck(_ jwt: String, key: P256.Signing.PublicKey) throws -> () -> Bool {
        let parts = jwt.split(separator: ".")
        guard parts.count == 3 else { throw BenchmarkError(description: "not a JWS") }
        let input = Data(jwt.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try Benchmarks.decode(parts[2]))
        return { key.isValidSignature(signature, for: input) }
    }

    /// The holder's key from the credential's `cnf.jwk`.
    static func holderPublicKey(_ issuerJWT: String) throws -> P256.Signing.PublicKey {
        let payload = issuerJWT.split(separator: ".")[1]
        guard let claims = JSONReader.object(try Benchmarks.decode(payload)), case .object(let cnf)? = claims["cnf"],
            case .object(let jwk)? = cnf["jwk"]
        else { throw BenchmarkError(description: "no cnf.jwk") }
        return try P256.Signing.PublicKey(
            rawRepresentation: try Benchmarks.decode(Benchmarks.string(jwk["x"])) + Benchmarks.decode(Benchmarks.string(jwk["y"])))
    }
}
