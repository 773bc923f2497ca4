import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

@Suite("Form encoding")
struct FormEncodingTests {
    @Test("decodes escapes, UTF-8 and + as space only where asked; keeps order and empty values")
    func decodes() throws {
        let fields = try #require(FormEncoding.decode("a=1&b=x%2By+z&c=&d&caf%C3%A9=%E2%9C%93", plusIsSpace: true))
        #expect(fields.map(\.0) == ["a", "b", "c", "d", "café"])
        #expect(fields.map(\.1) == ["1", "x+y z", "", "", "✓"])
        #expect(FormEncoding.decode("b=x+y", plusIsSpace: false)?.first?.1 == "x+y")
    }

    @Test("splits on the bytes & and = as the WHATWG parser does: empty pairs dropped, the first = splits, raw UTF-8 kept")
    func splits() throws {
        let fields = try #require(FormEncoding.decode("&&a=b=c&=v&k=&x\u{301}=&\u{301}y=1&é=ü&", plusIsSpace: true))
        #expect(fields.map(\.0) == ["a", "", "k", "x\u{301}", "\u{301}y", "é"])
        #expect(fields.map(\.1) == ["b=c", "v", "", "", "1", "ü"])
        #expect(FormEncoding.decode("", plusIsSpace: true)?.isEmpty == true)
    }

    @Test(
        "malformed escapes and bytes that are not UTF-8 are refused, not repaired", arguments: ["a=%", "a=%4", "a=%zz", "a=%C3", "%FF=1", "a=%C3%28"])
    func refuses(_ text: String) {
        #expect(FormEncoding.decode(text, plusIsSpace: true) == nil)
    }

    @Test("encode and decode round-trip reserved and non-ASCII characters")
    func roundTrip() throws {
        let fields = [("redirect_uri", "com.example.app:/oauth/callback?x=1&y=2"), ("name", "Zoë O'Brien #1 / 100%")]
        let decoded = try #require(FormEncoding.decode(FormEncoding.encode(fields), plusIsSpace: true))
        #expect(decoded.map(\.0) == fields.map(\.0))
        #expect(decoded.map(\.1) == fields.map(\.1))
    }
}
