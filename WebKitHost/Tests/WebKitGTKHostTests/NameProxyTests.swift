import Foundation
import Testing
import NIOCore
import NIOEmbedded
import Switchback
@testable import WebKitGTKHost

#if canImport(Glibc)
    import Glibc
#endif

/// The loopback proxy that carries the device's names to their servers: whoever else on the machine
/// connects to it reaches those loopback servers and nothing else.
@Suite("NameProxy: only the device's names")
struct NameProxyTests {
    /// Sends `request` to the proxy on a plain TCP connection and returns what it answers: "" when it closes
    /// without answering, nil when nothing came within 30 s. The blocking socket runs on a thread of its own,
    /// neither Swift's cooperative pool nor Dispatch's (which on Linux share threads). The wait is long
    /// because it bounds only a failure: measured, the whole test process stalls for up to 3 s while the
    /// engine tests beside it start WebKit's processes (the proxy had closed; the reading thread woke late).
    static func ask(_ port: Int, _ request: String) async -> String? {
        await onOwnThread { askBlocking(port, request) }
    }

    static func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }

    /// A TCP socket (close-on-exec) and `127.0.0.1:port` for `body`, which may rewrite the address.
    private static func withLoopbackSocket<T>(port: Int, _ body: (Int32, UnsafeMutablePointer<sockaddr>, inout socklen_t) -> T?) -> T? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(descriptor, $0, &length) } }
    }

    private static func askBlocking(_ port: Int, _ request: String) -> String? {
        withLoopbackSocket(port: port) { descriptor, address, length in
            connect(descriptor, address, length) == 0 ? exchange(descriptor, request) : nil
        }
    }

    private static func exchange(_ descriptor: Int32, _ request: String) -> String? {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var answer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &answer, answer.count, 0)
        if count < 0 { return errno == ECONNRESET ? "" : nil }
        return String(decoding: answer[..<count], as: UTF8.self)
    }

    /// A loopback address where nothing listens: a port the kernel handed out and that was closed again.
    static func absentServer() -> URL {
        let port = withLoopbackSocket(port: 0) { descriptor, address, length -> Int? in
            guard bind(descriptor, address, length) == 0, getsockname(descriptor, address, &length) == 0 else { return nil }
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
        return URL(string: "http://127.0.0.1:\(port ?? 0)")!
    }

    @Test(
        "it carries DNS names to http(s) servers on loopback and refuses, typed, anything else: a name a certificate cannot hold, a server elsewhere, a URL with no host",
        arguments: [
            ("api.example.com", "http://127.0.0.1:8080", true), ("shop-1.example.com", "https://localhost:8443", true),
            ("a.example", "http://127.1.2.3", true), ("v6.example", "http://[::1]:9000", true), ("API.Example.COM", "http://127.0.0.1:1", true),
            ("not a name", "http://127.0.0.1:8080", false), ("-dash.example", "http://127.0.0.1:8080", false),
            ("dot..example", "http://127.0.0.1:8080", false), ("bücher.example", "http://127.0.0.1:8080", false),
            ("\(String(repeating: "a", count: 64)).example", "http://127.0.0.1:8080", false), ("", "http://127.0.0.1:8080", false),
            ("elsewhere.example", "https://example.org", false), ("private.example", "http://10.0.0.1:80", false),
            ("spoof.example", "http://127.0.0.1.example.org", false), ("ftp.example", "ftp://127.0.0.1", false),
            ("nohost.example", "file:///tmp/x", false),
        ])
    func carriesOnlyLoopbackNames(name: String, server: String, carried: Bool) async throws {
        let hosts = [name: try #require(URL(string: server))]
        if carried {
            let proxy = try await NameProxy.start(hosts: hosts)
            #expect(proxy.names == [name.lowercased()])
        } else {
            let error = await #expect(throws: SwitchbackError.self) { try await NameProxy.start(hosts: hosts) }
            #expect(error?.code == .invalidURL)
        }
    }

    @Test("a CONNECT to a name it does not carry, or anything but a CONNECT, is refused with 502 and no tunnel")
    func refusesOtherNames() async throws {
        let proxy = try await NameProxy.start(hosts: ["api.example.com": Self.absentServer()])
        let port = try #require(URL(string: proxy.url)?.port)
        #expect(proxy.names == ["api.example.com"])
        let foreign = await Self.ask(port, "CONNECT evil.example.com:443 HTTP/1.1\r\nHost: evil.example.com:443\r\n\r\n")
        #expect(foreign?.hasPrefix("HTTP/1.1 502") == true, "\(foreign ?? "no answer")")
        let plain = await Self.ask(port, "GET http://api.example.com/ HTTP/1.1\r\nHost: api.example.com\r\n\r\n")
        #expect(plain?.hasPrefix("HTTP/1.1 502") == true, "\(plain ?? "no answer")")
        // A known name whose server is not there: no tunnel is announced.
        let absent = await Self.ask(port, "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n")
        #expect(absent == "", "closed without a tunnel: \(absent ?? "no answer")")
    }

    static let flood = "CONNECT api.example.com:443 HTTP/1.1\r\n" + String(repeating: "X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: 400)

    @Test("a request head that never ends is cut off at 8 KiB")
    func boundedHead() async throws {
        let proxy = try await NameProxy.start(hosts: ["api.example.com": Self.absentServer()])
        let port = try #require(URL(string: proxy.url)?.port)
        #expect(await Self.ask(port, Self.flood) == "", "closed without an answer, not left waiting")
    }

    /// Over a socket the kernel hands the head over in pieces, and the cut-off comes before its end; a head
    /// that arrives whole, end included, is refused too.
    @Test("a request head over 8 KiB that arrives whole, its end included, is cut off too")
    func boundedWholeHead() throws {
        let tls = try NameProxy.makeTLS(for: ["api.example.com"]).context
        // It carries no names: a head it read would be answered 502, a head it cut off is not answered at all.
        let handler = NameProxy.ConnectHandler(targets: [:], tls: tls, headTimeout: .seconds(10))
        let channel = EmbeddedChannel(handler: handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        #expect(channel.isActive)
        try channel.writeInbound(ByteBuffer(string: Self.flood + "\r\n"))
        #expect(!channel.isActive, "closed")
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil, "without an answer")
    }

    @Test("a connection that sends nothing is closed once the head's time is up")
    func headTimeout() async throws {
        let proxy = try await NameProxy.start(hosts: ["api.example.com": Self.absentServer()], headTimeout: .milliseconds(300))
        let port = try #require(URL(string: proxy.url)?.port)
        #expect(await Self.ask(port, "") == "", "closed by the proxy, not left open")
        let slow = await Self.ask(port, "CONNECT api.example.com:443 HTTP/1.1\r\n")
        #expect(slow == "", "a head begun and never finished is closed too: \(slow ?? "no answer")")
    }

    /// Found in CI: the proxy's tunnels were tasks on Swift's cooperative pool, which the engine tests running
    /// beside it kept busy for seconds, and a refusal came too late. They now live on the event loop alone.
    @Test("the proxy answers while every thread of Swift's cooperative pool is blocked")
    func answersWithAStarvedPool() async throws {
        let proxy = try await NameProxy.start(hosts: ["api.example.com": Self.absentServer()])
        let port = try #require(URL(string: proxy.url)?.port)
        let width = ProcessInfo.processInfo.activeProcessorCount
        let started = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        for _ in 0..<width {
            Task.detached {
                started.signal()
                _ = released.wait(timeout: .now() + 20)
            }
        }
        let answers: (foreign: String?, absent: String?, all: Bool) = await Self.onOwnThread {
            let all = (0..<width).allSatisfy { _ in started.wait(timeout: .now() + 20) == .success }
            let foreign = Self.askBlocking(port, "CONNECT evil.example.com:443 HTTP/1.1\r\nHost: evil.example.com:443\r\n\r\n")
            let absent = Self.askBlocking(port, "CONNECT api.example.com:443 HTTP/1.1\r\nHost: api.example.com:443\r\n\r\n")
            for _ in 0..<width { released.signal() }
            return (foreign, absent, all)
        }
        #expect(answers.all, "every cooperative thread was blocked while the proxy was asked")
        #expect(answers.foreign?.hasPrefix("HTTP/1.1 502") == true, "\(answers.foreign ?? "no answer")")
        #expect(answers.absent == "", "closed without a tunnel: \(answers.absent ?? "no answer")")
    }
}
