import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
import SwitchbackTesting
import ToolsTestSupport
import SwitchbackVerification

/// The emulated wallet presenting its PID as an ISO mdoc (OpenID4VP 1.0 §B.2) to the companion: the asked
/// elements come through as `{namespace: {element: value}}`; each fault is refused for its own reason.
@Suite("The emulated wallet's mdoc and the companion's verifier")
struct EmulatedWalletMDocTests {
    static let nameSpace = EmulatedWallet.pidDocType
    static let query = DCQLQuery(credentials: [
        .init(
            id: "mdl", doctype: EmulatedWallet.pidDocType, claims: [(nameSpace, "given_name"), (nameSpace, "birth_date"), (nameSpace, "age_over_18")])
    ])

    @Test("shared: the asked elements, verified against the MSO's digests and the device signature; nothing else")
    func shares() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        try await EmulatedWalletTests.with(issuer, query: Self.query) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, steps) = try await EmulatedWalletTests.present(rig, client, wallet)
            #expect(steps.contains { $0.contains("given_name, birth_date, age_over_18 (mdoc)") }, "\(steps)")
            let presentation = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            let document = try #require(presentation.claims("mdl"))
            guard case .object(let elements)? = document[Self.nameSpace] else {
                Issue.record("no \(Self.nameSpace) namespace in \(document)")
                return
            }
            #expect(elements["given_name"] == "Erika" && elements["birth_date"] == "1984-01-26" && elements["age_over_18"] == .bool(true))
            #expect(elements["family_name"] == nil, "not asked, not disclosed")
            #expect(Set(document.keys) == [Self.nameSpace])
        }
    }

    @Test("one request for an SD-JWT VC and an mdoc: both answered, each verified by its format")
    func both() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        let query = DCQLQuery(credentials: EmulatedWalletTests.query.credentials + Self.query.credentials)
        try await EmulatedWalletTests.with(issuer, query: query) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, _) = try await EmulatedWalletTests.present(rig, client, wallet)
            let presentation = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            #expect(presentation.claims("pid")?["given_name"] == "Erika")
            #expect(presentation.claims("mdl")?[Self.nameSpace] != nil)
        }
    }

    /// Each fault and what the companion's log names as the reason: the session transcript's client_id or
    /// nonce breaks the device signature; a changed element its digest.
    static let faults: [(EmulatedWallet.Fault, String)] = [
        (.wrongNonce, "devicesignature signature does not verify"), (.wrongAudience, "devicesignature signature does not verify"),
        (.tamperedDisclosure, "does not match its digest"), (.expired, "expired"), (.unknownIssuer, "anchor"), (.withheldClaim, "does not disclose"),
        // ISO 18013-5 second edition's status: the issuer's Token Status List says INVALID.
        (.revoked, "revoked"),
    ]

    @Test("each fault of the wallet's mdoc is refused for its own reason", arguments: 0..<7)
    func faults(_ index: Int) async throws {
        let (fault, reason) = Self.faults[index]
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        try await EmulatedWalletTests.with(issuer, query: Self.query) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, _) = try await EmulatedWalletTests.present(rig, client, wallet, fault: fault)
            let refused = await #expect(throws: SwitchbackError.self) {
                _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            }
            #expect(refused?.code == .presentationInvalid)
            let line = rig.log.all.first { $0.contains("presentation refused") } ?? ""
            #expect(line.lowercased().contains(reason), "\(fault): \(line)")
        }
    }

    @Test("a document signer its IACA revoked signs no mdoc: the companion reads the IACA's list at the signer's distribution point")
    func revokedSigner() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        let hosting = StatusListHosting(issuer, revoked: [EmulatedWallet.revokedIndex], revokedSigner: true, next: URLSessionTransport())
        try await EmulatedWalletTests.with(trusting: issuer.authority.rootPEM, query: Self.query, transport: hosting) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, _) = try await EmulatedWalletTests.present(rig, client, wallet)
            let refused = await #expect(throws: SwitchbackError.self) {
                _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            }
            #expect(refused?.code == .presentationInvalid)
            let line = rig.log.all.first { $0.contains("presentation refused") } ?? ""
            #expect(line.contains("revoked by its IACA"), "\(line)")
        }
    }

    @Test("trusted_authorities (aki) is enforced per query: the issuer's authority passes; a query naming another refuses the same credential")
    func trustedAuthorities() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        for (value, accepted) in [
            (Base64URL.encode(issuer.authority.rootKeyIdentifier), true), (Base64URL.encode(Data(repeating: 7, count: 20)), false),
        ] {
            for base in [Self.query, EmulatedWalletTests.query] {
                var query = base
                query.credentials[0].trustedAuthorities = [.init(values: [value])]
                try await EmulatedWalletTests.with(issuer, query: query) { rig in
                    let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
                    let (code, _) = try await EmulatedWalletTests.present(rig, client, wallet)
                    if accepted {
                        _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
                    } else {
                        await #expect(throws: SwitchbackError.self) {
                            _ = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
                        }
                        #expect(rig.log.all.contains { $0.contains("trusted_authorities") }, "\(query.credentials[0].format)")
                    }
                }
            }
        }
        var unenforceable = Self.query
        unenforceable.credentials[0].trustedAuthorities = [.init(type: "etsi_tl", values: ["https://lotl.example.com"])]
        #expect(throws: SwitchbackError.self, "a type the verifier cannot enforce is refused, not ignored") { try unenforceable.validate() }
    }

    @Test("the redirect_uri client identifier (development): unsigned requests the wallet holds to its response URI; both formats bound to it")
    func redirectURIPrefix() async throws {
        let issuer = try EmulatedIssuer()
        let wallet = try EmulatedWallet(issuer: issuer)
        let query = DCQLQuery(credentials: EmulatedWalletTests.query.credentials + Self.query.credentials)
        try await EmulatedWalletTests.with(
            issuer, query: query, change: { configuration, _ in configuration.wallet?.clientIdentifierPrefix = "redirect_uri" }
        ) { rig in
            let client = CompanionClient(rig.companion.baseURL, transport: rig.transport)
            let (code, steps) = try await EmulatedWalletTests.present(rig, client, wallet)
            #expect(steps.contains { $0.contains("(redirect_uri:http://") }, "\(steps)")
            let presentation = try await client.redeemPresentation(responseCode: code, binding: CompanionRig.binding)
            #expect(presentation.claims("pid")?["given_name"] == "Erika" && presentation.claims("mdl") != nil)
        }
        var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
        configuration.wallet = .init(
            signingKeyFile: "/k", certificateChainFile: "/c", issuerTrustAnchorsFile: "/a", query: EmulatedWalletTests.query,
            appLink: "https://app.example.com/w", clientIdentifierPrefix: "redirect_uri")
        configuration.host = "0.0.0.0"
        configuration.limits.directClients = true
        let exposed = #expect(throws: SwitchbackError.self, "unsigned requests beyond loopback") { try configuration.validate() }
        #expect(exposed?.message.contains("redirect_uri") == true, "\(exposed?.message ?? "")")
        configuration.host = "127.0.0.1"
        configuration.wallet?.clientIdentifierPrefix = "x509_san_dns"
        configuration.publicURL = nil
        #expect(throws: SwitchbackError.self, "x509_san_dns without an https publicURL") { try configuration.validate() }
        configuration.wallet?.clientIdentifierPrefix = "pre-registered"
        #expect(throws: SwitchbackError.self) { try configuration.validate() }
    }

    @Test("an mdoc query without mdoc anchors, or an SD-JWT query without issuer anchors, is refused before the port binds")
    func anchorsRequired() throws {
        var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
        configuration.wallet = .init(
            signingKeyFile: "/k", certificateChainFile: "/c", issuerTrustAnchorsFile: "/a", query: Self.query, appLink: "https://app.example.com/w")
        let missing = #expect(throws: SwitchbackError.self) { try configuration.validate() }
        #expect(missing?.message.contains("wallet.mdocTrustAnchorsFile") == true)
        configuration.wallet?.mdocTrustAnchorsFile = "/iaca"
        configuration.wallet?.issuerTrustAnchorsFile = nil
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.wallet?.query = EmulatedWalletTests.query
        let sdJWT = #expect(throws: SwitchbackError.self) { try configuration.validate() }
        #expect(sdJWT?.message.contains("wallet.issuerTrustAnchorsFile") == true)
    }
}
