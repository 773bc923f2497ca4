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
@Suite("Companion under attack: whose address a request counts against")
struct ClientAddressTests {
    @Test("a proxy's client-address header keys the limit when configured; the connection's address otherwise")
    func clientAddressHeader() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(
                startsPerMinutePerAddress: 1, startsPerMinute: 100, clientAddressHeader: "X-Forwarded-For", trustedProxies: ["127.0.0.1"])
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.7, 10.0.0.1"]).response.status == 200)
            #expect(
                try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.9, 10.0.0.1"]).response.status == 429,
                "same last hop")
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "10.0.0.2"]).response.status == 200)
        }
    }

    @Test(
        "rate-limit buckets: IPv4 with or without a port, IPv4-mapped IPv6 as IPv4, IPv6 by its /64 with or without brackets, zone and port; no address is nil"
    )
    func addressParsing() {
        #expect(Attack.bucket("2001:db8:1:2:aaaa::1") == Attack.bucket("2001:db8:1:2:ffff:ffff:ffff:ffff"))
        #expect(Attack.bucket("2001:db8:1:2::1") != Attack.bucket("2001:db8:1:3::1"))
        #expect(Attack.bucket("[2001:db8::1]") == "2001:db8:0:0::/64")
        #expect(Attack.bucket("[2001:db8::1]:443") == "2001:db8:0:0::/64")
        #expect(Attack.bucket("fe80::1%eth0") == "fe80:0:0:0::/64")
        #expect(Attack.bucket("203.0.113.7") == "203.0.113.7")
        // A leading zero is refused, as inet_pton refuses it (inet_aton would read `010` as octal 8): fuzz findings.
        #expect(Attack.bucket("203.01.13.7") == nil && Attack.bucket("1.0.01.11") == nil && Attack.bucket("10.0.0.010:80") == nil)
        #expect(Attack.bucket("10.0.0.0") == "10.0.0.0")
        #expect(Attack.bucket("203.0.113.70::443") == nil, "a dotted part ends an IPv6 address only")
        #expect(Attack.bucket("::ffff:203.0.113.70") == "203.0.113.70")
        // A proxy that writes the port: every source port is the same client, not a bucket of its own.
        #expect(Attack.bucket("203.0.113.7:51234") == "203.0.113.7")
        // NIO listening on :: reports IPv4 clients mapped: each is its own IPv4 address, not one shared /64.
        #expect(Attack.bucket("::ffff:203.0.113.7") == "203.0.113.7")
        #expect(Attack.bucket("::ffff:198.51.100.1") != Attack.bucket("::ffff:203.0.113.7"))
        #expect(Attack.bucket("[::ffff:203.0.113.7]:8080") == "203.0.113.7")
        for junk in [
            "", "unknown", "203.0.113", "203.0.113.256", "1.2.3.4:99999", "1.2.3.4:", "::1::2", "12345::", "[::1", "g::1", "1:2:3:4:5:6:7:8:9",
        ] {
            #expect(Attack.bucket(junk) == nil, "\(junk)")
        }
        let network = try! #require(ClientAddress.Network("10.0.0.0/8"))
        #expect(ClientAddress("10.20.30.40")!.isIn(network))
        #expect(!ClientAddress("11.0.0.1")!.isIn(network))
        // A prefix that ends inside a byte.
        #expect(ClientAddress("172.31.255.1")!.isIn(ClientAddress.Network("172.16.0.0/12")!))
        #expect(!ClientAddress("172.32.0.1")!.isIn(ClientAddress.Network("172.16.0.0/12")!))
        #expect(ClientAddress("::ffff:10.1.2.3")!.isIn(network), "a mapped address is in its IPv4 network")
        #expect(ClientAddress("2001:db8::5")!.isIn(ClientAddress.Network("2001:db8::/32")!))
        #expect(ClientAddress.Network("10.0.0.0/33") == nil && ClientAddress.Network("10.0.0.0/x") == nil)
    }

    @Test("a connection's socket address gives the same client as its printed form: IPv4, IPv6, and IPv4-mapped IPv6 as IPv4")
    func socketAddresses() throws {
        for text in ["203.0.113.7", "2001:db8:1:2:aaaa::1", "::1", "::ffff:203.0.113.7", "fe80::1"] {
            let socket = try SocketAddress(ipAddress: text, port: 443)
            let parsed = try #require(ClientAddress(text))
            #expect(ClientAddress(socket) == parsed, "\(text)")
            #expect(ClientAddress(socket)?.bucket == parsed.bucket, "\(text)")
        }
        #expect(ClientAddress(try SocketAddress(ipAddress: "::ffff:203.0.113.7", port: 1))?.bucket == "203.0.113.7")
    }

    @Test("the header is read only on a proxy's connection: a client reaching the server directly cannot choose its bucket")
    func untrustedHeader() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(
                startsPerMinutePerAddress: 1, startsPerMinute: 100, clientAddressHeader: "X-Forwarded-For", trustedProxies: ["10.0.0.0/8"])
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            // The test connects from 127.0.0.1, which is not a proxy here: a new header value each time buys nothing.
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.1"]).response.status == 200)
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.2"]).response.status == 429)
        }
    }

    @Test("a server beyond loopback must say where its clients' addresses come from; the header needs its proxies")
    func bindDecision() throws {
        var configuration = CompanionRig.configuration(issuer: "https://id.example.com")
        configuration.host = "0.0.0.0"
        configuration.publicURL = "https://auth.example.com"
        #expect(throws: (any Error).self) { try configuration.validate() }
        configuration.limits.directClients = true
        try configuration.validate()
        configuration.limits.directClients = false
        configuration.limits.clientAddressHeader = "X-Forwarded-For"
        #expect(throws: (any Error).self) { try configuration.validate() }
        configuration.limits.trustedProxies = ["10.0.0.0/8", "2001:db8::/32"]
        try configuration.validate()
        configuration.limits.trustedProxies = ["10.0.0.0/8", "not-a-network"]
        #expect(throws: (any Error).self) { try configuration.validate() }

        // Every address as a proxy lets any client choose the address the limits see: refused.
        for everything in ["0.0.0.0/0", "::/0"] {
            configuration.limits.trustedProxies = ["10.0.1.0/24", everything]
            #expect(throws: SwitchbackError.self, "\(everything)") { try configuration.validate() }
        }
        // A broad network is allowed, and warned of at start; a load balancers' subnet is not.
        configuration.limits.trustedProxies = ["10.0.0.0/8", "10.0.1.0/24", "2001:db8::/32", "2001:db8:1::/64", "192.0.2.7"]
        try configuration.validate()
        let warnings = configuration.limits.proxyWarnings
        #expect(warnings.count == 2)
        #expect(warnings.first?.contains("10.0.0.0/8") == true && warnings.last?.contains("2001:db8::/32") == true)
        #expect(warnings.allSatisfy { $0.contains("X-Forwarded-For") })

        // The log level is one of swift-log's.
        configuration.logLevel = "loud"
        #expect(throws: SwitchbackError.self) { try configuration.validate() }
        configuration.logLevel = "trace"
        try configuration.validate()
    }

    @Test("rate-limit buckets: with a proxy header, the entry the trusted hops name")
    func rateLimitBuckets() async throws {
        try await CompanionRig.with(change: {
            $0.limits = .init(
                startsPerMinutePerAddress: 1, startsPerMinute: 100, clientAddressHeader: "X-Forwarded-For", trustedHops: 2,
                trustedProxies: ["127.0.0.1"])
        }) { (rig: CompanionRig) async throws in
            let body: [String: Any] = ["scheme": "myapp", "path": "/home", "binding": "webview-session-0123456789"]
            // CDN then load balancer: the client is second from the end; a spoofed first entry changes nothing.
            #expect(
                try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "198.51.100.1, 203.0.113.7, 10.0.0.1"]).response.status == 200)
            #expect(
                try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "198.51.100.99, 203.0.113.7, 10.0.0.1"]).response.status == 429
            )
            #expect(try await rig.post("/bridge/start", body, headers: ["X-Forwarded-For": "203.0.113.8, 10.0.0.1"]).response.status == 200)
        }
    }
}
