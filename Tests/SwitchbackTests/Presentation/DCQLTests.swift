import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// DCQL queries (OpenID4VP 1.0 §6, §7) and verified presentations held to them: the wallet is not trusted
/// to have answered what was asked (§14.9).
@Suite("DCQL queries and the presentations that answer them")
struct DCQLTests {
    /// OpenID4VP 1.0 §7.4, `examples/query_lang/simple.json`.
    static let specificationQuery = #"""
        {"credentials": [{"id": "my_credential", "format": "dc+sd-jwt",
          "meta": {"vct_values": ["https://credentials.example.com/identity_credential"]},
          "claims": [{"path": ["last_name"]}, {"path": ["first_name"]}, {"path": ["address", "street_address"]}]}]}
        """#

    static func answer(_ claims: [String: JSONValue], keyBound: Bool = true) -> VerifiedPresentation {
        VerifiedPresentation(claims: claims, type: "dc+sd-jwt", keyBound: keyBound)
    }

    static let complete: [String: JSONValue] = [
        "vct": "https://credentials.example.com/identity_credential", "last_name": "Doe", "first_name": "John",
        "address": .object(["street_address": "123 Main St"]),
    ]

    @Test("the specification's query reads and validates; an answer with every claim passes, each gap is refused")
    func specificationQuery() throws {
        let query = try JSONDecoder().decode(DCQLQuery.self, from: Data(Self.specificationQuery.utf8))
        try query.validate()
        try query.check(["my_credential": [Self.answer(Self.complete)]])

        var withoutStreet = Self.complete
        withoutStreet["address"] = .object(["locality": "Anytown"])
        var otherType = Self.complete
        otherType["vct"] = "https://credentials.example.com/other"
        let refusals: [(String, [String: [VerifiedPresentation]])] = [
            ("does not disclose", ["my_credential": [Self.answer(withoutStreet)]]),
            ("accepted vct", ["my_credential": [Self.answer(otherType)]]),
            ("holder's key", ["my_credential": [Self.answer(Self.complete, keyBound: false)]]),
            ("more than once", ["my_credential": [Self.answer(Self.complete), Self.answer(Self.complete)]]),
            ("not asked for", ["my_credential": [Self.answer(Self.complete)], "another": [Self.answer(Self.complete)]]),
            ("missing", [:]),
        ]
        for (reason, presentations) in refusals {
            let error = #expect(throws: SwitchbackError.self) { try query.check(presentations) }
            #expect(error?.code == .presentationInvalid && error?.message.contains(reason) == true, "\(reason): \(error?.message ?? "")")
        }
    }

    @Test("claim paths: names, indexes and null for every element (§7.1)")
    func paths() {
        let value: JSONValue = .object(["nationalities": .array(["DE", "FR"]), "address": .object(["country": "DE"])])
        #expect(DCQLQuery.resolve(["nationalities", .null], in: value) == ["DE", "FR"])
        #expect(DCQLQuery.resolve(["nationalities", .number(1)], in: value) == ["FR"])
        #expect(DCQLQuery.resolve(["nationalities", .number(2)], in: value).isEmpty)
        #expect(DCQLQuery.resolve(["address", "country"], in: value) == ["DE"])
        #expect(DCQLQuery.resolve(["address", .null], in: value).isEmpty, "null selects from arrays only")
    }

    @Test("queries this verifier cannot ask are refused: no credential, bad or repeated ids, another format, no vct, bad paths")
    func invalidQueries() {
        let good = DCQLQuery.CredentialQuery(id: "pid", vctValues: ["urn:eudi:pid:1"], claims: [["given_name"]])
        var badID = good
        badID.id = "p i d"
        var mdoc = good
        mdoc.format = "mso_mdoc"
        var noVCT = good
        noVCT.meta.vctValues = []
        var emptyPath = good
        emptyPath.claims = [.init(path: [])]
        var negative = good
        negative.claims = [.init(path: ["a", .number(-1)])]
        var boolean = good
        boolean.claims = [.init(path: [.bool(true)])]
        for credentials in [[], [badID], [good, good], [mdoc], [noVCT], [emptyPath], [negative], [boolean]] {
            #expect(throws: SwitchbackError.self, "\(credentials.map(\.id))") { try DCQLQuery(credentials: credentials).validate() }
        }
        #expect(throws: Never.self) { try DCQLQuery(credentials: [good]).validate() }
    }
}
