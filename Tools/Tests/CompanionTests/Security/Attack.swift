import Foundation
import Logging
import NIOCore
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// What the attack tests share: a signed-in credential, a hand-off request, a timed status request, waiting
/// for a condition, and raw sockets through Python for clients that misbehave as Swift's cannot.
enum Attack {
    /// Signs alice in as the public client `clientID` (another relying party of the same provider, or the
    /// app's own client) and returns its credential.
    static func credential(_ rig: CompanionRig, clientID: String = "native-rs", dpop: ClientConfiguration.DPoPPolicy = .off) async throws
        -> Credential
    {
        let client = OIDCClient(
            configuration: ClientConfiguration(
                clientID: clientID, redirectURI: URL(string: CompanionRig.appRedirect)!, scopes: ["openid", CompanionRig.handOffScope], dpop: dpop),
            provider: .discovery(issuer: rig.emulator.issuer)
        )
        let session = try await client.prepareAuthorization()
        guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL), let callback = URL(string: location)
        else {
            throw RigFailure("the provider did not redirect")
        }
        return try await client.completeAuthorization(.redirect(callback), session: session)
    }

    static func handOff(_ rig: CompanionRig, headers: [String: String]) async throws -> (response: HTTPResponse, json: [String: Any]) {
        try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: headers)
    }

    /// `POST /completion/status` for `flowID` at `companion`, waiting up to `wait` seconds: the answer and how
    /// long it took.
    static func timedStatus(_ transport: any HTTPTransport, at companion: Companion, flowID: String, wait: Int) async throws -> (
        HTTPResponse, Duration
    ) {
        let started = ContinuousClock.now
        let response = try await transport.send(
            HTTPRequest(
                method: .post, url: URL(string: companion.baseURL.absoluteString + "/completion/status")!,
                headers: ["Content-Type": "application/json"], body: try JSONSerialization.data(withJSONObject: ["flow_id": flowID, "wait": wait])))
        return (response, ContinuousClock.now - started)
    }

    /// Returns once `condition` holds, checking every 10 ms; fails the test after 30 s.
    static func waitUntil(_ what: String, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await !condition() {
            guard ContinuousClock.now < deadline else { throw RigFailure("not within 30 s: \(what)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Runs a Python script with `arguments` (raw sockets: a client that misbehaves as the Swift clients
    /// here cannot be made to) and returns the words it printed; fails the test when the script fails or
    /// prints other than `words` words.
    static func python(_ script: String, _ arguments: [String], words: Int) async throws -> [String] {
        // `ChildProcess.run` reads the child's output on threads of its own: a blocking read here would hold one
        // of the concurrency pool's threads while the companion, on the same pool, has to answer.
        let outcome = try await ChildProcess.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        let printed = outcome.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        try #require(outcome.status == 0 && printed.count == words, "\(outcome.stdout) \(outcome.stderr.prefix(400))")
        return printed
    }

    /// Sends `GET target` exactly as given and returns the status code of the answer.
    static func rawGet(port: Int, target: String) async throws -> Int {
        let printed = try await python(
            """
            import socket, sys
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
            s.sendall(b"GET " + sys.argv[2].encode("latin-1") + b" HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print(data.split(b" ")[1].decode() if data.startswith(b"HTTP/") else "0")
            """, [String(port), target], words: 1)
        return Int(printed[0]) ?? 0
    }

    /// The bucket an address text counts in, or nil when it is no address.
    static func bucket(_ text: String) -> String? { ClientAddress(text)?.bucket }
}
