import Foundation
import Testing
@testable import WebKitGTKHost

#if canImport(Glibc)
    import Glibc
#endif

/// WebKitGTK starts its web and network processes inheriting every descriptor not marked close-on-exec, and
/// SwiftNIO on Linux opens sockets unmarked: the host marks them, so that a loopback server's close reaches
/// its client while a WebKit process lives.
@Suite("Descriptors: the engine's processes inherit none of the host's sockets")
struct DescriptorTests {
    static func closesOnExec(_ descriptor: Int32) -> Bool { fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0 }

    @Test("an unmarked socket is marked before the engine's thread runs its next piece of work")
    func markedBeforeEngineWork() async throws {
        let loop = try MainLoop.shared.get()
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        try #require(descriptor >= 0)
        #expect(!Self.closesOnExec(descriptor), "opened unmarked")
        await loop.run {}
        #expect(Self.closesOnExec(descriptor))
    }

    @Test("an unmarked socket is marked when the name proxy accepts a connection")
    func markedWhenProxyAccepts() async throws {
        let proxy = try await NameProxy.start(hosts: ["api.example.com": NameProxyTests.absentServer()])
        let port = try #require(URL(string: proxy.url)?.port)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        try #require(descriptor >= 0)
        #expect(!Self.closesOnExec(descriptor), "opened unmarked")
        let answer = await NameProxyTests.ask(port, "CONNECT evil.example.com:443 HTTP/1.1\r\n\r\n")
        #expect(answer?.hasPrefix("HTTP/1.1 502") == true)
        #expect(Self.closesOnExec(descriptor))
    }
}
