import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackVerification

/// `MDocVerifier` on the emulated wallet's mdoc, changed one rule at a time, the issuer re-signing where the
/// change is the issuer's: each is refused for its own reason (ISO/IEC 18013-5 §9.3.1, RFC 9052,
/// OpenID4VP 1.0 §B.2.6.1).
@Suite("mdoc verification, rule by rule")
struct MDocVerifierTests {
    static let encryptionKey = PublicJWK.ec(curve: "P-256", x963: P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
    static let binding = MDocVerifier.SessionBinding(
        clientID: "x509_hash:verifier", nonce: "n-1",
        encryptionKeyThumbprint: DPoPKey.thumbprint(of: .object(encryptionKey)).flatMap { Base64URL.decode($0) },
        responseURI: "https://verifier.example.com/wallet/response")

    struct Fixture {
        let issuer: EmulatedIssuer
        let response: CBOR
        let verifier: MDocVerifier

        init() throws {
            issuer = try EmulatedIssuer()
            let wallet = try EmulatedWallet(issuer: issuer)
            let presentation = try wallet.mdocPresentation(
                disclosing: ["given_name", "birth_date"], clientID: MDocVerifierTests.binding.clientID, nonce: MDocVerifierTests.binding.nonce,
                encryptionKey: MDocVerifierTests.encryptionKey, responseURI: MDocVerifierTests.binding.responseURI)
            response = try CBOR.decode(Base64URL.decode(presentation) ?? Data())
            verifier = MDocVerifier(issuers: try X509DocumentSigners(anchorsPEM: issuer.authority.rootPEM, clock: SystemClock()))
        }

        /// Verifies `response` as the wallet would have sent it.
        func verify(_ response: CBOR) async throws -> VerifiedPresentation {
            try await verifier.verify(Base64URL.encode(response.encoded), binding: MDocVerifierTests.binding)
        }

        /// The response with `change` applied to its one document.
        func document(_ change: (inout [CBOR.Pair]) throws -> Void) rethrows -> CBOR {
            guard case .map(var top) = response, let index = top.firstIndex(where: { $0.key == "documents" }),
                case .array(let documents) = top[index].value, case .map(var pairs) = documents[0]
            else { return response }
            try change(&pairs)
            top[index].value = .array([.map(pairs)])
            return .map(top)
        }

        /// The response with the MSO changed by `change` and signed again by the issuer.
        func mso(_ change: @escaping (inout [CBOR.Pair]) -> Void) throws -> CBOR {
            try document { pairs in
                try MDocVerifierTests.edit(&pairs, "issuerSigned") { issuerSigned in
                    try MDocVerifierTests.edit(&issuerSigned, "issuerAuth") { auth in
                        guard case .array(let parts) = auth, let payload = parts[2].bytes, let inner = try CBOR.decode(payload).embedded,
                            case .map(var mso) = try CBOR.decode(inner)
                        else { return }
                        change(&mso)
                        let newPayload = CBOR.tagged(24, .bytes(CBOR.map(mso).encoded)).encoded
                        let structure = CBOR.array([.text("Signature1"), parts[0], .bytes(Data()), .bytes(newPayload)]).encoded
                        let signature = try issuer.authority.key.signature(for: structure).rawRepresentation
                        auth = .array([parts[0], parts[1], .bytes(newPayload), .bytes(signature)])
                    }
                }
            }
        }
    }

    static func edit(_ pairs: inout [CBOR.Pair], _ key: String, _ change: (inout CBOR) throws -> Void) rethrows {
        guard let index = pairs.firstIndex(where: { $0.key == .text(key) }) else { return }
        try change(&pairs[index].value)
    }

    static func edit(_ value: inout CBOR, _ key: String, _ change: (inout CBOR) throws -> Void) rethrows {
        guard case .map(var pairs) = value else { return }
        try edit(&pairs, key, change)
        value = .map(pairs)
    }

    static func refused(_ fixture: Fixture, _ response: CBOR, _ reason: String, sourceLocation: SourceLocation = #_sourceLocation) async {
        let error = await #expect(throws: SwitchbackError.self, sourceLocation: sourceLocation) { _ = try await fixture.verify(response) }
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "accepted"), expected \(reason)", sourceLocation: sourceLocation)
    }

    @Test("as issued it verifies; the response's own rules: status, version, one document")
    func response() async throws {
        let fixture = try Fixture()
        let verified = try await fixture.verify(fixture.response)
        #expect(verified.format == "mso_mdoc" && verified.type == EmulatedWallet.pidDocType && verified.keyBound)
        guard case .map(var top) = fixture.response else { return }
        let status = top.firstIndex { $0.key == "status" }!
        top[status].value = .unsigned(10)
        await Self.refused(fixture, .map(top), "status is not OK")
        top[status].value = .unsigned(0)
        let documents = top.firstIndex { $0.key == "documents" }!
        let one = top[documents].value.array![0]
        top[documents].value = .array([one, one])
        await Self.refused(fixture, .map(top), "exactly one document")
    }

    @Test("the MSO, signed again by the issuer: another docType, a malformed status or one nobody can check, another digest algorithm, not yet valid")
    func mobileSecurityObject() async throws {
        let fixture = try Fixture()
        func set(_ key: String, _ value: CBOR) -> (inout [CBOR.Pair]) -> Void {
            { pairs in
                if let index = pairs.firstIndex(where: { $0.key == .text(key) }) {
                    pairs[index].value = value
                } else {
                    pairs.append(.init(.text(key), value))
                }
            }
        }
        await Self.refused(fixture, try fixture.mso(set("docType", "org.iso.18013.5.1.mDL")), "another docType")
        await Self.refused(fixture, try fixture.mso(set("status", .map([]))), "not one status_list or identifier_list reference")
        // ISO/IEC 18013-5 second edition: one mechanism, an identifier as a byte string (a plugtest credential
        // writing it as an integer was found non-conformant).
        let uri = CBOR.Pair("uri", "https://pid-issuer.example.com/identifiers/1")
        let both = CBOR.map([
            .init("status_list", .map([.init("idx", .unsigned(1)), uri])), .init("identifier_list", .map([.init("id", .bytes(Data([1]))), uri])),
        ])
        await Self.refused(fixture, try fixture.mso(set("status", both)), "not one status_list or identifier_list reference")
        let integer = CBOR.map([.init("identifier_list", .map([.init("id", .unsigned(7)), uri]))])
        await Self.refused(fixture, try fixture.mso(set("status", integer)), "no id as a byte string")
        let badCertificate = CBOR.map([.init("identifier_list", .map([.init("id", .bytes(Data([1]))), uri, .init("certificate", "PEM")]))])
        await Self.refused(fixture, try fixture.mso(set("status", badCertificate)), "certificate is not a byte string")
        let reference = CBOR.map([.init("status_list", .map([.init("idx", .unsigned(1)), .init("uri", "https://pid-issuer.example.com/status/1")]))])
        await Self.refused(fixture, try fixture.mso(set("status", reference)), "not set up to check")
        await Self.refused(fixture, try fixture.mso(set("digestAlgorithm", "MD5")), "digest algorithm")
        let future = EmulatedIssuer.tdate(Date() + 86400)
        await Self.refused(
            fixture, try fixture.mso(set("validityInfo", .map([.init("validFrom", future), .init("validUntil", future)]))), "not valid yet")
        // Signed again, unchanged: the re-signing itself is sound.
        _ = try await fixture.verify(try fixture.mso { _ in })
    }

    @Test("the issuer's signature: another alg, a crit header, a detached payload, a changed MSO byte")
    func issuerAuth() async throws {
        let fixture = try Fixture()
        func auth(_ change: @escaping ([CBOR]) -> [CBOR]) -> CBOR {
            fixture.document { pairs in
                Self.edit(&pairs, "issuerSigned") { signed in Self.edit(&signed, "issuerAuth") { $0 = .array(change($0.array ?? [])) } }
            }
        }
        await Self.refused(fixture, auth { [CBOR.map([.init(.int(1), .int(-35))]).encoded].map(CBOR.bytes) + $0.dropFirst() }, "not ES256")
        await Self.refused(
            fixture, auth { [CBOR.map([.init(.int(1), .int(-7)), .init(.int(2), .array([.int(99)]))]).encoded].map(CBOR.bytes) + $0.dropFirst() },
            "crit")
        await Self.refused(fixture, auth { [$0[0], $0[1], .null, $0[3]] }, "no payload")
        await Self.refused(
            fixture,
            auth { parts in
                var payload = parts[2].bytes ?? Data()
                payload[payload.count - 3] ^= 1
                return [parts[0], parts[1], .bytes(payload), parts[3]]
            }, "issuerAuth")
    }

    @Test("the disclosed items: an element twice, a random shorter than 16 bytes, an item not embedded")
    func items() async throws {
        let fixture = try Fixture()
        func items(_ change: @escaping ([CBOR]) throws -> [CBOR]) rethrows -> CBOR {
            try fixture.document { pairs in
                try Self.edit(&pairs, "issuerSigned") { signed in
                    try Self.edit(&signed, "nameSpaces") { spaces in
                        guard case .map(var namespaces) = spaces else { return }
                        namespaces[0].value = .array(try change(namespaces[0].value.array ?? []))
                        spaces = .map(namespaces)
                    }
                }
            }
        }
        await Self.refused(fixture, items { $0 + [$0[0]] }, "disclosed twice")
        await Self.refused(fixture, items { [.bytes($0[0].embedded ?? Data())] + $0.dropFirst() }, "not embedded")
        let shortRandom = try items { list in
            guard case .map(var item) = try CBOR.decode(list[0].embedded ?? Data()), let index = item.firstIndex(where: { $0.key == "random" }) else {
                return list
            }
            item[index].value = .bytes(Data(count: 8))
            return [.tagged(24, .bytes(CBOR.map(item).encoded))] + list.dropFirst()
        }
        await Self.refused(fixture, shortRandom, "random (16+ bytes)")
    }

    @Test("the device's signature: attached, or over another transcript")
    func deviceSignature() async throws {
        let fixture = try Fixture()
        let attached = fixture.document { pairs in
            Self.edit(&pairs, "deviceSigned") { signed in
                Self.edit(&signed, "deviceAuth") { auth in
                    Self.edit(&auth, "deviceSignature") { parts in
                        if case .array(let list) = parts { parts = .array([list[0], list[1], .bytes(Data([1])), list[3]]) }
                    }
                }
            }
        }
        await Self.refused(fixture, attached, "detached")
        var other = Self.binding
        other.responseURI = "https://attacker.example.com/wallet/response"
        let error = await #expect(throws: SwitchbackError.self) {
            _ = try await fixture.verifier.verify(Base64URL.encode(fixture.response.encoded), binding: other)
        }
        #expect(error?.message.contains("deviceSignature signature does not verify") == true)
    }
}

extension MDocVerifierTests {
    @Test("a refusal's reason reaches the log on one line: a holder's element name cannot forge log lines")
    func loggableReason() {
        #expect(CompanionService.loggable("given_name\nlevel=critical forged\r\u{1B}[31m") == "given_name?level=critical forged??[31m")
        #expect(CompanionService.loggable(String(repeating: "x", count: 500)).count == 200)
    }
}

/// The CWT form of the issuer's status list, as an mdoc's MSO refers to it (draft-ietf-oauth-status-list-20
/// §5.2, ISO/IEC 18013-5 second edition).
@Suite("CWT status lists")
struct CWTStatusListTests {
    /// Answers the issuer's list with `body` as `contentType`, whatever was asked.
    struct Serving: HTTPTransport {
        let contentType: String
        let body: Data
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            HTTPResponse(status: 200, headers: ["Content-Type": contentType], body: body)
        }
    }

    @Test(
        "read and verified: the entry's status, INVALID where revoked; another authority, sub or signer, a changed byte, an SD-JWT VC's issuer are refused"
    )
    func cwt() async throws {
        let issuer = try EmulatedIssuer()
        let signers = try X509DocumentSigners(anchorsPEM: issuer.authority.rootPEM, clock: SystemClock())
        let hosting = StatusListHosting(issuer, revoked: [3], next: URLSessionTransport())
        let checker = StatusListChecker(transport: hosting, issuers: signers, cwtSigners: signers)
        let own: Set<Data> = [issuer.authority.rootKeyIdentifier]
        #expect(try await checker.status(uri: issuer.statusListURI, index: 3, issuer: nil, authorities: own) == StatusList.invalid)
        #expect(try await checker.status(uri: issuer.statusListURI, index: 2, issuer: nil, authorities: own) == StatusList.valid)
        // Signed under an anchor, but not the one that issued this credential (ISO/IEC 18013-5 §12.3.6.2).
        let foreign = await #expect(throws: SwitchbackError.self) {
            _ = try await checker.status(uri: issuer.statusListURI, index: 3, issuer: nil, authorities: [Data(repeating: 9, count: 20)])
        }
        #expect(foreign?.message.contains("authority that issued") == true)

        let token = try issuer.statusListCWT(revoked: [3])
        let stranger = try EmulatedIssuer(host: "pid-issuer.example.com")
        var flipped = token
        flipped[flipped.count - 70] ^= 1
        for (body, why) in [(try stranger.statusListCWT(revoked: []), "another signer"), (flipped, "a changed byte")] {
            let refusing = StatusListChecker(
                transport: Serving(contentType: "application/statuslist+cwt", body: body), issuers: signers, cwtSigners: signers)
            await #expect(throws: SwitchbackError.self, "\(why)") {
                _ = try await refusing.status(uri: issuer.statusListURI, index: 3, issuer: nil, authorities: own)
            }
        }
        let elsewhere = StatusListChecker(
            transport: Serving(contentType: "application/statuslist+cwt", body: token), issuers: signers, cwtSigners: signers)
        let sub = await #expect(throws: SwitchbackError.self) {
            _ = try await elsewhere.status(uri: issuer.statusListURI + "0", index: 3, issuer: nil, authorities: own)
        }
        #expect(sub?.message.contains("sub") == true, "\(sub?.message ?? "")")
        // A checker for SD-JWT VCs asks for JWT only and refuses a CWT; a CWT never answers for a credential with an issuer URL.
        let jwtOnly = StatusListChecker(transport: Serving(contentType: "application/statuslist+cwt", body: token), issuers: signers)
        await #expect(throws: SwitchbackError.self) {
            _ = try await jwtOnly.status(uri: issuer.statusListURI, index: 3, issuer: nil, authorities: own)
        }
        await #expect(throws: SwitchbackError.self) {
            _ = try await elsewhere.status(uri: issuer.statusListURI, index: 3, issuer: issuer.issuer, authorities: own)
        }
    }
}
