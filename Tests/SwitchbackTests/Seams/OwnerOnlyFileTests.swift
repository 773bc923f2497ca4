import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTestSupport

/// The file stores' files are owner-only from the first byte: another user polling the directory never sees
/// one (nor the temporary file it is written to) with group or other permission bits.
@Suite("Owner-only files")
struct OwnerOnlyFileTests {
    /// Modes wider than 0600 seen on any regular file in `directory` while `writes` runs, by a watcher that
    /// stats the directory's entries as fast as it can.
    static func widerModesSeen(in directory: URL, during writes: () async throws -> Void) async throws -> [String] {
        let seen = LockedValue<[String]>([])
        let stop = LockedValue(false)
        let path = directory.path
        let watcher = Thread {
            while !stop.withLock({ $0 }) {
                guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { continue }
                for name in names {
                    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name),
                        attributes[.type] as? FileAttributeType == .typeRegular, let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue
                    else { continue }
                    if mode & 0o077 != 0 { seen.withLock { $0.append("\(name): \(String(mode, radix: 8))") } }
                }
            }
        }
        watcher.start()
        defer { stop.withLock { $0 = true } }
        try await writes()
        return seen.withLock { $0 }
    }

    @Test("200 credential saves: no file in the directory is ever readable by others, not even for an instant")
    func credentialStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-owner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = FileCredentialStore(directory: directory)
        try await store.save(CredentialStoreTests.credential(), key: "k")
        let wider = try await Self.widerModesSeen(in: directory) {
            for index in 0..<200 { try await store.save(CredentialStoreTests.credential(accessToken: "at-\(index)"), key: "k") }
        }
        #expect(wider.isEmpty, "\(wider.prefix(3))")
        #expect(try await store.load(key: "k")?.accessToken == "at-199")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["k.json"], "no temporary file is left behind")
    }

    @Test("a directory it makes is 0700 from its creation; a file is 0600 whatever the process's umask lets through")
    func modes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-owner-\(UUID().uuidString)/nested")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        try OwnerOnlyFile.makeDirectory(directory)
        let file = directory.appendingPathComponent("f")
        try OwnerOnlyFile.write(Data("one".utf8), to: file)
        try OwnerOnlyFile.write(Data("two".utf8), to: file)
        #expect(try String(contentsOf: file, encoding: .utf8) == "two")
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    @Test("an existing directory readable by others is narrowed to 0700; a symbolic link in its place is refused, not followed")
    func existingDirectories() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-owner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let wide = base.appendingPathComponent("wide")
        try FileManager.default.createDirectory(at: wide, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try OwnerOnlyFile.makeDirectory(wide)
        #expect((try FileManager.default.attributesOfItem(atPath: wide.path)[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        let link = base.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: wide)
        expectCode(.storeFailed) { try OwnerOnlyFile.makeDirectory(link) }
        expectCode(.storeFailed) {
            try FileFlowJournalStore(directory: link).save(try FlowJournalTests.journal("f1", expiresAt: Date().addingTimeInterval(600)))
        }
    }

    @Test("a file where the directory should be, or a directory that cannot be written, is a typed storeFailed")
    func failures() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-owner-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        let notADirectory = base.appendingPathComponent("plain")
        try Data().write(to: notADirectory)
        expectCode(.storeFailed) { try OwnerOnlyFile.makeDirectory(notADirectory) }
        expectCode(.storeFailed) { try OwnerOnlyFile.write(Data("x".utf8), to: base.appendingPathComponent("missing/f")) }
    }
}
