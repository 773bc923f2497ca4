import Crypto
import Foundation
import Logging
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackVerification

/// SD-JWT VC presentations verified per second (the companion's per-answer work before the DCQL check),
/// beside the raw cost of their two ES256 signatures (the issuer's and the Key Binding JWT's) through
/// swift-crypto alone: the floor of what a verification can cost. Two rows: the issuer's key given, and
/// the issuer's `x5c` chain validated to a trust anchor on every presentation (the companion's way). The
/// same two rows for an ISO mdoc (`DeviceResponse`: issuerAuth and device signature, 3 of 4 elements).
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
        print(
            "\nPresentations (3 of 4 claims disclosed; SD-JWT VC with a Key Binding JWT, mdoc with a device signature) vs their two raw ES256 signature checks, one core"
        )
        print(Benchmarks.pad("case", 32) + Benchmarks.pad("presentations/s", 18) + Benchmarks.pad("raw pairs/s", 14) + "ratio")
        for (name, rate) in [("dc+sd-jwt, issuer key given", withKey), ("dc+sd-jwt, x5c to an anchor", withChain)] {
            print(
                Benchmarks.pad(name, 32) + Benchmarks.pad(String(format: "%.0f", rate), 18) + Benchmarks.pad(String(format: "%.0f", raw), 14)
                    + String(format: "%.1f%%", rate / raw * 100))
        }
        try await mdoc(issuer: issuer, wallet: wallet)
    }

    /// An mdoc's document signer, given.
    struct GivenSigner: MDocIssuerKeys {
        let key: Data
        func documentSigner(certificates: [Data]) async throws -> MDocSigner { MDocSigner(key: key, authorities: []) }
    }

    /// The mdoc rows: `MDocVerifier` against the two raw ES256 checks of its `Sig_structure`s.
    static func mdoc(issuer: EmulatedIssuer, wallet: EmulatedWallet) async throws {
        let encryptionKey: [String: JSONValue] = PublicJWK.ec(curve: "P-256", x963: P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        let binding = MDocVerifier.SessionBinding(
            clientID: "x509_hash:benchmark-verifier", nonce: "n-1",
            encryptionKeyThumbprint: DPoPKey.thumbprint(of: .object(encryptionKey)).flatMap { Base64URL.decode($0) },
            responseURI: "https://verifier.example.com/wallet/response")
        let presentation = try wallet.mdocPresentation(
            disclosing: ["given_name", "family_name", "birth_date"], clientID: binding.clientID, nonce: binding.nonce, encryptionKey: encryptionKey,
            responseURI: binding.responseURI)
        let given = MDocVerifier(issuers: GivenSigner(key: issuer.authority.key.publicKey.x963Representation))
        let chained = MDocVerifier(issuers: try X509DocumentSigners(anchorsPEM: issuer.authority.rootPEM, clock: SystemClock()))
        for verifier in [given, chained] {
            guard try await verifier.verify(presentation, binding: binding).keyBound else {
                throw BenchmarkError(description: "the benchmark mdoc did not verify")
            }
        }
        // The two Sig_structures, taken apart once; the raw rate checks their signatures only.
        let response = try CBOR.decode(try Benchmarks.decode(Substring(presentation)))
        guard let document = response["documents"]?.array?.first, let issuerAuth = document["issuerSigned"]?["issuerAuth"]?.array,
            let device = document["deviceSigned"]?["deviceAuth"]?["deviceSignature"]?.array,
            let deviceNameSpaces = document["deviceSigned"]?["nameSpaces"],
            let payload = issuerAuth[2].bytes, let mso = try CBOR.decode(payload).embedded,
            let deviceKey = try CBOR.decode(mso)["deviceKeyInfo"]?["deviceKey"],
            let x = deviceKey[.int(-2)]?.bytes, let y = deviceKey[.int(-3)]?.bytes
        else { throw BenchmarkError(description: "the benchmark mdoc cannot be taken apart") }
        func check(_ sign1: [CBOR], payload: Data, key: P256.Signing.PublicKey) throws -> () -> Bool {
            let structure = CBOR.array([.text("Signature1"), sign1[0], .bytes(Data()), .bytes(payload)]).encoded
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: sign1[3].bytes ?? Data())
            return { key.isValidSignature(signature, for: structure) }
        }
        let authentication = CBOR.array(["DeviceAuthentication", binding.sessionTranscript, .text(EmulatedWallet.pidDocType), deviceNameSpaces])
        let issuerCheck = try check(issuerAuth, payload: payload, key: issuer.authority.key.publicKey)
        let deviceCheck = try check(
            device, payload: CBOR.tagged(24, .bytes(authentication.encoded)).encoded, key: try P256.Signing.PublicKey(rawRepresentation: x + y))
        guard issuerCheck(), deviceCheck() else { throw BenchmarkError(description: "raw verification of the mdoc failed") }

        let raw = try await Benchmarks.rate { if !issuerCheck() || !deviceCheck() { throw BenchmarkError(description: "raw verification failed") } }
        let withKey = try await Benchmarks.rate { _ = try await given.verify(presentation, binding: binding) }
        let withChain = try await Benchmarks.rate { _ = try await chained.verify(presentation, binding: binding) }
        for (name, rate) in [("mso_mdoc, issuer key given", withKey), ("mso_mdoc, x5chain to an anchor", withChain)] {
            print(
                Benchmarks.pad(name, 32) + Benchmarks.pad(String(format: "%.0f", rate), 18) + Benchmarks.pad(String(format: "%.0f", raw), 14)
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
