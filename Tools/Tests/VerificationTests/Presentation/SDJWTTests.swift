import Crypto
import Foundation
import Logging
import SwitchbackTesting
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackVerification

/// SD-JWT presentations verified as RFC 9901 §7 says: the specification's own example, that example
/// tampered with, and credentials made with the example's issuer key to reach each processing rule.
@Suite("SD-JWT presentations (RFC 9901)")
struct SDJWTTests {
    static let binding = SDJWTVerifier.KeyBinding(audience: RFC9901Example.audience, nonce: RFC9901Example.nonce)

    /// A verifier trusting the example's issuer key, its clock at `time`.
    static func verifier(at time: TimeInterval = RFC9901Example.keyBindingIssuedAt + 10, type: String? = "example+sd-jwt") throws -> SDJWTVerifier {
        let clock = ManualClock(Date(timeIntervalSince1970: time))
        let keys = try JWKSCache(jwksJSON: Data(RFC9901Example.issuerJWKS.utf8), clock: clock, logger: Logger(label: "test"))
        return SDJWTVerifier(issuerKeys: keys, type: type, clock: clock)
    }

    /// The error `presentation` is refused with.
    static func refusal(
        _ presentation: String, keyBinding: SDJWTVerifier.KeyBinding? = binding, verifier: SDJWTVerifier? = nil
    ) async -> SwitchbackError? {
        do {
            _ = try await (verifier ?? Self.verifier()).verify(presentation, keyBinding: keyBinding)
            return nil
        } catch let error as SwitchbackError {
            return error
        } catch {
            return SwitchbackError(.invalidConfiguration, "unexpected \(error)")
        }
    }

    @Test("the specification's presentation verifies to the payload it prints; its issued form discloses everything")
    func specificationExample() async throws {
        let verified = try await Self.verifier().verify(RFC9901Example.presentation, keyBinding: Self.binding)
        #expect(verified.claims == JSONReader.object(Data(RFC9901Example.processed.utf8)))
        #expect(verified.keyBound && verified.type == "example+sd-jwt")
        #expect(verified.claims["email"] == nil && verified.claims["birthdate"] == nil, "undisclosed claims stay out")
        #expect(verified.claims["nationalities"] == .array([.string("US")]), "the undisclosed element is removed, not left as a digest")

        let issued = try await Self.verifier().verify(RFC9901Example.issued, keyBinding: nil)
        #expect(issued.claims["email"] == .string("johndoe@example.com") && issued.claims["nationalities"] == .array([.string("US"), .string("DE")]))
        #expect(issued.claims["_sd"] == nil && issued.claims["_sd_alg"] == nil && !issued.keyBound)
        let unbound = await Self.refusal(RFC9901Example.issued)
        #expect(unbound?.code == .presentationInvalid && unbound?.message.contains("no Key Binding JWT") == true)
    }

    @Test("the specification's presentation tampered with: each change is refused, naming the check")
    func tampered() async throws {
        let parts = RFC9901Example.presentation.split(separator: "~", omittingEmptySubsequences: false).map(String.init)
        let issuerJWT = parts[0]
        let disclosures = Array(parts[1..<(parts.count - 1)])
        let keyBindingJWT = parts[parts.count - 1]
        func joined(_ disclosures: [String], _ keyBinding: String = keyBindingJWT) -> String {
            ([issuerJWT] + disclosures + [keyBinding]).joined(separator: "~")
        }
        let edited = Base64URL.encode(Data(#"["eluV5Og3gSNII8EYnsxA_A", "family_name", "Smith"]"#.utf8))
        var forged = Array(issuerJWT.utf8)
        forged[forged.count - 2] = forged[forged.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")

        let cases: [(String, String, SDJWTVerifier.KeyBinding?, SDJWTVerifier?)] = [
            ("another verifier's nonce", RFC9901Example.presentation, .init(audience: RFC9901Example.audience, nonce: "0987654321"), nil),
            ("another verifier", RFC9901Example.presentation, .init(audience: "https://other.example.org", nonce: RFC9901Example.nonce), nil),
            ("a disclosure withheld after binding", joined(Array(disclosures.dropLast())), Self.binding, nil),
            ("a disclosure sent twice", joined(disclosures + [disclosures[0]]), Self.binding, nil),
            ("a disclosure edited", joined([edited] + disclosures.dropFirst()), Self.binding, nil),
            (
                "the issuer's signature forged",
                RFC9901Example.presentation.replacingOccurrences(of: issuerJWT, with: String(decoding: forged, as: UTF8.self)), Self.binding, nil
            ),
            ("expired", RFC9901Example.presentation, Self.binding, try Self.verifier(at: 1_883_000_000 + 3600)),
            ("a stale Key Binding JWT", RFC9901Example.presentation, Self.binding, try Self.verifier(at: RFC9901Example.keyBindingIssuedAt + 3600)),
            ("another credential type", RFC9901Example.presentation, Self.binding, try Self.verifier(type: "dc+sd-jwt")),
            ("no Key Binding JWT", joined(disclosures, ""), Self.binding, nil),
            ("garbage", "~~~", Self.binding, nil),
        ]
        var reasons: [String] = []
        for (name, presentation, keyBinding, verifier) in cases {
            let error = await Self.refusal(presentation, keyBinding: keyBinding, verifier: verifier)
            #expect(error != nil, "\(name) was accepted")
            reasons.append("\(name): \(error?.message ?? "-")")
        }
        // Each refusal is for its own reason, not one catch-all.
        #expect(reasons[0].contains("nonce") && reasons[1].contains("audience") && reasons[2].contains("sd_hash"), "\(reasons)")
        #expect(reasons[3].contains("twice") && reasons[4].contains("not referred to") && reasons[6].contains("expired"), "\(reasons)")
        #expect(reasons[7].contains("iat") && reasons[8].contains("typ") && reasons[9].contains("no Key Binding JWT"), "\(reasons)")

        // A Key Binding JWT with every claim right, signed by a key that is not the credential's.
        let stranger = P256.Signing.PrivateKey()
        let presented = joined(disclosures, "")
        let foreign = try Forge.keyBinding(presented, key: stranger, iat: RFC9901Example.keyBindingIssuedAt)
        #expect(await Self.refusal(presented + foreign) != nil, "a stranger's key binding")
        let genuine = try Forge.keyBinding(presented, key: Forge.holder, iat: RFC9901Example.keyBindingIssuedAt)
        #expect(await Self.refusal(presented + genuine) == nil, "the same made with the holder's key passes")
        let future = try Forge.keyBinding(presented, key: Forge.holder, iat: RFC9901Example.keyBindingIssuedAt + 3600)
        #expect(await Self.refusal(presented + future)?.message.contains("iat") == true, "a Key Binding JWT from the future")
        let untyped = try Forge.keyBinding(presented, key: Forge.holder, iat: RFC9901Example.keyBindingIssuedAt, typ: "JWT")
        #expect(await Self.refusal(presented + untyped)?.message.contains("kb+jwt") == true, "a Key Binding JWT of another typ")
    }

    @Test("a holder key the issuer limited to other uses (use enc, key_ops without verify, another alg) does not verify a Key Binding JWT")
    func holderKeyLimits() async throws {
        let verifier = try Self.verifier(type: "dc+sd-jwt")
        let point = Forge.holder.publicKey.x963Representation.dropFirst()
        let jwk: [String: JSONValue] = [
            "kty": "EC", "crv": "P-256", "x": .string(Base64URL.encode(point.prefix(32))), "y": .string(Base64URL.encode(point.suffix(32))),
        ]
        func presented(_ extra: [String: JSONValue]) throws -> String {
            let credential = try Forge.credential([
                "iss": "https://issuer.example.com", "vct": "urn:eu.europa.ec.eudi:pid:1",
                "cnf": .object(["jwk": .object(jwk.merging(extra) { $1 })]),
            ])
            let prefix = credential + "~"
            return prefix + (try Forge.keyBinding(prefix, key: Forge.holder, iat: RFC9901Example.keyBindingIssuedAt))
        }
        for allowed: [String: JSONValue] in [[:], ["use": "sig"], ["key_ops": .array(["verify"])], ["alg": "ES256"]] {
            #expect((try? await verifier.verify(try presented(allowed), keyBinding: Self.binding))?.keyBound == true, "\(allowed)")
        }
        for limited: [String: JSONValue] in [["use": "enc"], ["key_ops": .array(["sign"])], ["alg": "ES384"]] {
            #expect(await Self.refusal(try presented(limited), keyBinding: Self.binding, verifier: verifier) != nil, "\(limited)")
        }
    }

    @Test("the processing rules of §7.1 on credentials made with the example's issuer key")
    func processingRules() async throws {
        let verifier = try Self.verifier(type: "dc+sd-jwt")
        let street = Forge.disclosure(["s1", "street_address", "1 Rue"])
        let address = Forge.disclosure(["s2", "address", .object(["_sd": .array([.string(street.digest)]), "country": "FR"])])
        let element = Forge.disclosure(["s3", "FR"])
        let decoy = Base64URL.encode(SHA256.hash(data: Data("decoy".utf8)))
        let otherDecoy = Base64URL.encode(SHA256.hash(data: Data("another decoy".utf8)))
        let base: [String: JSONValue] = ["iss": "https://issuer.example.com", "vct": "urn:eu.europa.ec.eudi:pid:1", "_sd_alg": "sha-256"]
        func presentation(_ payload: [String: JSONValue], _ disclosures: [Forge.Disclosure]) throws -> String {
            try Forge.credential(base.merging(payload) { $1 }) + "~" + disclosures.map { $0.text + "~" }.joined()
        }

        // Recursive disclosures, a decoy in _sd and an undisclosed array element are processed and dropped.
        let nested = try await verifier.verify(
            try presentation(
                [
                    "_sd": .array([.string(address.digest), .string(decoy)]),
                    "nationalities": .array([.object(["...": .string(element.digest)]), .object(["...": .string(otherDecoy)])]),
                ],
                [address, street, element]), keyBinding: nil)
        #expect(nested.claims["address"] == .object(["street_address": "1 Rue", "country": "FR"]))
        #expect(nested.claims["nationalities"] == .array(["FR"]) && nested.claims["_sd_alg"] == nil)

        let reserved = Forge.disclosure(["s4", "_sd", "x"])
        let clash = Forge.disclosure(["s5", "iss", "https://attacker.example"])
        let rules: [(String, [String: JSONValue], [Forge.Disclosure], String)] = [
            ("a digest twice", ["_sd": .array([.string(street.digest), .string(street.digest)])], [street], "more than once"),
            ("a reserved name", ["_sd": .array([.string(reserved.digest)])], [reserved], "reserved"),
            ("a name already in clear", ["_sd": .array([.string(clash.digest)])], [clash], "already there"),
            ("an element's disclosure in _sd", ["_sd": .array([.string(element.digest)])], [element], "array element"),
            ("a claim's disclosure in an array", ["list": .array([.object(["...": .string(street.digest)])])], [street], "from an array"),
            ("a disclosure nothing refers to", [:], [street], "not referred to"),
            ("_sd not an array", ["_sd": "x"], [], "not an array"),
            ("another hash", ["_sd_alg": "sha-512"], [], "sha-256"),
            ("not valid yet", ["nbf": .number(RFC9901Example.keyBindingIssuedAt + 3600)], [], "not valid yet"),
            (
                "an expiry disclosed", ["_sd": .array([.string(Forge.disclosure(["s6", "exp", .number(1)]).digest)])],
                [Forge.disclosure(["s6", "exp", .number(1)])], "forbids"
            ),
            (
                "a status disclosed", ["_sd": .array([.string(Forge.disclosure(["s7", "status", "x"]).digest)])],
                [Forge.disclosure(["s7", "status", "x"])], "forbids"
            ),
        ]
        for (name, payload, disclosures, reason) in rules {
            let error = await Self.refusal(try presentation(payload, disclosures), keyBinding: nil, verifier: verifier)
            #expect(error?.message.contains(reason) == true, "\(name): \(error?.message ?? "accepted")")
        }
        let unsigned = Base64URL.encode(Data(#"{"alg":"none","typ":"dc+sd-jwt"}"#.utf8)) + "." + Base64URL.encode(Data(#"{"vct":"x"}"#.utf8)) + ".~"
        #expect(await Self.refusal(unsigned, keyBinding: nil, verifier: verifier)?.code == .unsupportedAlgorithm)
    }
}

/// Credentials, disclosures and Key Binding JWTs made with the example's keys.
enum Forge {
    struct Disclosure {
        let text: String
        let digest: String
    }

    static let issuer = try! P256.Signing.PrivateKey(rawRepresentation: Base64URL.decode(RFC9901Example.issuerPrivateD)!)
    static let holder = try! P256.Signing.PrivateKey(rawRepresentation: Base64URL.decode(RFC9901Example.holderPrivateD)!)

    static func disclosure(_ elements: [JSONValue]) -> Disclosure {
        let text = Base64URL.encode(Data(JSONValue.array(elements).description.utf8))
        return Disclosure(text: text, digest: Base64URL.encode(SHA256.hash(data: Data(text.utf8))))
    }

    static func jws(_ header: [String: JSONValue], _ payload: [String: JSONValue], key: P256.Signing.PrivateKey) throws -> String {
        let input =
            Base64URL.encode(Data(JSONValue.object(header).description.utf8)) + "."
            + Base64URL.encode(Data(JSONValue.object(payload).description.utf8))
        return input + "." + Base64URL.encode(try key.signature(for: Data(input.utf8)).rawRepresentation)
    }

    static func credential(_ payload: [String: JSONValue]) throws -> String {
        try jws(["alg": "ES256", "typ": "dc+sd-jwt"], payload, key: issuer)
    }

    /// A Key Binding JWT for `presented` (which ends with `~`) by `key`, for the example's verifier.
    static func keyBinding(_ presented: String, key: P256.Signing.PrivateKey, iat: TimeInterval, typ: String = "kb+jwt") throws -> String {
        try jws(
            ["alg": "ES256", "typ": .string(typ)],
            [
                "aud": .string(RFC9901Example.audience), "nonce": .string(RFC9901Example.nonce), "iat": .number(iat),
                "sd_hash": .string(Base64URL.encode(SHA256.hash(data: Data(presented.utf8)))),
            ], key: key)
    }
}
