extension ProviderContract {
    /// Swedish BankID through Idura (formerly Criipto), the `bankid-se` preset.
    public static let bankIDSweden = ProviderContract(
        provider: "bankid-se",
        terms: [
            Term(
                .providerReturnPage, .flag(false),
                source: "https://docs.idura.app/verify/guides/appswitch",
                says: "after the app switch back the login request completes in the browser with an OAuth2 response to the redirect URI",
                status: .assumed(
                    "Idura words it for its app switch in general; its Android SDK's hint mobile:continue_button:never suggests a continue page that can be turned off (the emulator's continue-button variant)"
                ))
        ])
}
