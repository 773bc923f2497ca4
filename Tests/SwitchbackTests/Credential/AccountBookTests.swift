import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport
import SwitchbackTesting

/// Several accounts: a person signed in as themselves and as a company's representative.
@Suite("AccountBook")
struct AccountBookTests {
    static func credential(issuer: String, subject: String, name: String?, accessToken: String = "at") -> Credential {
        var claims: [String: JSONValue] = ["iss": .string(issuer), "sub": .string(subject)]
        if let name { claims["name"] = .string(name) }
        let idToken = "e30." + Base64URL.encode(Data(JSONValue.object(claims).description.utf8)) + ".c2ln"
        return Credential(
            issuer: issuer, clientID: "app", accessToken: accessToken, tokenType: "Bearer", refreshToken: "rt", idToken: idToken,
            idTokenClaims: IDTokenClaims(iss: issuer, sub: subject, aud: ["app"]), expiresAt: Date().addingTimeInterval(3600), scopes: ["openid"])
    }

    static let singpass = "https://id.singpass.gov.sg/fapi"
    static let corppass = "https://id.corppass.gov.sg"

    @Test(
        "accounts of two issuers and two subjects are kept side by side; the same account signing in again replaces its credential",
        arguments: [false, true])
    func severalAccounts(onDisk: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-accounts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store: any CredentialCollection = onDisk ? FileCredentialStore(directory: directory) : InMemoryCredentialStore()
        let book = AccountBook(store: store)
        let personal = try await book.add(Self.credential(issuer: Self.singpass, subject: "S1234567D", name: "Tan Ah Kow"))
        let business = try await book.add(Self.credential(issuer: Self.corppass, subject: "S1234567D-UEN201912345K", name: "Tan Ah Kow (ACME)"))
        let other = try await book.add(Self.credential(issuer: Self.singpass, subject: "S7654321A", name: nil))
        #expect(Set([personal.id, business.id, other.id]).count == 3)
        #expect(try await book.accounts().map(\.displayName) == ["Tan Ah Kow (ACME)", nil, "Tan Ah Kow"], "by issuer, then name or subject")

        let again = try await book.add(Self.credential(issuer: Self.singpass, subject: "S1234567D", name: "Tan Ah Kow", accessToken: "at-2"))
        #expect(again == personal)
        #expect(try await book.accounts().count == 3)
        #expect(try await store.load(key: personal.id)?.accessToken == "at-2")

        try await book.remove(business)
        #expect(try await book.accounts().map(\.id).sorted() == [personal.id, other.id].sorted())
    }

    @Test("each account has its own manager: the picked account's credential is the one handed out")
    func managerPerAccount() async throws {
        let provider = try await StubProvider()
        let book = AccountBook(store: InMemoryCredentialStore())
        let first = try await book.add(Self.credential(issuer: StubProvider.issuer, subject: "one", name: "One", accessToken: "at-one"))
        let second = try await book.add(Self.credential(issuer: StubProvider.issuer, subject: "two", name: "Two", accessToken: "at-two"))
        #expect(try await book.manager(for: first, client: provider.client()).validCredential().accessToken == "at-one")
        #expect(try await book.manager(for: second, client: provider.client()).validCredential().accessToken == "at-two")
    }

    @Test("a credential that names no subject cannot be kept as an account")
    func noSubject() async {
        var credential = Self.credential(issuer: Self.singpass, subject: "x", name: nil)
        credential.idTokenClaims = nil
        await expectCode(.identityRequirementNotMet) { try await AccountBook(store: InMemoryCredentialStore()).add(credential) }
    }
}

extension AccountBookTests {
    @Test("the current account: the first one kept, then the one selected; it survives a relaunch and goes with its account")
    func currentAccount() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-accounts-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileCredentialStore(directory: directory)
        let selection = FileAccountSelection(file: directory.appendingPathComponent("current"))
        let book = AccountBook(store: store, selection: selection)
        #expect(try await book.currentAccount() == nil)
        let personal = try await book.add(Self.credential(issuer: Self.singpass, subject: "S1234567D", name: "Tan Ah Kow"))
        let business = try await book.add(Self.credential(issuer: Self.corppass, subject: "S1234567D-UEN201912345K", name: "ACME"))
        #expect(try await book.currentAccount() == personal, "the first account kept becomes the current one")
        #expect(personal.clientID == "app" && business.issuer == Self.corppass, "the account names its issuer and client")
        try await book.select(business)

        // A relaunch: a new book over the same store and selection.
        let relaunched = AccountBook(
            store: FileCredentialStore(directory: directory), selection: FileAccountSelection(file: directory.appendingPathComponent("current")))
        #expect(try await relaunched.currentAccount() == business)
        try await relaunched.remove(business)
        #expect(try await relaunched.currentAccount() == nil, "a removed account is current no more")
        await expectCode(.notSignedIn) { try await relaunched.select(business) }
    }

    @Test("changes(): every save, removal and selection, in order, to each listener")
    func changes() async throws {
        let book = AccountBook(store: InMemoryCredentialStore())
        let stream = await book.changes()
        let other = await book.changes()
        let alice = try await book.add(Self.credential(issuer: Self.singpass, subject: "alice", name: "Alice"))
        let bob = try await book.add(Self.credential(issuer: Self.singpass, subject: "bob", name: "Bob"))
        try await book.select(bob)
        try await book.remove(bob)
        let expected: [AccountChange] = [.saved(alice), .selected(alice), .saved(bob), .selected(bob), .removed(bob), .selected(nil)]
        var seen: [AccountChange] = []
        for await change in stream {
            seen.append(change)
            if seen.count == expected.count { break }
        }
        #expect(seen == expected)
        var first: AccountChange?
        for await change in other {
            first = change
            break
        }
        #expect(first == .saved(alice))
    }
}
