import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
@_spi(SwitchbackInternals) import SwitchbackTesting

/// `switchback server`, run as the built executable.
@Suite("switchback server")
struct ServerCommandTests {
    @Test("without --config or --with-emulator it refuses to start: a production binary never runs against a fake provider by accident")
    func refusesWithoutConfig() async throws {
        let outcome = try await VerifyIDTokenCommandTests.run([], stdin: nil, command: ["server", "--port", "0"])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("--with-emulator"), "\(outcome.stderr)")
        let both = try await VerifyIDTokenCommandTests.run([], stdin: nil, command: ["server", "--with-emulator", "--config", "/nonexistent.json"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("exclude each other"), "\(both.stderr)")
    }

    @Test(
        "--with-emulator: starts on the in-memory store against a local emulator, warns, prints its routes and limits, serves them, stops on SIGINT")
    func runsWithEmulator() async throws {
        let process = try ChildProcess(try VerifyIDTokenCommandTests.executable.path, ["server", "--with-emulator", "--port", "0"])
        defer { process.send(SIGKILL) }

        let banner = process.readOutput(until: "Ctrl-C stops it.")
        #expect(banner.contains("store: memory"))
        #expect(banner.contains("WARNING: --with-emulator: the provider is a FAKE"))
        #expect(banner.contains("limits: rate-limited routes 30/min per address"))
        #expect(banner.contains("/exchange/start") && banner.contains("[rate-limited]"))
        for route in [
            "POST  /exchange ", "POST  /handoff ", "GET   /handoff/redeem", "POST  /bridge/redeem", "POST  /completion/status",
            "/.well-known/apple-app-site-association",
        ] {
            #expect(banner.contains(route), "route \(route)")
        }
        let base = try #require(
            banner.split(separator: "\n").first?.split(separator: " ").dropFirst(3).first.map { $0.trimmingCharacters(in: .punctuationCharacters) })
        let health = try await URLSessionTransport().send(HTTPRequest(method: .get, url: try #require(URL(string: "\(base)/health"))))
        #expect(health.status == 200)
        let association = try await URLSessionTransport().send(
            HTTPRequest(method: .get, url: try #require(URL(string: "\(base)/.well-known/apple-app-site-association"))))
        #expect(String(decoding: association.body, as: UTF8.self).contains("A1B2C3D4E5.com.example.app"))

        process.send(SIGINT)
        #expect(await process.wait() == 0)
    }

    @Test("a config that is unsafe or malformed is refused with the reason, before listening")
    func refusesBadConfig() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cases: [(String, String)] = [
            (#"{"port": 0, "handOff": {"allowedRedirects": ["https://web.example.com/app"]}}"#, "need a provider section"),
            (
                #"{"port": 0, "provider": {"issuer": "http://id.example.com", "clientID": "b", "clientSecret": "s", "scopes": ["openid"], "acrValues": []}}"#,
                "provider.issuer must be an https URL"
            ),
            (
                #"{"port": 0, "associations": [{"appIDs": ["TEAM.com.example"], "paths": ["/x"], "androidFingerprints": []}]}"#,
                "ten-character team ID"
            ),
            (#"{"port": "eighty"}"#, "port is malformed"),
            (
                #"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "b", "clientSecret": "s", "dpop": true, "dpopKeyFile": "/etc/k.pem"}}"#,
                "every sign-in gets a DPoP key of its own"
            ),
            (
                #"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "b", "clientSecret": "s", "authorizationParameters": {"authentication_context_type": "LOGIN"}}}"#,
                "not one of the values Singpass documents"
            ),
            (
                #"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "b", "clientSecret": "s", "authorizationParameters": {"state": "x"}}}"#,
                "authorizationParameters cannot hold state"
            ),
            (
                #"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "b", "clientSecret": "s", "dpop": true}, "exchange": {"redirectURIs": ["https://app.example.com/cb"], "returns": "tokens"}}"#,
                "of no use to the app; return a session"
            ),
            (
                #"{"port": 0, "provider": {"issuer": "https://auth.current.bankid.no/auth/realms/current", "clientID": "b", "clientSecret": "s"}, "permission": {"server": "https://app.bankid.no", "appCallbackURIs": ["https://app.example.com/appswitch"], "type": "payment.v1", "backendToken": "backend-token-0123456789abcdef0123456789"}}"#,
                "use https://current.aletheia-test.idtech.no"
            ),
            (
                #"{"port": 0, "provider": {"issuer": "https://auth.bankid.no/auth/realms/prod", "clientID": "b", "clientSecret": "s"}, "permission": {"server": "https://current.aletheia-test.idtech.no", "appCallbackURIs": ["https://app.example.com/appswitch"], "type": "payment.v1", "backendToken": "backend-token-0123456789abcdef0123456789"}}"#,
                "use https://app.bankid.no"
            ),
            (
                #"{"port": 0, "provider": {"issuer": "https://id.example.com", "clientID": "b", "clientSecret": "s", "forwardedParameters": ["redirect_uri"]}}"#,
                "cannot hold redirect_uri"
            ),
        ]
        for (index, (json, reason)) in cases.enumerated() {
            let file = directory.appendingPathComponent("\(index).json")
            try Data(json.utf8).write(to: file)
            let outcome = try await VerifyIDTokenCommandTests.run([], stdin: nil, command: ["server", "--config", file.path])
            #expect(outcome.status != 0)
            #expect(outcome.stderr.contains(reason), "\(outcome.stderr)")
        }
    }
}
