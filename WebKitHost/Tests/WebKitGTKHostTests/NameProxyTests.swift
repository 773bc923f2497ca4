import Foundation
import Testing
@testable import WebKitGTKHost

#if canImport(Glibc)
    import Glibc
#endif

/// The loopback proxy that carries the device's names to their servers: whoever else on the machine
/// connects to it reaches those loopback servers and nothing else.
@Suite("NameProxy: only the device's names")
struct NameProxyTests {
    /// Sends `request` to the proxy on a plain TCP connection and returns what it answers: "" when it closes
    /// without answering, nil when nothing came within 5 s. The blocking socket runs off Swift's
    /// cooperative threads, which the proxy's own tasks need.
    static func ask(_ port: Int, _ request: String) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: askBlocking(port, request)) }
        }
    }

    private static func askBlocking(_ port: Int, _ request: String) -> String? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withCString { send(descriptor, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var answer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &answer, answer.count, 0)
        if count < 0 { return errno == ECONNRESET ? "" : nil }
        return String(decoding: answer[..<count], as: UTF8.self)
    }

    @Test("a CONNECT to a name it does not carry, or anything but a CONNECT, is refused with 502 and no tunnel")
    func refusesOtherNames() async throws {
        let proxy = try await NameProxy.start(hosts: ["api.example.com": URL(string: "http://127.0.0.1:9")!])
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

    @Test("a request head that never ends is cut off at 8 KiB")
    func boundedHead() async throws {
        let proxy = try await NameProxy.start(hosts: ["api.example.com": URL(string: "http://127.0.0.1:9")!])
        let port = try #require(URL(string: proxy.url)?.port)
        let flood = "CONNECT api.example.com:443 HTTP/1.1\r\n" + String(repeating: "X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: 400)
        #expect(await Self.ask(port, flood) == "", "closed without an answer, not left waiting")
    }
}
