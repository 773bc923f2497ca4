import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting

@Suite("App links: the universal-link form of an authenticator's custom-scheme link")
struct AppLinkFormTests {
    static let appLinks = ["bankid": URL(string: "https://app.bankid.com/")!]

    @Test("the query carries over to the https base; other schemes and non-https bases have none")
    func forms() throws {
        let link = try #require(URL(string: "bankid:///?autostarttoken=7c40b5c9&redirect=https%3A%2F%2Fapp.example.com%2Fappswitch"))
        #expect(
            AppLinkForm.universalLink(for: link, appLinks: Self.appLinks)?.absoluteString
                == "https://app.bankid.com/?autostarttoken=7c40b5c9&redirect=https%3A%2F%2Fapp.example.com%2Fappswitch")
        #expect(
            AppLinkForm.universalLink(for: URL(string: "BankID:///?autostarttoken=1")!, appLinks: Self.appLinks)?.host == "app.bankid.com",
            "schemes compare case-insensitively")
        #expect(AppLinkForm.universalLink(for: URL(string: "uaepass://digitalid?txn=1")!, appLinks: Self.appLinks) == nil)
        #expect(
            AppLinkForm.universalLink(for: link, appLinks: ["bankid": URL(string: "http://app.bankid.com/")!]) == nil,
            "only https can be a universal link")
    }

    @Test("openUniversalLink is a requirement: an opener's own answer is used through the protocol, the default says no")
    func dispatch() async {
        let url = URL(string: "https://app.bankid.com/?autostarttoken=1")!
        let claiming: any URLOpener = RecordingURLOpener(universalLinks: true)
        #expect(await claiming.openUniversalLink(url))
        struct SchemeOnly: URLOpener { func open(_ url: URL) async -> Bool { true } }
        #expect(await !(SchemeOnly() as any URLOpener).openUniversalLink(url), "an opener without universal links opens nothing by them")
    }
}
