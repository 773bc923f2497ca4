import Foundation
import Logging
import NIOCore
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@testable import SwitchbackServer
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// The companion attacked over real HTTP on loopback: each test names the attacker, what they hold and what
/// they try, and fails on the code before the fix. Where a store is involved, the test runs on memory and on
/// PostgreSQL (two instances sharing it).
@Suite("Companion under attack: floods, slow clients and connection limits")
struct FloodTests {
    // MARK: Floods

    @Test(
        "the start and hand-off routes answer 429 with Retry-After past the per-address limit, /exchange past its own; starts past the cap on pending authorizations"
    )
    func startFlood() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(startsPerMinutePerAddress: 3, startsPerMinute: 100, pendingAuthorizations: 1000)
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            for _ in 0..<3 { #expect(try await rig.post("/bridge/start", body).response.status == 200) }
            let flooded = try await rig.post("/bridge/start", body)
            #expect(flooded.response.status == 429)
            #expect(Int(flooded.response.headers["retry-after"] ?? "") ?? 0 >= 1)
            // The limit counts across the start routes.
            #expect(
                try await rig.post("/exchange/start", ["redirect_uri": CompanionRig.appRedirect, "binding": CompanionRig.binding]).response.status
                    == 429)
            #expect(try await rig.post("/permission", ["app_callback_uri": "https://app.example.com/appswitch"]).response.status == 429)
            // The routes that call the provider for an anonymous client count too.
            #expect(
                try await rig.post("/handoff", ["goto": CompanionRig.webApp], headers: ["Authorization": "Bearer some-token-0123456789"]).response
                    .status == 429)
            // A request within a flow (here a callback to redeem) has a budget of its own, four times the
            // starts': a flood of starts does not stop the flows already under way.
            let callback: [String: Any] = ["callback_url": "com.example.app:/oauth/callback?code=c&state=s"]
            for _ in 0..<12 { #expect(try await rig.post("/exchange", callback).response.status == 400) }
            #expect(try await rig.post("/exchange", callback).response.status == 429)
            // A minute later the address may start again.
            rig.clock.advance(by: 61)
            #expect(try await rig.post("/bridge/start", body).response.status == 200)

            try await CompanionRig.with(change: {
                $0.limits = .init(startsPerMinutePerAddress: 0, startsPerMinute: 0, pendingAuthorizations: 2)
            }) { capped in
                for _ in 0..<2 { #expect(try await capped.post("/bridge/start", body).response.status == 200) }
                let full = try await capped.post("/bridge/start", body)
                #expect(full.response.status == 429)
                #expect(full.response.headers["retry-after"] == "60")
            }
        }
    }

    @Test(
        "one waiting status request per flow (a new one takes its place), a cap on all of them; a waiter (on another instance with PostgreSQL) wakes by notification",
        arguments: StoreKind.available)
    func statusWaiters(kind: StoreKind) async throws {
        try await kind.with { store, second in
            // No store recheck (the default): only a notification can wake the waiter before its deadline.
            let rig = try await CompanionRig.start(
                store: store,
                change: {
                    $0.limits.waitingStatusRequests = 2
                    $0.completion?.maximumWait = 30
                })
            // PostgreSQL: a second instance on the same store, so the provider's answer arrives at the first
            // and the waiter waits at the second (LISTEN/NOTIFY). Memory: one instance (an in-process signal).
            var configuration = CompanionRig.configuration(issuer: rig.emulator.issuer)
            configuration.completion?.maximumWait = 30
            let other =
                kind == .postgres
                ? try await Companion.start(
                    configuration, store: try await second(), logger: Logger(label: "second") { _ in SwiftLogNoOpLogHandler() })
                : rig.companion
            do {
                let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                let url = try #require(try await rig.post("/completion/start", ["flow_id": flowID]).json["authorization_url"] as? String)
                let transport = rig.transport
                let waiting = Task { try await Attack.timedStatus(transport, at: other, flowID: flowID, wait: 20) }
                try await Attack.waitUntil("the first status request waits") { await other.waiters.count == 1 }
                // The app's connection dropped (the server is not told) and it asks again: the new request
                // takes the waiting one's place, which answers at once; two never wait for one flow.
                let replacing = Task { try await Attack.timedStatus(transport, at: other, flowID: flowID, wait: 20) }
                let (replaced, replacedAfter) = try await waiting.value
                #expect(replaced.status == 202 && String(decoding: replaced.body, as: UTF8.self).contains("pending"))
                // Well before its own 20 s deadline (a busy machine can take seconds to get the second request in).
                #expect(replacedAfter < .seconds(15), "the replaced request answered when the new one arrived, not at its deadline")
                try await Attack.waitUntil("the replacing request waits") { await other.waiters.count == 1 }
                guard case .redirect(let location) = try await rig.signIn(url) else { throw RigFailure("no redirect") }
                _ = try await rig.get(try #require(URL(string: location)))
                let (response, elapsed) = try await replacing.value
                #expect(response.status == 202)
                #expect(String(decoding: response.body, as: UTF8.self).contains("awaiting_return"))
                #expect(elapsed < .seconds(15), "woken by a notification, not the 20 s deadline: \(elapsed)")

                // The cap: two flows wait, a third is refused.
                var tasks: [Task<Int, any Error>] = []
                for _ in 0..<2 {
                    let id = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                    _ = try await rig.post("/completion/start", ["flow_id": id])
                    // Long enough to be still waiting when the third arrives on a busy machine.
                    tasks.append(Task { try await rig.post("/completion/status", ["flow_id": id, "wait": 8]).response.status })
                }
                try await Attack.waitUntil("two status requests wait") { await rig.companion.waiters.count == 2 }
                let third = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
                _ = try await rig.post("/completion/start", ["flow_id": third])
                #expect(try await rig.post("/completion/status", ["flow_id": third, "wait": 2]).response.status == 429)
                for task in tasks { #expect(try await task.value == 202) }
                if kind == .postgres { await other.stop() }
                await rig.stop()
            } catch {
                if kind == .postgres { await other.stop() }
                await rig.stop()
                throw error
            }
        }
    }

    @Test("malformed percent-encoding and raw bytes in any GET path or query get an answer, and the server stays up")
    func malformedURLs() async throws {
        try await CompanionRig.with(change: {
            $0.associations = [AppAssociation(appIDs: ["A1B2C3D4E5.com.example.app"], paths: ["/*"])]
        }) { rig in
            let paths = [
                "/complete?a=%zz", "/complete?state=%", "/bridge/callback?x=%25%zz", "/bridge/callback?%ff%fe", "/signed-in?result=%zz",
                "/signed-in/%zz",
                "/signed-in/a\"b", "/signed-in/<x>", "/handoff/redeem?handoffotp=%zz&goto=%zz", "/x%00y", "/%c3%28", "/a{b}|c",
            ]
            for path in paths {
                // Sent raw over a socket: URL parsers on the client side would refuse most of these.
                let status = try await Attack.rawGet(port: rig.companion.port, target: path)
                #expect(status >= 200 && status < 500, "\(path) -> \(status)")
                #expect(try await rig.get(rig.url("/health")).status == 200, "the server died on \(path)")
            }
        }
    }

    @Test(
        "a connection that never completes a request head, or sits idle after its answer, is closed after limits.idleTimeout; a waiting request is not"
    )
    func idleConnections() async throws {
        // 2 s, not less: the idle timer starts when the server accepts a connection, so a client starved of CPU
        // for that long between its connect and its request (the full suite on two cores) is cut before it
        // sends anything, which is what the timeout is for, and not what this test asks.
        try await CompanionRig.with(change: { $0.limits.idleTimeout = 2 }) { rig in
            // A status request that waits 5 s for a flow that does not finish: read, being answered, not idle.
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            // Not kept alive: a loaded machine can take more than the idle timeout to send the next
            // request, which would then go out on a connection the server is closing (and be reset).
            _ = try await rig.post("/completion/start", ["flow_id": flowID], headers: ["Connection": "close"])
            let started = ContinuousClock.now
            let waited = try await rig.post("/completion/status", ["flow_id": flowID, "wait": 5])
            #expect(waited.response.status == 202)
            #expect(ContinuousClock.now - started >= .milliseconds(4500), "answered at its own deadline, not cut at the idle timeout")

            // Raw sockets: a head sent in part and then nothing (slowloris), and a keep-alive connection left
            // idle after one answer. Each prints the seconds until the server closed it, timed from before
            // the client's part (so never less than the idle time); one still open after 30 s fails the script.
            let figures = try await Attack.python(
                """
                import socket, sys, time
                port = int(sys.argv[1])
                began = time.monotonic()
                s = socket.create_connection(("127.0.0.1", port), timeout=30)
                s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
                assert s.recv(1) == b""
                partial = time.monotonic() - began
                s = socket.create_connection(("127.0.0.1", port), timeout=30)
                # Timed from before the request: the idle time starts later, at the answer's end.
                began = time.monotonic()
                s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                data = b""
                while b"ok" not in data:
                    chunk = s.recv(65536)
                    assert chunk, "closed before the answer"
                    data += chunk
                while s.recv(65536):
                    pass
                print(data.split(b" ")[1].decode(), "%.2f" % partial, "%.2f" % (time.monotonic() - began))
                """, [String(rig.companion.port)], words: 3)
            #expect(figures[0] == "200")
            for seconds in figures.dropFirst().compactMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                #expect(seconds > 1.9 && seconds < 25, "closed after \(seconds) s with a 2 s idle timeout")
            }
        }
    }

    @Test(
        "a body sent a byte at a time is cut at limits.bodyTimeout (counted, never answered as a server error); a body in parts within it is answered"
    )
    func slowBody() async throws {
        try await CompanionRig.with(change: {
            $0.limits.bodyTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets, one keep-alive connection. The first request's body comes in two parts 0.3 s apart,
            // within the deadline, and is answered; the second's promises 200 bytes and sends one every 0.2 s,
            // which keeps the idle timer (75 s) from ever firing. Prints the first answer's status, then the
            // seconds until the server closed the connection and the bytes of the second body sent by then.
            let flowID = Base64URL.encode(SystemEntropy().randomBytes(count: 32))
            let figures = try await Attack.python(
                """
                import json, re, socket, sys, time
                port = int(sys.argv[1])
                body = json.dumps({"flow_id": sys.argv[2]}).encode()
                head = b"POST /completion/start HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\n"
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                s.sendall(head + b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body[:5])
                time.sleep(0.3)
                s.sendall(body[5:])
                data = b""
                while b"\\r\\n\\r\\n" not in data:
                    chunk = s.recv(65536)
                    assert chunk, "closed before the answer"
                    data += chunk
                answer, rest = data.split(b"\\r\\n\\r\\n", 1)
                length = int(re.search(rb"(?i)content-length: *([0-9]+)", answer).group(1))
                while len(rest) < length:
                    chunk = s.recv(65536)
                    assert chunk, "closed within the answer"
                    rest += chunk
                status = answer.split(b" ")[1].decode()
                s.sendall(head + b"Content-Length: 200\\r\\n\\r\\n")
                began = time.monotonic()
                sent = 0
                try:
                    while sent < 200:
                        s.sendall(b" ")
                        sent += 1
                        s.settimeout(0.2)
                        try:
                            if s.recv(65536) == b"":
                                break
                        except socket.timeout:
                            pass
                except (BrokenPipeError, ConnectionResetError):
                    pass
                print(status, "%.2f" % (time.monotonic() - began), sent)
                """, [String(rig.companion.port), flowID], words: 3)
            #expect(figures[0].hasPrefix("2"), "a body in two parts within the deadline is answered: \(figures[0])")
            let seconds = try #require(Double(figures[1]))
            let sent = try #require(Int(figures[2]))
            #expect(seconds > 0.8 && seconds < 20, "closed after \(seconds) s with a 1 s body timeout")
            #expect(sent < 200, "the whole body was accepted a byte at a time")
            // A long poll is not a slow body: its body came at once, and it waits 3 s past the 1 s deadline.
            let waited = try await rig.post("/completion/status", ["flow_id": flowID, "wait": 3])
            #expect(waited.response.status == 202 && waited.json["status"] as? String == "pending")
            let text = try await ObservabilityTests.scrape(rig)
            #expect(text.contains(#"switchback_connections_closed_total{listener="public",reason="body_timeout"} 1"#), "the cut is counted")
            #expect(text.contains(#"reason="request_timeout""#), "the route counts the cut body as its own refusal")
            #expect(!text.contains(#"status="500""#), "a cut body is no server error")
            #expect(try await rig.get(rig.url("/health")).status == 200)
        }
    }

    @Test("a connection cap above the process's open-file limit is named at start, with the most it could be; one within it is not")
    func openFileLimit() {
        #expect(OpenFileLimit.warning(maxConnections: 10_000, limit: 20_000) == nil)
        let over = OpenFileLimit.warning(maxConnections: 10_000, limit: 1024)
        #expect(over?.contains("only 1024 files") == true && over?.contains("at most 960") == true, "\(over ?? "")")
        #expect(OpenFileLimit.warning(maxConnections: 0, limit: 1024)?.contains("no cap (0)") == true)
        #expect(OpenFileLimit.warning(maxConnections: 10_000, limit: nil) == nil, "no limit to read: nothing to say")
        #if os(Linux)
            #expect((OpenFileLimit.current() ?? 0) > 0, "this process's ulimit -n")
        #endif
    }

    @Test("a body the HTTP parser refuses (a bad chunk size) is 400 invalid_request: not a timeout, and no deadline is left behind")
    func malformedBody() async throws {
        try await CompanionRig.with(change: {
            $0.limits.bodyTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets: a chunked body whose first chunk size is not hexadecimal. Prints the answer's
            // status, then waits past the body deadline with the connection left open on the client's side.
            let figures = try await Attack.python(
                """
                import socket, sys, time
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
                s.sendall(b"POST /completion/start HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\n"
                          b"Transfer-Encoding: chunked\\r\\n\\r\\nzz\\r\\n")
                data = b""
                while b"\\r\\n" not in data:
                    chunk = s.recv(65536)
                    assert chunk, "closed without an answer"
                    data += chunk
                time.sleep(1.5)
                print(data.split(b" ")[1].decode())
                """, [String(rig.companion.port)], words: 1)
            #expect(figures[0] == "400")
            let text = try await ObservabilityTests.scrape(rig)
            #expect(text.contains(#"reason="invalid_request""#), "the route counts its refusal")
            #expect(!text.contains(#"reason="request_timeout""#), "a refused body is not one that stopped arriving")
            #expect(!text.contains(#"reason="body_timeout""#), "no body deadline outlived the refused request")
        }
    }

    @Test("a client that stops reading its answers is cut at limits.writeTimeout; the idle timer alone never would (counted)")
    func slowReader() async throws {
        try await CompanionRig.with(change: {
            $0.limits.writeTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets: a small receive window, 30 000 pipelined requests (about 6 MB of answers, more
            // than the kernel's buffers hold), and nothing read until the test has seen the server count a
            // cut (or given up after 30 s). Then the script reads what there is, and prints whether the
            // connection ended and how many answers came before it did.
            let flag = FileManager.default.temporaryDirectory.appendingPathComponent("switchback-reader-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: flag) }
            async let printed = Attack.python(
                """
                import os, socket, sys, time
                port, flag = int(sys.argv[1]), sys.argv[2]
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(("127.0.0.1", port))
                s.settimeout(5)
                try:
                    s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n" * 30000)
                except (socket.timeout, BrokenPipeError, ConnectionResetError):
                    pass
                began = time.monotonic()
                while not os.path.exists(flag) and time.monotonic() - began < 60:
                    time.sleep(0.1)
                s.settimeout(10)
                data = b""
                state = "ended"
                try:
                    while True:
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except ConnectionResetError:
                    pass
                except socket.timeout:
                    state = "open"
                print(state, data.count(b"HTTP/1.1 200"))
                """, [String(rig.companion.port), flag], words: 2)
            var counted = false
            let deadline = ContinuousClock.now + .seconds(30)
            while !counted, ContinuousClock.now < deadline {
                counted = try await ObservabilityTests.scrape(rig).contains(
                    #"switchback_connections_closed_total{listener="public",reason="write_timeout"} 1"#)
                if !counted { try await Task.sleep(for: .milliseconds(200)) }
            }
            _ = FileManager.default.createFile(atPath: flag, contents: nil)
            let figures = try await printed
            #expect(counted, "the cut is counted")
            #expect(figures[0] == "ended", "the connection was cut, not left open: \(figures)")
            #expect((Int(figures[1]) ?? 30000) < 30000, "not every answer was written before the cut: \(figures)")
            #expect(try await rig.get(rig.url("/health")).status == 200)
        }
    }

    @Test(
        "past limits.maxConnections a new connection is closed at once (counted); a slot is free again when a connection closes"
    )
    func connectionCap() async throws {
        try await CompanionRig.with(change: {
            $0.limits.maxConnections = 3
            $0.limits.waitingStatusRequests = 2
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // Raw sockets: three connections held open (each answered once, so each is surely counted), a
            // fourth closed without an answer, then one of the three closed and a fifth answered; with three
            // held again, a sixth is closed (a slot released twice would let it in).
            let figures = try await Attack.python(
                """
                import socket, sys, time
                port = int(sys.argv[1])
                def ask(s):
                    data = b""
                    try:
                        s.sendall(b"GET /health HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                        while b"ok" not in data:
                            chunk = s.recv(65536)
                            if not chunk:
                                return "closed"
                            data += chunk
                    except (ConnectionResetError, BrokenPipeError):
                        return "closed"
                    return data.split(b" ")[1].decode()
                def connect():
                    return socket.create_connection(("127.0.0.1", port), timeout=10)
                held = [connect() for _ in range(3)]
                first = [ask(s) for s in held]
                fourth = ask(connect())
                held.pop().close()
                # The server frees the slot when it sees the close; a loaded machine may take a while.
                retries = 0
                kept = connect()
                fifth = ask(kept)
                began = time.monotonic()
                while fifth == "closed" and time.monotonic() - began < 20:
                    retries += 1
                    time.sleep(0.1)
                    kept = connect()
                    fifth = ask(kept)
                sixth = ask(connect())
                print(",".join(first), fourth, fifth, retries, sixth)
                """, [String(rig.companion.port)], words: 5)
            #expect(figures[0] == "200,200,200")
            #expect(figures[1] == "closed", "a fourth connection past a cap of three")
            #expect(figures[2] == "200", "a slot freed by a closed connection")
            #expect(figures[4] == "closed", "three held again: the count came back to the cap")
            let text = try await ObservabilityTests.scrape(rig)
            // The fourth, each try of the fifth's before the slot was free, and the sixth.
            let refused = 2 + (Int(figures[3]) ?? 0)
            #expect(
                text.contains(#"switchback_connections_closed_total{listener="public",reason="over_cap"} "# + "\(refused)\n"), "\(refused) refusals")
        }
    }

    @Test(
        "the metrics listener has its own cap (a connection past it closed, counted as the metrics listener's) and the idle timeout; the public listener is not held by it"
    )
    func metricsListenerLimits() async throws {
        // The idle timeout as shipped (75 s) while the cap is filled: a shorter one could free a held slot on
        // a loaded machine before the connection past the cap is tried.
        try await CompanionRig.with(change: { $0.metrics = .init(host: "127.0.0.1", port: 0) }) { rig in
            let metricsPort = try #require(rig.companion.metricsPort)
            // Raw sockets: the cap's worth of connections to the metrics listener, each answered once (so
            // each is counted), one more closed without an answer, and the public listener answering
            // meanwhile. Prints the held answers, the one past the cap and the public answer.
            let figures = try await Attack.python(
                """
                import socket, sys
                port, public, cap = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
                def ask(p, path):
                    try:
                        s = socket.create_connection(("127.0.0.1", p), timeout=10)
                        s.sendall(b"GET " + path + b" HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n")
                        data = b""
                        while b"\\r\\n" not in data:
                            chunk = s.recv(65536)
                            if not chunk:
                                return s, "closed"
                            data += chunk
                    except (ConnectionResetError, BrokenPipeError):
                        return None, "closed"
                    return s, data.split(b" ")[1].decode()
                held = [ask(port, b"/metrics") for _ in range(cap)]
                _, past = ask(port, b"/metrics")
                _, public_answer = ask(public, b"/health")
                print(",".join(sorted(set(status for _, status in held))), past, public_answer)
                """, [String(metricsPort), String(rig.companion.port), String(Companion.metricsConnections)], words: 3)
            #expect(figures[0] == "200", "every connection within the cap answered: \(figures[0])")
            #expect(figures[1] == "closed", "a connection past the metrics listener's cap of \(Companion.metricsConnections)")
            #expect(figures[2] == "200", "the public listener does not share the metrics listener's cap")
            // The script has ended and its connections with it: a slot is free for the scrape.
            var text = ""
            try await Attack.waitUntil("a scrape answered") { (try? await ObservabilityTests.scrape(rig)).map { text = $0 } != nil }
            #expect(text.contains(#"switchback_connections_closed_total{listener="metrics",reason="over_cap"} 1"#), "\(text)")
            #expect(!text.contains(#"listener="public""#), "nothing was closed on the public listener")
        }
        try await CompanionRig.with(change: {
            $0.limits.idleTimeout = 1
            $0.metrics = .init(host: "127.0.0.1", port: 0)
        }) { rig in
            // A request head sent in part and then nothing (slowloris), timed from before the connection.
            let figures = try await Attack.python(
                """
                import socket, sys, time
                began = time.monotonic()
                s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
                s.sendall(b"GET /metrics HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n")
                assert s.recv(1) == b""
                print("%.2f" % (time.monotonic() - began))
                """, [String(try #require(rig.companion.metricsPort))], words: 1)
            let seconds = try #require(Double(figures[0]))
            #expect(seconds > 0.9 && seconds < 25, "a partial head on the metrics listener closed after \(seconds) s with a 1 s idle timeout")
        }
    }
}
