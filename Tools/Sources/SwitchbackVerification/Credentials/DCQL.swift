import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// A Digital Credentials Query (OpenID for Verifiable Presentations 1.0 §6), for SD-JWT VCs (`dc+sd-jwt`,
/// §B.3) and ISO mdocs (`mso_mdoc`, §B.2): which credentials the verifier asks for and which of their claims. The wallet's answer is not
/// trusted to follow it (§14.9): `check(_:)` holds the verified presentations to the query.
public struct DCQLQuery: Sendable, Codable, Equatable {
    /// One requested credential (§6.1).
    public struct CredentialQuery: Sendable, Codable, Equatable {
        /// Which credentials of the format answer: `vct_values` for SD-JWT VC (§B.3.5), `doctype_value`
        /// for an mdoc (§B.2.3); exactly the one of the query's format.
        public struct Meta: Sendable, Codable, Equatable {
            public var vctValues: [String]?
            public var doctypeValue: String?

            public init(vctValues: [String]) { self.vctValues = vctValues }

            public init(doctypeValue: String) { self.doctypeValue = doctypeValue }

            enum CodingKeys: String, CodingKey {
                case vctValues = "vct_values"
                case doctypeValue = "doctype_value"
            }
        }

        /// One requested claim (§6.3): a path of names (objects), indexes (arrays), or null (every element).
        public struct ClaimQuery: Sendable, Codable, Equatable {
            public var path: [JSONValue]
            /// For an mdoc: whether the verifier keeps the element after the sign-in (§B.2.4).
            public var intentToRetain: Bool?

            public init(path: [JSONValue], intentToRetain: Bool? = nil) {
                self.path = path
                self.intentToRetain = intentToRetain
            }

            enum CodingKeys: String, CodingKey {
                case path
                case intentToRetain = "intent_to_retain"
            }
        }

        public var id: String
        public var format: String
        public var meta: Meta
        public var claims: [ClaimQuery]?
        /// More than one presentation of this credential may answer (§6.1); false by default.
        public var multiple: Bool?
        /// The authorities whose issuers this query accepts (§6.1.1): enforced here, not only asked of the
        /// wallet, so that a trust anchor shared by several issuers does not answer for all of them.
        public var trustedAuthorities: [TrustedAuthority]?
        /// A Key Binding JWT is required (§6.1); true by default.
        public var requireCryptographicHolderBinding: Bool?

        public init(id: String, vctValues: [String], claims: [[JSONValue]]) {
            self.id = id
            format = "dc+sd-jwt"
            meta = Meta(vctValues: vctValues)
            self.claims = claims.map { ClaimQuery(path: $0) }
        }

        /// An ISO mdoc (`mso_mdoc`, §B.2) of `doctype`, with the elements `claims` names as
        /// (namespace, element) pairs (§7.2), none of them to be retained.
        public init(id: String, doctype: String, claims: [(namespace: String, element: String)]) {
            self.id = id
            format = "mso_mdoc"
            meta = Meta(doctypeValue: doctype)
            self.claims = claims.map { ClaimQuery(path: [.string($0.namespace), .string($0.element)], intentToRetain: false) }
        }

        enum CodingKeys: String, CodingKey {
            case id, format, meta, claims, multiple
            case requireCryptographicHolderBinding = "require_cryptographic_holder_binding"
            case trustedAuthorities = "trusted_authorities"
        }
    }

    /// A Trusted Authorities Query (§6.1.1). Only `aki` is taken (§6.1.1.1): base64url of the
    /// keyIdentifier of an Authority Key Identifier that a certificate of the credential's chain must carry,
    /// which names the authority (an IACA, a PID provider's CA) that signed it.
    public struct TrustedAuthority: Sendable, Codable, Equatable {
        public var type: String
        public var values: [String]

        public init(type: String = "aki", values: [String]) {
            self.type = type
            self.values = values
        }
    }

    /// A Credential Set Query (§6.2): the alternatives (`options`, each a list of credential query ids) of
    /// which the wallet answers one; a set not `required` (true by default) may go unanswered.
    public struct CredentialSetQuery: Sendable, Codable, Equatable {
        public var options: [[String]]
        public var required: Bool?

        public init(options: [[String]], required: Bool? = nil) {
            self.options = options
            self.required = required
        }
    }

    public var credentials: [CredentialQuery]
    /// Which of `credentials` the wallet answers (§6.2, §6.4.2); without it, every one of them.
    public var credentialSets: [CredentialSetQuery]?

    public init(credentials: [CredentialQuery], credentialSets: [CredentialSetQuery]? = nil) {
        self.credentials = credentials
        self.credentialSets = credentialSets
    }

    enum CodingKeys: String, CodingKey {
        case credentials
        case credentialSets = "credential_sets"
    }

    /// Refuses a query this verifier cannot ask: no credentials, an `id` not of letters, digits, `_` and
    /// `-` or given twice (§6.1), a format other than `dc+sd-jwt` and `mso_mdoc`; for SD-JWT VC no
    /// `vct_values`, an empty claim path, or a path element that is not a name, a non-negative index or null
    /// (§7.1); for an mdoc no `doctype_value`, or a claim path that is not two names (§7.2). With
    /// `credential_sets` (§6.2): an empty list of sets, of options or of ids in an option, an id no credential
    /// query has or named twice in one option, or a credential query no option names (it could never be
    /// asked for, §6.4.2).
    public func validate() throws {
        func fail(_ why: String) -> SwitchbackError { SwitchbackError(.invalidConfiguration, "the DCQL query \(why)") }
        guard !credentials.isEmpty else { throw fail("asks for no credential") }
        var ids: Set<String> = []
        for credential in credentials {
            guard !credential.id.isEmpty, credential.id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }),
                ids.insert(credential.id).inserted
            else { throw fail("has an id that is not letters, digits, _ and -, or is given twice") }
            if let authorities = credential.trustedAuthorities {
                guard !authorities.isEmpty else { throw fail("has an empty trusted_authorities in \(credential.id)") }
                for authority in authorities {
                    guard authority.type == "aki" else {
                        throw fail("has a trusted_authorities type \(authority.type.prefix(20)) this verifier cannot enforce (only aki)")
                    }
                    guard !authority.values.isEmpty, authority.values.allSatisfy({ Base64URL.decode($0)?.isEmpty == false }) else {
                        throw fail("has an aki value in \(credential.id) that is not base64url")
                    }
                }
            }
            switch credential.format {
            case "dc+sd-jwt":
                guard let types = credential.meta.vctValues, !types.isEmpty, credential.meta.doctypeValue == nil else {
                    throw fail("names no vct_values (and no doctype_value) for \(credential.id)")
                }
                for claim in credential.claims ?? [] {
                    guard !claim.path.isEmpty else { throw fail("has an empty claim path in \(credential.id)") }
                    for element in claim.path {
                        switch element {
                        case .string, .null: continue
                        case .number(let index) where index >= 0 && index == index.rounded(): continue
                        default: throw fail("has a claim path element that is not a name, an index or null in \(credential.id)")
                        }
                    }
                }
            case "mso_mdoc":
                guard let doctype = credential.meta.doctypeValue, !doctype.isEmpty, credential.meta.vctValues == nil else {
                    throw fail("names no doctype_value (and no vct_values) for \(credential.id)")
                }
                for claim in credential.claims ?? [] {
                    guard claim.path.count == 2, claim.path.allSatisfy({ if case .string(let name) = $0 { !name.isEmpty } else { false } }) else {
                        throw fail("has a claim path in \(credential.id) that is not a namespace and an element (§7.2)")
                    }
                }
            default: throw fail("asks for the format \(credential.format.prefix(30)), not dc+sd-jwt or mso_mdoc")
            }
        }
        if let sets = credentialSets {
            guard !sets.isEmpty else { throw fail("has an empty credential_sets") }
            var named: Set<String> = []
            for set in sets {
                guard !set.options.isEmpty, set.options.allSatisfy({ !$0.isEmpty }) else {
                    throw fail("has a credential set with no options or an empty option")
                }
                for option in set.options {
                    guard Set(option).count == option.count, option.allSatisfy(ids.contains) else {
                        throw fail("has a credential set option that names an unknown id or one id twice")
                    }
                    named.formUnion(option)
                }
            }
            if let unnamed = credentials.first(where: { !named.contains($0.id) }) {
                throw fail("has credential_sets that never ask for \(unnamed.id)")
            }
        }
    }

    /// Holds verified presentations, keyed by credential query `id` as the `vp_token` keys them (§8.1), to
    /// the query: every credential asked for is there (with `credential_sets`, those of one option of every
    /// required set and nothing beyond them), once unless `multiple`, of an accepted `vct`, key bound unless the
    /// query says otherwise, with every requested claim; nothing else is answered.
    ///
    /// A credential query with `trusted_authorities` is answered only by a credential one of whose
    /// ``VerifiedPresentation/issuerAuthorities`` (its validated issuers' key identifiers) it names.
    public func check(_ presentations: [String: [VerifiedPresentation]]) throws {
        func refuse(_ why: String) -> SwitchbackError { SwitchbackError(.presentationInvalid, "the presentation does not answer the query: \(why)") }
        let asked = Set(credentials.map(\.id))
        guard Set(presentations.keys).isSubset(of: asked) else { throw refuse("it answers a credential that was not asked for") }
        let answered = Set(presentations.filter { !$0.value.isEmpty }.keys)
        try holdsToSets(answered, refuse: refuse)
        for credential in credentials where credentialSets == nil || answered.contains(credential.id) {
            guard let answers = presentations[credential.id], !answers.isEmpty else { throw refuse("\(credential.id) is missing") }
            guard answers.count == 1 || credential.multiple == true else { throw refuse("\(credential.id) is answered more than once") }
            for answer in answers {
                guard answer.format == credential.format else { throw refuse("\(credential.id) is not a \(credential.format) credential") }
                switch credential.format {
                case "mso_mdoc":
                    guard answer.type == credential.meta.doctypeValue else { throw refuse("\(credential.id) is not of the asked docType") }
                default:
                    guard case .string(let vct)? = answer.claims["vct"], credential.meta.vctValues?.contains(vct) == true else {
                        throw refuse("\(credential.id) is not of an accepted vct")
                    }
                }
                if let authorities = credential.trustedAuthorities {
                    let accepted = Set(authorities.flatMap(\.values).compactMap { Base64URL.decode($0) })
                    guard !accepted.isDisjoint(with: answer.issuerAuthorities) else {
                        throw refuse("\(credential.id) is not from an issuer its trusted_authorities accept")
                    }
                }
                if credential.requireCryptographicHolderBinding ?? true, !answer.keyBound {
                    throw refuse("\(credential.id) is not bound to the holder's key")
                }
                // A claim disclosed as null is not an answer.
                for claim in credential.claims ?? [] where !Self.resolve(claim.path, in: .object(answer.claims)).contains(where: { $0 != .null }) {
                    throw refuse("\(credential.id) does not disclose \(claim.path.map(\.description).joined(separator: "."))")
                }
            }
        }
    }

    /// With `credential_sets`, the answered ids must be exactly one option of every required set and of any
    /// optional sets the wallet chose (§6.4.2: "to satisfy a Credential Set Query, the Wallet MUST return
    /// presentations of a set of Credentials that match to one of the options"), so an id outside every chosen
    /// option is more than the wallet was asked for, and so are two alternatives of one set. Sets may share
    /// ids: one option per set is searched for whose union is the answer. A wallet unable to answer a required
    /// set answers nothing (§6.4.2) with an error of its own (§8.5).
    private func holdsToSets(_ answered: Set<String>, refuse: (String) -> SwitchbackError) throws {
        guard let sets = credentialSets else { return }
        // Only options answered in full can be chosen; a set's options are few (the verifier's configuration).
        let whole = sets.map { set in Set(set.options.map(Set.init).filter { $0.isSubset(of: answered) }) }
        for (position, set) in sets.enumerated() where (set.required ?? true) && whole[position].isEmpty {
            throw refuse("it answers no option of the required credential set \(position)")
        }
        if let extra = answered.subtracting(whole.reduce(into: Set<String>()) { $0.formUnion($1.joined()) }).sorted().first {
            throw refuse("\(extra) is answered outside every option it was asked in")
        }
        func choose(_ position: Int, _ union: Set<String>) -> Bool {
            guard position < sets.count else { return union == answered }
            if !(sets[position].required ?? true), choose(position + 1, union) { return true }
            return whole[position].contains { choose(position + 1, union.union($0)) }
        }
        guard choose(0, []) else { throw refuse("it answers more than one option of a credential set, or options no choice of one per set makes") }
    }

    /// The values a claim path selects (§7.1): a name selects an object's member, an index an array's
    /// element, null every element of an array.
    static func resolve(_ path: [JSONValue], in value: JSONValue) -> [JSONValue] {
        var selected = [value]
        for element in path {
            selected = selected.flatMap { current -> [JSONValue] in
                switch (element, current) {
                case (.string(let name), .object(let members)): return members[name].map { [$0] } ?? []
                case (.number(let index), .array(let elements)):
                    let position = Int(index)
                    return elements.indices.contains(position) ? [elements[position]] : []
                case (.null, .array(let elements)): return elements
                default: return []
                }
            }
        }
        return selected
    }
}
