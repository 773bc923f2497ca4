public import Foundation
import Logging
@_spi(SwitchbackInternals) import SwitchbackTesting
public import Testing
@_spi(SwitchbackInternals) public import Switchback

/// The glewlwyd peer (`../shared/peers/glewlwyd/`), a real OpenID provider started by `scripts/test.sh`.
public enum Glewlwyd {
    public struct Peer: Sendable {
        public let issuer: String
        public let backendSecret: String
        public let loginScript: String
    }

    public static let environment = ProcessInfo.processInfo.environment
    public static let runningInCI = environment["CI"] == "true"

    /// The running peer, from the variables `up.sh` prints; nil when it is not running.
    public static let peer: Peer? = {
        guard let issuer = environment["GLEWLWYD_ISSUER"], let secret = environment["GLEWLWYD_BACKEND_SECRET"],
            let script = loginScript
        else { return nil }
        return Peer(issuer: issuer, backendSecret: secret, loginScript: script)
    }()

    /// Interop tests run when the peer is up, and always under CI (where a missing peer must fail, not skip).
    public static let enabled = peer != nil || runningInCI
    public static let skipReason: Comment = """
        glewlwyd is not running: run the tests through `bash scripts/test.sh`, which starts it \
        (or export the GLEWLWYD_* lines printed by ../shared/peers/glewlwyd/up.sh)
        """

    private static var loginScript: String? {
        // scripts/test.sh exports GLEWLWYD_LOGIN with the peer's other lines; SWITCHBACK_PEERS names the folder by hand.
        if let script = environment["GLEWLWYD_LOGIN"] { return script }
        return environment["SWITCHBACK_PEERS"].map { URL(fileURLWithPath: $0).appendingPathComponent("glewlwyd/login.sh").path }
            .flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }
    }

    /// The peer, or a recorded failure explaining why it is missing (only reachable under CI).
    public static func require() throws -> Peer {
        guard let peer else {
            throw PeerMissing(description: "CI=true but glewlwyd is not running; scripts/test.sh must start it")
        }
        return peer
    }

    public struct PeerMissing: Error, CustomStringConvertible {
        public let description: String
    }

    /// Adds `redirectURI` to `client`'s registration through glewlwyd's admin API (admin/password, the
    /// package's initial data), keeping the others.
    public static func addRedirectURI(_ redirectURI: String, client: String, peer: Peer) async throws {
        let script = """
            set -euo pipefail
            API=${1%/oidc}; J=$(mktemp); trap 'rm -f "$J"' EXIT
            curl -sf -c "$J" -o /dev/null -X POST "$API/auth/" -H 'Content-Type: application/json' --data '{"username":"admin","password":"password"}'
            curl -sf -b "$J" "$API/client/$2" | python3 -c 'import json,sys; c=json.load(sys.stdin); c.pop("source",None); c["redirect_uri"]+=[] if sys.argv[1] in c["redirect_uri"] else [sys.argv[1]]; print(json.dumps(c))' "$3" \
              | curl -sf -b "$J" -o /dev/null -X PUT "$API/client/$2" -H 'Content-Type: application/json' --data-binary @-
            """
        let outcome = try await ChildProcess.run("/bin/bash", ["-c", script, "add-redirect", peer.issuer, client, redirectURI])
        guard outcome.status == 0 else {
            throw PeerMissing(description: "glewlwyd's admin API refused the redirect URI: \(outcome.stderr.prefix(300))")
        }
    }

    /// Lets alice sign in and consent, as a browser would; returns where glewlwyd sends the browser.
    public static func login(_ authorizationURL: URL, peer: Peer) async throws -> String {
        let outcome = try await ChildProcess.run("/bin/bash", [peer.loginScript, authorizationURL.absoluteString])
        let line = outcome.stdout
        guard outcome.status == 0 else {
            throw PeerMissing(description: "login.sh exited \(outcome.status): \(outcome.stderr.prefix(500))")
        }
        return line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The callback an app would receive for the line login.sh printed.
    public static func callback(_ line: String) throws -> AuthorizationCallback {
        let url = try #require(URL(string: line))
        return .redirect(url)
    }

    public static func client(
        _ peer: Peer, clientID: String, authentication: ClientAuthentication = .none, par: ClientConfiguration.PARPolicy = .never
    ) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: clientID, redirectURI: URL(string: "com.example.app:/oauth/callback")!, authentication: authentication,
                scopes: ["openid", "profile", "email"], pushedAuthorization: par
            ),
            provider: .discovery(issuer: peer.issuer),
            logger: Logger(label: "glewlwyd-interop")
        )
    }
}
