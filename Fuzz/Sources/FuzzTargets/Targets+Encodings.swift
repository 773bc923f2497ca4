import Crypto
import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackVerification

extension FuzzTarget {
    /// The mdoc and status-list CBOR reader.
    static let cbor = FuzzTarget(
        "cbor",
        asserts: """
            CBOR.decode reads an item or throws CBORError; an item it reads, written again with the shortest heads, \
            reads back equal, and writing that again gives the same bytes
            """
    ) { input in
        do {
            let item = try CBOR.decode(input)
            let written = item.encoded
            if reporting { report("\(hex(SHA256.hash(data: input))) accepted \(hex(written)) \(item.hasTag ? 1 : 0)") }
            guard let again = try? CBOR.decode(written) else {
                require(false, "an item written again does not read back")
                return
            }
            require(again == item, "an item written again reads back as another")
            require(again.encoded == written, "writing an item is not stable")
        } catch let error as CBORError {
            if reporting { report("\(hex(SHA256.hash(data: input))) refused \(error)") }
        } catch {
            require(false, "CBOR.decode threw \(type(of: error)), not CBORError")
        }
    }

    /// Base64url without padding, as JOSE uses it, against Foundation's base64.
    static let base64url = FuzzTarget(
        "base64url",
        asserts: """
            Base64URL.decode takes exactly the canonical unpadded base64url texts: what it decodes, Foundation decodes \
            to the same bytes (after translating the alphabet and padding), and encoding those bytes gives the text back
            """
    ) { input in
        guard let text = text(input) else { return }
        let decoded = Base64URL.decode(text)
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if text.contains("+") || text.contains("/") || text.contains("=") { standard = "!" }  // not base64url's alphabet
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        let reference = Data(base64Encoded: standard)
        if let decoded {
            require(reference == decoded, "Foundation decodes the text to other bytes, or refuses it")
            require(Base64URL.encode(decoded) == text, "a decoded text does not encode back to itself (not canonical)")
        } else if let reference {
            // Refused where Foundation accepts: only a text that is not the canonical encoding of its bytes.
            require(Base64URL.encode(reference) != text, "a canonical base64url text is refused")
        }
    }

    /// JWS compact serialisation, split before any signature check, and the JWE five-part split.
    static let jws = FuzzTarget(
        "jws",
        asserts: """
            CompactJWS reads three base64url parts with a JSON header naming alg, or throws SwitchbackError with the \
            code it was given; a token it reads has the header's members as Foundation reads them
            """
    ) { input in
        guard let token = text(input) else { return }
        do {
            let jws = try CompactJWS(token, malformed: .idTokenMalformed)
            require(!jws.header.alg.isEmpty, "a JWS without alg was read")
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            require(parts.count == 3, "a JWS of \(parts.count) parts was read")
            guard let header = Base64URL.decode(parts[0]), case .object(let members)? = try? JSONDecoder().decode(JSONValue.self, from: header)
            else {
                require(false, "a header Foundation cannot read was read")
                return
            }
            require(members["alg"] == .string(jws.header.alg), "the header's alg differs from Foundation's reading")
            require(members["kid"].map { $0 == .string(jws.header.kid ?? "") } ?? (jws.header.kid == nil), "kid differs")
            require(members["typ"].map { $0 == .string(jws.header.typ ?? "") } ?? (jws.header.typ == nil), "typ differs")
            require(Base64URL.decode(parts[1]) == jws.payload, "the payload differs from its base64url")
        } catch let error as SwitchbackError {
            require(error.code == .idTokenMalformed, "CompactJWS threw \(error.code), not the code it was given")
        } catch {
            require(false, "CompactJWS threw \(type(of: error))")
        }
    }

    /// `application/x-www-form-urlencoded` bodies and queries, against Foundation's percent-decoding.
    static let form = FuzzTarget(
        "form",
        asserts: """
            FormEncoding.decode splits on & and the first =, and decodes each part as Foundation's removingPercentEncoding \
            does (+ as a space in a form): the same verdict and the same fields; fields it reads, encoded again, read back equal
            """
    ) { input in
        guard let text = text(input) else { return }
        for plusIsSpace in [true, false] {
            let fields = FormEncoding.decode(text, plusIsSpace: plusIsSpace)
            var reference: [(String, String)]? = []
            // Split on the scalars `&` and `=` (a `Character` split would keep `&` with a mark that combines with it).
            let scalars = text.unicodeScalars
            for pair in scalars.split(separator: "&", omittingEmptySubsequences: true) {
                let (name, value) = pair.firstIndex(of: "=").map { (pair[..<$0], pair[pair.index(after: $0)...]) } ?? (pair, pair[pair.endIndex...])
                func decode(_ part: Substring.UnicodeScalarView) -> String? {
                    // `+` as a scalar (String's replacingOccurrences matches whole characters, and `+` with a mark
                    // after it is one character).
                    let spaced = plusIsSpace ? Substring.UnicodeScalarView(part.map { $0 == "+" ? " " : $0 }) : part
                    // Foundation on Linux replaces bytes that are not UTF-8 with U+FFFD; FormEncoding refuses them.
                    guard let decoded = String(spaced).removingPercentEncoding,
                        !decoded.unicodeScalars.contains("\u{FFFD}") || part.contains("\u{FFFD}")
                    else { return nil }
                    return decoded
                }
                guard let name = decode(name), let value = decode(value) else {
                    reference = nil
                    break
                }
                reference?.append((name, value))
            }
            require(
                fields.map { $0.map { [$0.0, $0.1] } } == reference.map { $0.map { [$0.0, $0.1] } },
                "FormEncoding and Foundation read the form differently (plusIsSpace \(plusIsSpace))")
            if plusIsSpace, let fields {
                let again = FormEncoding.decode(FormEncoding.encode(fields), plusIsSpace: true)
                require(again.map { $0.map { [$0.0, $0.1] } } == fields.map { [$0.0, $0.1] }, "fields encoded again read back otherwise")
            }
        }
    }

    /// zlib streams (status lists).
    static let inflate = FuzzTarget(
        "inflate",
        asserts: """
            Inflate.zlib gives at most its limit of bytes or throws Inflate.Failure; the same stream with a larger \
            limit gives the same bytes or the same refusal
            """
    ) { input in
        let small = Result { () throws(Inflate.Failure) in try Inflate.zlib(input, limit: 4096) }
        let large = Result { () throws(Inflate.Failure) in try Inflate.zlib(input, limit: 1 << 20) }
        switch (small, large) {
        case (.success(let a), .success(let b)):
            require(a.count <= 4096, "more bytes than the limit")
            require(a == b, "a larger limit gives other bytes")
        case (.failure, .success(let b)):
            require(b.count > 4096, "refused under a small limit although the output fits it")
        case (.success, .failure):
            require(false, "refused under a larger limit only")
        case (.failure, .failure):
            break
        }
    }
}

func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

extension CBOR {
    /// Whether a tag appears anywhere in the item: the reference gives some tags a meaning (dates, bignums),
    /// and refuses items whose content does not fit it.
    var hasTag: Bool {
        switch self {
        case .tagged: true
        case .array(let items): items.contains { $0.hasTag }
        case .map(let pairs): pairs.contains { $0.key.hasTag || $0.value.hasTag }
        default: false
        }
    }
}
