import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport

@Suite("Credential stores")
struct CredentialStoreTests {
    static func credential(accessToken: String = "at-1") -> Credential {
        Credential(
            issuer: "https://id.example.test", clientID: "app", accessToken: accessToken, tokenType: "Bearer",
            refreshToken: "rt-1", idToken: "h.p.s", idTokenClaims: IDTokenClaims(iss: "https://id.example.test", sub: "user-1", aud: ["app"]),
            expiresAt: Date(timeIntervalSince1970: 1_700_003_600), scopes: ["openid", "profile"]
        )
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("switchback-store-\(UUID().uuidString)")
    }

    @Test("in memory: save, load, overwrite, remove")
    func inMemory() async throws {
        let store = InMemoryCredentialStore()
        #expect(await store.load(key: "a") == nil)
        await store.save(Self.credential(), key: "a")
        await store.save(Self.credential(accessToken: "at-2"), key: "a")
        #expect(await store.load(key: "a")?.accessToken == "at-2")
        await store.remove(key: "a")
        #expect(await store.load(key: "a") == nil)
    }

    @Test("file: a credential survives a new store instance (an app relaunch), and is overwritten atomically")
    func fileRoundTrip() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await FileCredentialStore(directory: directory).save(Self.credential(), key: "uaepass.main")
        let reopened = FileCredentialStore(directory: directory)
        #expect(try await reopened.load(key: "uaepass.main") == Self.credential())
        try await reopened.save(Self.credential(accessToken: "at-2"), key: "uaepass.main")
        #expect(try await reopened.load(key: "uaepass.main")?.accessToken == "at-2")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(leftovers == ["uaepass.main.json"])
        try await reopened.remove(key: "uaepass.main")
        #expect(try await reopened.load(key: "uaepass.main") == nil)
        try await reopened.remove(key: "uaepass.main")
    }

    @Test("file: readable by the owner only (0600 file in a 0700 directory)")
    func filePermissions() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await FileCredentialStore(directory: directory).save(Self.credential(), key: "k")
        let file = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("k.json").path)
        let folder = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((file[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    @Test(
        "file: keys that could escape the directory are refused", arguments: ["../escape", "a/b", "", ".hidden", String(repeating: "k", count: 129)])
    func fileRejectsUnsafeKeys(key: String) async {
        let store = FileCredentialStore(directory: Self.temporaryDirectory())
        await expectCode(.storeFailed) { try await store.save(Self.credential(), key: key) }
        await expectCode(.storeFailed) { try await store.load(key: key) }
    }

    @Test("file: a corrupt file is storeFailed, not a crash or a silent nil")
    func fileCorrupt() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: directory.appendingPathComponent("k.json"))
        await expectCode(.storeFailed) { try await FileCredentialStore(directory: directory).load(key: "k") }
    }

    @Test("expiry is judged with a leeway, and a credential's description hides its tokens")
    func expiryAndDescription() {
        let credential = Self.credential()
        #expect(!credential.isExpired(at: Date(timeIntervalSince1970: 1_700_003_500)))
        #expect(credential.isExpired(at: Date(timeIntervalSince1970: 1_700_003_580)))
        #expect(!"\(credential)".contains("at-1") && !"\(credential)".contains("rt-1") && !"\(credential)".contains("h.p.s"))
    }
}
