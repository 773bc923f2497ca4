import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackServer

/// The `goto` allow-list of the session hand-off: exact origin, path prefix at a segment boundary, and
/// every open-redirect trick refused.
@Suite("RedirectAllowList")
struct RedirectAllowListTests {
    static let list = try! RedirectAllowList(["https://web.example.com/app", "http://127.0.0.1:8080/"])

    @Test(
        "allowed: the entry itself, paths below it, a query and a fragment, the default port written out",
        arguments: [
            "https://web.example.com/app", "https://web.example.com/app/", "https://web.example.com/app/orders/42",
            "https://web.example.com/app?tab=1", "https://web.example.com/app/x#top", "https://web.example.com:443/app/x",
            "https://WEB.example.com/app/x", "http://127.0.0.1:8080/anything", "HTTPS://web.example.com/app/x", "hTTp://127.0.0.1:8080/",
            "https://web.example.com/app/%41%2a", "https://web.example.com/app/x.y/..z/.a",
        ])
    func allowed(_ candidate: String) {
        #expect(Self.list.permits(candidate) != nil)
    }

    @Test(
        "open-redirect variants are refused",
        arguments: [
            "//evil.example/app",  // scheme-relative
            "https://web.example.com@evil.example/app",  // user-info trick
            "https://evil.example\\@web.example.com/app",  // backslash
            "https://web.example.com\\.evil.example/app",  // backslash in the host
            "https://web.example.com.evil.example/app",  // a suffix domain
            "https://evil.example/app",  // another host
            "http://web.example.com/app",  // http instead of https
            "https://web.example.com:8443/app",  // another port
            "https://web.example.com/application",  // a prefix that only shares characters
            "https://web.example.com/ap",  // shorter than the entry
            "https://web.example.com/app/%2e%2e/admin",  // encoded dot segment
            "https://web.example.com/app%2f..%2fadmin",  // encoded slash
            "https://web.example.com/app/../admin",  // dot segment
            "https://web.example.com/app//evil.example",  // empty segment
            "https://web.example.com/app//",  // empty segment at the end
            "https://web.example.com/app/%2E%2E/admin",  // encoded dot segment, upper case
            "https://web.example.com/app%2F..%2Fadmin",  // encoded slash, upper case
            "https://web.example.com/app/%5Cevil",  // encoded backslash
            "https://web.example.com/app/%5c",  // encoded backslash at the end
            "https://web.example.com/app/.",  // dot segment at the end
            "https://web.example.com/app/..",  // dot-dot segment at the end
            "httpx://web.example.com/app",  // not http(s)
            "https://%77eb.example.com/app",  // a percent-encoded host
            "https://web.example.com/app/%252e%252e/admin",  // a dot segment after a second decoding
            "https://web.example.com/app/%252F",  // a separator after a second decoding
            "javascript:alert(1)//https://web.example.com/app",  // another scheme
            "data:text/html,<script>",  // data URL
            "https://wеb.example.com/app",  // Cyrillic е look-alike
            "https://web.example.com/app\t/x",  // control character
            " https://web.example.com/app",  // leading space
            "https:/web.example.com/app",  // one slash
            "",  // empty
            "/app",  // relative
        ])
    func refused(_ candidate: String) {
        #expect(Self.list.permits(candidate) == nil)
    }

    @Test("entries must be absolute https URLs (http only on loopback) without user-info, query or fragment")
    func badEntries() {
        for entry in ["http://web.example.com/app", "https://user@web.example.com/", "https://web.example.com/app?x=1", "/app", "web.example.com"] {
            #expect(throws: SwitchbackError.self) { try RedirectAllowList([entry]) }
        }
    }

    @Test("a port past 65535, or past Int's range (read by URLComponents as none), is refused; an empty port is the default (fuzz findings)")
    func ports() throws {
        let list = try RedirectAllowList(["https://web.example.com/app", "https://other.example.org"])
        #expect(list.permits("https://WEB.example.com:444444444444444444444443/app/x#f") == nil)
        #expect(list.permits("https://other.example.org:65536/") == nil)
        #expect(list.permits("https://other.example.org:+443/") == nil)
        #expect(list.permits("https://other.example.org:443/") != nil)
        #expect(list.permits("https://other.example.org:/") != nil, "an empty port is the scheme's default, for a browser too")
    }
}
