import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import ToolsTestSupport

/// `switchback check-status`, run as the built executable, on the emulated issuer's lists written to files:
/// VALID exits 0, INVALID 1, a status that cannot be confirmed 2.
@Suite("switchback check-status", .serialized)
struct CheckStatusCommandTests {
    static func run(_ arguments: [String], files: [String: Data]) async throws -> VerifyIDTokenCommandTests.Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-status-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, contents) in files { try contents.write(to: folder.appendingPathComponent(name)) }
        let resolved = arguments.map { files[$0] != nil ? folder.appendingPathComponent($0).path : $0 }
        return try await VerifyIDTokenCommandTests.run(resolved, command: ["check-status"])
    }

    @Test("an SD-JWT VC's list signed by its issuer's Status Issuer: entry 0 VALID, entry 1 INVALID; for another uri, unconfirmed")
    func statusIssuer() async throws {
        let issuer = try EmulatedIssuer(separateStatusIssuer: true)
        let files = [
            "roots.pem": Data(issuer.authority.rootPEM.utf8), "list.jwt": Data(try issuer.statusListToken(revoked: [1]).utf8),
            "chain.pem": Data(try issuer.authority.leafPEM.utf8),
        ]
        let common = ["--trust-anchors", "roots.pem", "--list", "list.jwt", "--issuer", issuer.issuer, "--credential-chain", "chain.pem"]
        let valid = try await Self.run(common + ["--uri", issuer.statusListURI, "--index", "0"], files: files)
        #expect(valid.status == 0 && valid.stdout.contains("VALID"), "\(valid.stderr)")
        let revoked = try await Self.run(common + ["--uri", issuer.statusListURI, "--index", "1"], files: files)
        #expect(revoked.status == 1 && revoked.stdout.contains("INVALID"), "\(revoked.stderr)")
        let elsewhere = try await Self.run(common + ["--uri", issuer.statusListURI + "0", "--index", "0"], files: files)
        #expect(elsewhere.status == 2 && elsewhere.stderr.contains("sub"), "\(elsewhere.stderr)")
    }

    @Test("an mdoc identifier list: a listed identifier INVALID, another VALID; wrong options refused before anything is read")
    func identifierList() async throws {
        let issuer = try EmulatedIssuer()
        let listed = Data("revoked-mdoc-1".utf8)
        let files = ["iaca.pem": Data(issuer.authority.rootPEM.utf8), "list.cwt": try issuer.identifierListCWT(revoked: [listed])]
        let common = ["--mdoc", "--trust-anchors", "iaca.pem", "--list", "list.cwt", "--uri", issuer.identifierListURI]
        let revoked = try await Self.run(common + ["--id", listed.map { String(format: "%02x", $0) }.joined()], files: files)
        #expect(revoked.status == 1 && revoked.stdout.contains("INVALID"), "\(revoked.stderr)")
        let valid = try await Self.run(common + ["--id", "00ff"], files: files)
        #expect(valid.status == 0 && valid.stdout.contains("VALID"), "\(valid.stderr)")
        for wrong in [
            common + ["--id", "0g"], common + ["--index", "1", "--id", "00"],
            ["--trust-anchors", "iaca.pem", "--list", "list.cwt", "--uri", "x", "--id", "00"],
        ] {
            #expect(try await Self.run(wrong, files: files).status == 64, "\(wrong)")
        }
    }
}
