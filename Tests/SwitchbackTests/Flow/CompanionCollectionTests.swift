import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackTesting
import SwitchbackTestSupport

/// How the coordinator collects a backend completion's answer when the companion misbehaves: a stub
/// companion, a manual clock.
@Suite("Coordinator: collecting a backend completion")
struct CompanionCollectionTests {
    struct Offline: Error {}

    static let started = StubTransport.json(
        200,
        #"{"authorization_url": "https://api.example.com/authorize?request_uri=r", "return_url": "https://app.example.com/signed-in", "expires_in": 600}"#
    )

    /// A coordinator whose companion answers `/completion/start` and then each status request with the
    /// next of `statuses` (nil: the network is down).
    static func coordinator(statuses: [HTTPResponse?], clock: ManualClock, host: RecordingUserAgentHost) -> (SignInCoordinator, StubTransport) {
        let remaining = LockedValue(statuses)
        let transport = StubTransport { request in
            if request.url.path.hasSuffix("/completion/start") { return started }
            let next = remaining.withLock { $0.isEmpty ? StubTransport.json(202, #"{"status": "pending"}"#) : $0.removeFirst() }
            guard let next else { throw Offline() }
            return next
        }
        let companion = CompanionClient(URL(string: "https://api.example.com")!, transport: transport)
        return (SignInCoordinator(.companion(companion, route: .completion), host: host, opener: RecordingURLOpener(), clock: clock), transport)
    }

    static func statusRequests(_ transport: StubTransport) -> Int {
        transport.requests.filter { $0.url.path.hasSuffix("/completion/status") }.count
    }

    @Test("the network drops during the poll: the coordinator waits on its clock and asks again, then signs in")
    func retriesAfterTransportFailure() async throws {
        let clock = ManualClock()
        let host = RecordingUserAgentHost()
        let (coordinator, transport) = Self.coordinator(
            statuses: [
                nil, StubTransport.json(202, #"{"status": "pending"}"#),
                StubTransport.json(200, #"{"status": "completed", "sub": "alice", "session": "s-1", "expires_in": 3600}"#),
            ],
            clock: clock, host: host
        )
        let task = Task { try await coordinator.signIn(SignInRequest(provider: "mitid", strategy: .safariView)) }
        // The sign-in's time limit and the poll's back-off both sleep on the clock.
        for _ in 0..<10_000 where clock.sleeperCount < 2 { try await Task.sleep(nanoseconds: 2_000_000) }
        #expect(clock.sleeperCount == 2)
        #expect(Self.statusRequests(transport) == 1)
        clock.advance(by: 2)
        let signIn = try #require(try await task.value.companion)
        #expect(signIn.subject == "alice" && signIn.session == "s-1")
        // The companion's expires_in, counted from when the app read it (the system's time).
        #expect(signIn.expiresAt.map { $0.timeIntervalSinceNow > 3500 && $0.timeIntervalSinceNow <= 3600 } == true)
        #expect(Self.statusRequests(transport) == 3)
        #expect(host.calls.first == .present(URL(string: "https://api.example.com/authorize?request_uri=r")!, .safariView))
        #expect(host.calls.last == .dismiss)
    }

    @Test("the companion no longer knows the flow (expired, or collected by someone else): a typed error, not a wait")
    func unknownFlow() async throws {
        let clock = ManualClock()
        let host = RecordingUserAgentHost()
        let (coordinator, _) = Self.coordinator(
            statuses: [StubTransport.json(404, #"{"error": "invalid_grant", "error_description": "no sign-in is waiting under this flow_id"}"#)],
            clock: clock, host: host
        )
        do {
            _ = try await coordinator.signIn(SignInRequest(provider: "mitid", strategy: .safariView))
            Issue.record("the sign-in succeeded")
        } catch let error as SwitchbackError {
            #expect(error.code == .tokenEndpointError && error.httpStatus == 404)
        }
        #expect(host.calls.last == .dismiss)
    }

    @Test("a companion answer that names nobody is refused as malformed")
    func malformedAnswer() async throws {
        let (coordinator, _) = Self.coordinator(
            statuses: [StubTransport.json(200, #"{"status": "completed", "session": "s-1"}"#)], clock: ManualClock(), host: RecordingUserAgentHost()
        )
        await expectCode(.malformedResponse) {
            _ = try await coordinator.signIn(SignInRequest(provider: "mitid", strategy: .safariView))
        }
    }
}
