import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
@_spi(SwitchbackInternals) import SwitchbackTesting

/// `switchback emulator`, run as the built executable.
@Suite("switchback emulator")
struct EmulatorCommandTests {
    @Test(
        "prints the profile, issuer, clients and users, serves discovery there (UAE Pass only when asked: it publishes none), and stops cleanly on SIGINT",
        arguments: [
            ([String](), "profile generic:"),
            (["--profile", "uaepass", "--variant", "staging-bug", "--variant", "discovery"], "profile uaepass (staging-bug, discovery):"),
            (["--profile", "singpass"], "profile singpass:"),
        ])
    func runsUntilInterrupted(arguments: [String], banner expected: String) async throws {
        let process = try ChildProcess(try VerifyIDTokenCommandTests.executable.path, ["emulator", "--port", "0"] + arguments)
        defer { process.send(SIGKILL) }

        let banner = process.readOutput(until: "Ctrl-C stops it.")
        #expect(banner.contains(expected))
        #expect(banner.contains("client: native-rs (public, ID token RS256)"))
        #expect(banner.contains("user: alice"))
        let issuer = try #require(banner.split(separator: "\n").first { $0.hasPrefix("issuer: ") }?.dropFirst("issuer: ".count))
        let response = try await URLSessionTransport().send(
            HTTPRequest(method: .get, url: try #require(URL(string: "\(issuer)/.well-known/openid-configuration")))
        )
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""issuer":"\#(issuer)""#))

        process.send(SIGINT)
        #expect(await process.wait() == 0)
    }

    @Test("the uaepass profile publishes no discovery document, as UAE Pass documents none; its endpoints answer under /idshub/")
    func uaePassWithoutDiscovery() async throws {
        let process = try ChildProcess(try VerifyIDTokenCommandTests.executable.path, ["emulator", "--port", "0", "--profile", "uaepass"])
        defer { process.send(SIGKILL) }
        let banner = process.readOutput(until: "Ctrl-C stops it.")
        let issuer = try #require(banner.split(separator: "\n").first { $0.hasPrefix("issuer: ") }?.dropFirst("issuer: ".count))
        let discovery = try await URLSessionTransport().send(
            HTTPRequest(method: .get, url: try #require(URL(string: "\(issuer)/.well-known/openid-configuration"))))
        #expect(discovery.status == 404)
        let userinfo = try await URLSessionTransport().send(
            HTTPRequest(method: .get, url: ProviderMetadata.uaePass(base: try #require(URL(string: String(issuer)))).userinfoEndpoint!))
        #expect(userinfo.status == 401, "the documented userinfo path answers (without a token: 401)")
        process.send(SIGINT)
        #expect(await process.wait() == 0)
    }

    @Test("an unknown profile is a usage error naming the available ones")
    func unknownProfile() async throws {
        let outcome = try await VerifyIDTokenCommandTests.run([], stdin: nil, command: ["emulator", "--profile", "nowhere"])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("available: generic, apple-form-post"))
        let variant = try await VerifyIDTokenCommandTests.run([], stdin: nil, command: ["emulator", "--profile", "uaepass", "--variant", "sideways"])
        #expect(variant.status != 0)
        #expect(variant.stderr.contains("unknown uaepass variant \"sideways\""))
    }
}
