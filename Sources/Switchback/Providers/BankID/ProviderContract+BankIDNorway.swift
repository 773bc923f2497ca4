extension ProviderContract {
    /// Norwegian BankID's OpenID provider.
    public static let bankIDNorway = ProviderContract(
        provider: "bankid-no",
        terms: [
            Term(
                .responseModes, .list(["query", "fragment", "form_post"]),
                source: "https://developer.bankid.no/bankid-oidc-provider/api/authorize",
                says: "response_mode is one of query, fragment and form_post; the endpoint is called by GET, with PKCE S256")
        ])
}
