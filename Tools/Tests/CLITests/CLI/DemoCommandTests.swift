import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// `switchback demo`, the main job, run as the built executable.
@Suite("switchback demo")
struct DemoCommandTests {
    static func demo(_ arguments: [String]) async throws -> VerifyIDTokenCommandTests.Outcome {
        try await VerifyIDTokenCommandTests.run(arguments, command: ["demo"])
    }

    @Test("the default run: UAE Pass staging's production-scheme link rewritten to the staging app, signed in, nothing secret printed")
    func defaultRun() async throws {
        let outcome = try await Self.demo([])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("== uaepass (staging), webview =="))
        #expect(outcome.stdout.contains("asks whether to load uaepass://digitalid"))
        #expect(outcome.stdout.contains("opens uaepassstg://digitalid"))
        // UAE Pass's userinfo: sub UAEPASS/<uuid>, no acr (its contract).
        #expect(outcome.stdout.contains("Signed in: sub UAEPASS/9b1f7c2e-alice, assurance none reported"))
        for secret in ["code=", "state=", "txn=", "switchback_flow="] {
            let lines = outcome.stdout.split(separator: "\n").filter { $0.contains(secret) }
            #expect(lines.allSatisfy { $0.contains("\(secret)‹redacted›") }, "\(secret) is redacted everywhere")
        }
    }

    @Test("--kill-during-handoff: the relaunched app reads the flow from its journal and finishes; --diagram writes Mermaid")
    func killAndDiagram() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-demo-\(UUID().uuidString).mmd")
        defer { try? FileManager.default.removeItem(at: file) }
        let outcome = try await Self.demo(["--kill-during-handoff", "--diagram", file.path])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("the system terminates the app"))
        #expect(outcome.stdout.contains("reads back 1 interrupted sign-in from its journal"))
        let diagram = try String(contentsOf: file, encoding: .utf8)
        #expect(diagram.hasPrefix("sequenceDiagram\n    participant App"))
        #expect(diagram.contains("App->>iOS: opens uaepassstg://digitalid"))
        #expect(diagram.hasSuffix("Note over App: signed in\n"))
    }

    @Test("--provider wallet: the wallet app answers the companion and the app gets the verified claims; a faulty wallet exits non-zero")
    func wallet() async throws {
        let shared = try await Self.demo(["--provider", "wallet"])
        #expect(shared.status == 0, "\(shared.stderr)")
        #expect(shared.stdout.contains("== wallet (OpenID4VP, same device, an SD-JWT VC), the companion as verifier =="))
        #expect(
            shared.stdout.contains(
                "Signed in with the wallet: the companion verified pid from \"https://pid-issuer.example.com\": birthdate \"1984-01-26\", family_name \"Mustermann\", given_name \"Erika\""
            ))
        // The response_code and the request's state (in its request_uri) are never printed.
        #expect(shared.stdout.components(separatedBy: "response_code=").dropFirst().allSatisfy { $0.hasPrefix("‹redacted›") })
        #expect(shared.stdout.contains("response_code=‹redacted›") && !shared.stdout.contains("/wallet/request/"))
        #expect(!shared.stdout.contains("nationality"), "the wallet holds it; nobody asked")
        let faulty = try await Self.demo(["--provider", "wallet", "--wallet-fault", "tampered-disclosure"])
        #expect(faulty.status == 1 && faulty.stdout.contains("Sign-in failed: presentationInvalid"))
        let mdoc = try await Self.demo(["--provider", "wallet", "--wallet-format", "mdoc"])
        #expect(mdoc.status == 0, "\(mdoc.stderr)")
        #expect(mdoc.stdout.contains("== wallet (OpenID4VP, same device, an ISO mdoc), the companion as verifier =="))
        #expect(
            mdoc.stdout.contains(
                #"the companion verified pid as an mdoc: eu.europa.ec.eudi.pid.1 {"birth_date":"1984-01-26","family_name":"Mustermann","given_name":"Erika"}"#
            ), "\(mdoc.stdout)")
        let named = try await Self.demo(["--provider", "wallet", "--wallet-format", "mdoc", "--wallet-client-id", "x509_san_dns"])
        #expect(named.status == 0, "\(named.stdout)")
        #expect(named.stdout.contains("client_id=x509_san_dns%3Aapi.example.com"), "\(named.stdout)")
        let faultyMDoc = try await Self.demo(["--provider", "wallet", "--wallet-format", "mdoc", "--wallet-fault", "wrong-nonce"])
        #expect(faultyMDoc.status == 1 && faultyMDoc.stdout.contains("Sign-in failed: presentationInvalid"))
        // A PID or a driving licence (credential_sets): the wallet answers with the one it holds.
        let licence = try await Self.demo(["--provider", "wallet", "--wallet-holds", "mdl"])
        #expect(licence.status == 0, "\(licence.stderr)")
        #expect(licence.stdout.contains("== wallet (OpenID4VP, same device, a PID or an mDL; the wallet holds an mDL), the companion as verifier =="))
        #expect(licence.stdout.contains("the user picks mdl among the credentials that would answer"), "\(licence.stdout)")
        #expect(
            licence.stdout.contains(
                #"the companion verified mdl as an mdoc: org.iso.18013.5.1 {"birth_date":"1984-01-26","family_name":"Mustermann","given_name":"Erika"}; nothing else"#
            ), "\(licence.stdout)")
        let pid = try await Self.demo(["--provider", "wallet", "--wallet-holds", "pid"])
        #expect(pid.status == 0 && pid.stdout.contains("the companion verified pid from") && !pid.stdout.contains("verified mdl"), "\(pid.stdout)")
        for invalid in [
            ["--provider", "wallet", "--wallet-holds", "passport"], ["--wallet-holds", "mdl"],
            ["--provider", "wallet", "--wallet-holds", "mdl", "--wallet-format", "mdoc"],
            ["--wallet-format", "mdoc"], ["--provider", "wallet", "--wallet-format", "jwt_vc"],
            ["--provider", "wallet", "--wallet-client-id", "redirect_uri"], ["--wallet-fault", "expired"],
            ["--provider", "wallet", "--wallet-fault", "nothing"], ["--provider", "wallet", "--strategy", "webview"],
        ] {
            #expect(try await Self.demo(invalid).status != 0, "\(invalid)")
        }
    }

    @Test("a refused combination or a declined sign-in exits non-zero with the typed reason")
    func failures() async throws {
        let refused = try await Self.demo(["--provider", "mitid", "--strategy", "webview"])
        #expect(refused.status == 1)
        #expect(
            refused.stdout.contains(
                "Sign-in failed: strategyNotSupported: webview cannot be used with mitid in production: MitID refuses embedded WebViews"))
        let declined = try await Self.demo(["--decline"])
        #expect(declined.status == 1)
        #expect(declined.stdout.contains("Sign-in failed: authorizationError"))
        #expect(declined.stdout.contains("access_denied"))
        let unknown = try await Self.demo(["--provider", "nowhere"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("known: uaepass, bankid-no"))
    }
}
