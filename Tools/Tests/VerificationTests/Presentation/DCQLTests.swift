import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackVerification

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
        var unknown = good
        unknown.format = "jwt_vc_json"
        var noVCT = good
        noVCT.meta.vctValues = []
        var emptyPath = good
        emptyPath.claims = [.init(path: [])]
        var negative = good
        negative.claims = [.init(path: ["a", .number(-1)])]
        var boolean = good
        boolean.claims = [.init(path: [.bool(true)])]
        for credentials in [[], [badID], [good, good], [mdoc], [unknown], [noVCT], [emptyPath], [negative], [boolean]] {
            #expect(throws: SwitchbackError.self, "\(credentials.map(\.id))") { try DCQLQuery(credentials: credentials).validate() }
        }
        #expect(throws: Never.self) { try DCQLQuery(credentials: [good]).validate() }
    }

    /// An mDL query in the style of OpenID4VP 1.0 §7.4's examples: two elements, as (namespace, element).
    static let mdocQuery = #"""
        {"credentials": [{"id": "my_credential", "format": "mso_mdoc", "meta": {"doctype_value": "org.iso.18013.5.1.mDL"},
          "claims": [{"path": ["org.iso.18013.5.1", "family_name"], "intent_to_retain": false}, {"path": ["org.iso.18013.5.1", "given_name"]}]}]}
        """#

    @Test("an mdoc query (§B.2.3, §7.2): doctype_value and two-name paths; the answer must be an mdoc of that docType with the elements")
    func mdocQuery() throws {
        let query = try JSONDecoder().decode(DCQLQuery.self, from: Data(Self.mdocQuery.utf8))
        try query.validate()
        #expect(query.credentials[0].claims?[0].intentToRetain == false)
        let elements: [String: JSONValue] = ["org.iso.18013.5.1": .object(["family_name": "Doe", "given_name": "John"])]
        func mdoc(_ claims: [String: JSONValue], type: String = "org.iso.18013.5.1.mDL", format: String = "mso_mdoc") -> VerifiedPresentation {
            var answer = VerifiedPresentation(claims: claims, type: type, keyBound: true)
            answer.format = format
            return answer
        }
        try query.check(["my_credential": [mdoc(elements)]])
        #expect(throws: SwitchbackError.self, "another docType") { try query.check(["my_credential": [mdoc(elements, type: "org.example.other")]]) }
        #expect(throws: SwitchbackError.self, "an SD-JWT VC for an mdoc query") {
            try query.check(["my_credential": [mdoc(elements, format: "dc+sd-jwt")]])
        }
        #expect(throws: SwitchbackError.self, "an element missing") {
            try query.check(["my_credential": [mdoc(["org.iso.18013.5.1": .object(["family_name": "Doe"])])]])
        }
        var threeNames = query
        threeNames.credentials[0].claims = [.init(path: ["org.iso.18013.5.1", "address", "city"])]
        var index = query
        index.credentials[0].claims = [.init(path: ["org.iso.18013.5.1", .number(0)])]
        var noDoctype = query
        noDoctype.credentials[0].meta = .init(vctValues: ["x"])
        for invalid in [threeNames, index, noDoctype] {
            #expect(throws: SwitchbackError.self) { try invalid.validate() }
        }
        let written = try JSONEncoder().encode(query)
        #expect(try JSONDecoder().decode(DCQLQuery.self, from: written) == query)
        #expect(String(decoding: written, as: UTF8.self).contains(#""doctype_value":"org.iso.18013.5.1.mDL""#))
    }

    @Test("trusted_authorities (§6.1.1): a credential answers only when one of its validated issuers has a named key identifier")
    func trustedAuthorities() throws {
        var query = try JSONDecoder().decode(DCQLQuery.self, from: Data(Self.specificationQuery.utf8))
        query.credentials[0].trustedAuthorities = [.init(values: ["s9tIpPmhxdiuNkHMEWNpYim8S8Y"])]
        try query.validate()
        var answer = Self.answer(Self.complete)
        let aki = try #require(Base64URL.decode("s9tIpPmhxdiuNkHMEWNpYim8S8Y"))
        answer.issuerAuthorities = [Data(repeating: 1, count: 20), aki]
        try query.check(["my_credential": [answer]])
        answer.issuerAuthorities = [Data(repeating: 1, count: 20)]
        #expect(throws: SwitchbackError.self, "another authority") { try query.check(["my_credential": [answer]]) }
        answer.issuerAuthorities = []
        #expect(throws: SwitchbackError.self, "no validated issuer") { try query.check(["my_credential": [answer]]) }
        for authorities: [DCQLQuery.TrustedAuthority] in [
            [], [.init(type: "openid_federation", values: ["https://fed.example.com"])], [.init(values: [])], [.init(values: ["not base64url!"])],
        ] {
            query.credentials[0].trustedAuthorities = authorities
            #expect(throws: SwitchbackError.self, "\(authorities)") { try query.validate() }
        }
    }

    /// OpenID4VP 1.0 §7.4, `examples/query_lang/credentials_alternatives.json` (tag 1.0-final): a PID, another
    /// PID, or two reduced credentials together; a rewards card if the wallet has one.
    static let alternativesQuery = #"""
        {"credentials": [
          {"id": "pid", "format": "dc+sd-jwt", "meta": {"vct_values": ["https://credentials.example.com/identity_credential"]},
           "claims": [{"path": ["given_name"]}, {"path": ["family_name"]}, {"path": ["address", "street_address"]}]},
          {"id": "other_pid", "format": "dc+sd-jwt", "meta": {"vct_values": ["https://othercredentials.example/pid"]},
           "claims": [{"path": ["given_name"]}, {"path": ["family_name"]}, {"path": ["address", "street_address"]}]},
          {"id": "pid_reduced_cred_1", "format": "dc+sd-jwt", "meta": {"vct_values": ["https://credentials.example.com/reduced_identity_credential"]},
           "claims": [{"path": ["family_name"]}, {"path": ["given_name"]}]},
          {"id": "pid_reduced_cred_2", "format": "dc+sd-jwt", "meta": {"vct_values": ["https://cred.example/residence_credential"]},
           "claims": [{"path": ["postal_code"]}, {"path": ["locality"]}, {"path": ["region"]}]},
          {"id": "nice_to_have", "format": "dc+sd-jwt", "meta": {"vct_values": ["https://company.example/company_rewards"]},
           "claims": [{"path": ["rewards_number"]}]}],
         "credential_sets": [
          {"options": [["pid"], ["other_pid"], ["pid_reduced_cred_1", "pid_reduced_cred_2"]]},
          {"required": false, "options": [["nice_to_have"]]}]}
        """#

    @Test("credential_sets (§6.2, §6.4.2): one option of every required set, optional sets at will, nothing beyond the options answered")
    func credentialSets() throws {
        let query = try JSONDecoder().decode(DCQLQuery.self, from: Data(Self.alternativesQuery.utf8))
        try query.validate()
        #expect(query.credentialSets?.map(\.required) == [nil, false])
        let person: [String: JSONValue] = [
            "given_name": "Erika", "family_name": "Mustermann", "address": .object(["street_address": "Heidestraße 17"]),
        ]
        func credential(_ vct: String, _ claims: [String: JSONValue]) -> [VerifiedPresentation] {
            var claims = claims
            claims["vct"] = .string(vct)
            return [Self.answer(claims)]
        }
        let pid = credential("https://credentials.example.com/identity_credential", person)
        let otherPID = credential("https://othercredentials.example/pid", person)
        let reduced1 = credential(
            "https://credentials.example.com/reduced_identity_credential", ["given_name": "Erika", "family_name": "Mustermann"])
        let reduced2 = credential("https://cred.example/residence_credential", ["postal_code": "51147", "locality": "Köln", "region": "NRW"])
        let rewards = credential("https://company.example/company_rewards", ["rewards_number": "7"])
        let accepted: [[String: [VerifiedPresentation]]] = [
            ["pid": pid], ["other_pid": otherPID], ["pid_reduced_cred_1": reduced1, "pid_reduced_cred_2": reduced2],
            ["pid": pid, "nice_to_have": rewards], ["other_pid": otherPID, "nice_to_have": rewards],
        ]
        for presentations in accepted {
            #expect(throws: Never.self, "\(presentations.keys.sorted())") { try query.check(presentations) }
        }
        let refused: [(String, [String: [VerifiedPresentation]])] = [
            ("no option of the required credential set 0", [:]),
            ("no option of the required credential set 0", ["nice_to_have": rewards]),
            ("pid_reduced_cred_1 is answered outside", ["pid": pid, "pid_reduced_cred_1": reduced1]),
            ("no option of the required credential set 0", ["pid_reduced_cred_1": reduced1]),
            ("pid_reduced_cred_2 is answered outside", ["other_pid": otherPID, "pid_reduced_cred_2": reduced2]),
            ("more than one option of a credential set", ["pid": pid, "other_pid": otherPID]),
            ("not asked for", ["pid": pid, "mdl": pid]),
            ("other_pid is not of an accepted vct", ["other_pid": pid]),
            ("nice_to_have does not disclose", ["pid": pid, "nice_to_have": credential("https://company.example/company_rewards", [:])]),
        ]
        for (reason, presentations) in refused {
            let error = #expect(throws: SwitchbackError.self) { try query.check(presentations) }
            #expect(error?.code == .presentationInvalid && error?.message.contains(reason) == true, "\(reason): \(error?.message ?? "")")
        }

        // An option inside another answered option is the same choice, not a second one.
        let nested = DCQLQuery(
            credentials: query.credentials,
            credentialSets: [
                .init(options: [["pid_reduced_cred_1"], ["pid_reduced_cred_1", "pid_reduced_cred_2"], ["pid"], ["other_pid"], ["nice_to_have"]])
            ])
        try nested.check(["pid_reduced_cred_1": reduced1, "pid_reduced_cred_2": reduced2])
        try nested.check(["pid_reduced_cred_1": reduced1])
        // Sets sharing an id: one option per set whose union is the answer, whichever set an id serves.
        let shared = DCQLQuery(
            credentials: query.credentials,
            credentialSets: [.init(options: [["pid"], ["other_pid"]]), .init(options: [["other_pid"], ["nice_to_have"]])])
        try shared.check(["pid": pid, "other_pid": otherPID])
        try shared.check(["other_pid": otherPID])
        try shared.check(["pid": pid, "nice_to_have": rewards])
        #expect(throws: SwitchbackError.self) { try shared.check(["pid": pid, "other_pid": otherPID, "nice_to_have": rewards]) }
        let both = DCQLQuery(
            credentials: query.credentials, credentialSets: [.init(options: [["pid"], ["other_pid"]]), .init(options: [["pid", "other_pid"]])])
        try both.check(["pid": pid, "other_pid": otherPID])
    }

    @Test("credential_sets this verifier cannot ask are refused: none, an empty option, an unknown or repeated id, a credential no option names")
    func invalidCredentialSets() throws {
        let credentials = try JSONDecoder().decode(DCQLQuery.self, from: Data(Self.alternativesQuery.utf8)).credentials
        let all = credentials.map(\.id)
        let refused: [([DCQLQuery.CredentialSetQuery], String)] = [
            ([], "empty credential_sets"),
            ([.init(options: [])], "no options"),
            ([.init(options: [all, []])], "no options or an empty option"),
            ([.init(options: [all + ["mdl"]])], "unknown id"),
            ([.init(options: [all + ["pid"]])], "one id twice"),
            ([.init(options: [["pid"], ["other_pid"]])], "never ask for pid_reduced_cred_1"),
        ]
        for (sets, reason) in refused {
            let error = #expect(throws: SwitchbackError.self) { try DCQLQuery(credentials: credentials, credentialSets: sets).validate() }
            #expect(error?.code == .invalidConfiguration && error?.message.contains(reason) == true, "\(reason): \(error?.message ?? "")")
        }
        try DCQLQuery(credentials: credentials, credentialSets: [.init(options: [all])]).validate()
        // The query the request object carries names the sets as §6.2 does, and leaves them out when there are none.
        let encoded = try JSONEncoder().encode(DCQLQuery(credentials: credentials, credentialSets: [.init(options: [all], required: false)]))
        let members = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(Set(members.keys) == ["credentials", "credential_sets"])
        let plain = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(DCQLQuery(credentials: credentials))) as? [String: Any])
        #expect(Set(plain.keys) == ["credentials"])
    }
}
