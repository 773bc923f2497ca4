#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Crypto
import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwiftASN1
import X509

/// The companion's parsers that the fuzz targets reach, with the properties checked inside this module, where
/// their internal types are visible. Each returns nil when the property holds, else what failed.
public enum ServerParsersFuzz {
    /// `ClientAddress` against `inet_pton` and against itself.
    public static func clientAddress(_ text: String) -> String? {
        let address = ClientAddress(text)
        if let address {
            // Its bucket names the same bucket when read again (an IPv6 /64 as its first address).
            let again = address.bucket.hasSuffix("::/64") ? ClientAddress(String(address.bucket.dropLast(3))) : ClientAddress(address.bucket)
            guard again?.bucket == address.bucket else { return "the bucket \(address.bucket) does not read back as itself" }
        }
        // A bare address (no brackets, port, zone or spaces) is read as inet_pton reads it.
        guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), !text.contains("["), !text.contains("%")
        else { return nil }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let bytes = withUnsafeBytes(of: v4) { Array($0) }
            guard address?.bytes == bytes else {
                return "inet_pton reads \(text) as \(bytes), ClientAddress as \(String(describing: address?.bytes))"
            }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            var bytes = withUnsafeBytes(of: v6) { Array($0) }
            if bytes.prefix(10).allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { bytes = Array(bytes.suffix(4)) }
            guard address?.bytes == bytes else {
                return "inet_pton reads \(text) as \(bytes), ClientAddress as \(String(describing: address?.bytes))"
            }
        } else if let address, text.filter({ $0 == ":" }).count != 1 {
            // One colon is IPv4 with a port, which inet_pton does not take.
            return "ClientAddress reads \(text) as \(address.bytes), which inet_pton refuses"
        }
        return nil
    }

    static let allowList = try! RedirectAllowList(["https://web.example.com/app", "https://other.example.org", "http://127.0.0.1:8080/local"])

    /// `RedirectAllowList.permits` against an independent reading of the authority as a browser does it (the
    /// WHATWG URL standard: the authority ends at `/`, `?`, `#` or `\`, user-info before its last `@`).
    public static func redirect(_ text: String) -> String? {
        guard let url = allowList.permits(text) else { return nil }
        let lowered = text.lowercased()
        let scheme = lowered.hasPrefix("https://") ? "https" : lowered.hasPrefix("http://") ? "http" : ""
        guard !scheme.isEmpty else { return "permitted a URL that is not http(s)" }
        let afterScheme = text.dropFirst(scheme.count + 3)
        let authority = afterScheme.prefix { !"/?#\\".contains($0) }
        guard !authority.contains("@") else { return "permitted a URL with user-info" }
        let rest = afterScheme.dropFirst(authority.count)
        var host = Substring(authority)
        var port = scheme == "https" ? 443 : 80
        if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            let digits = authority[authority.index(after: colon)...]
            if !digits.isEmpty {  // `host:` is the scheme's default port
                guard let number = Int(digits) else { return "permitted an authority with a port that is not a number" }
                port = number
            }
        }
        let path = String(rest.prefix { !"?#".contains($0) })
        let entries: [(String, String, Int, String)] = [
            ("https", "web.example.com", 443, "/app"), ("https", "other.example.org", 443, "/"), ("http", "127.0.0.1", 8080, "/local"),
        ]
        let matches = entries.contains { entry in
            entry.0 == scheme && entry.1 == host.lowercased() && entry.2 == port
                && (entry.3 == "/" || path == entry.3 || path.hasPrefix(entry.3 + "/"))
        }
        guard matches else { return "permitted \(text), which a browser reads as host \(host), port \(port), path \(path)" }
        guard url.host?.lowercased() == host.lowercased() else { return "the URL returned names host \(url.host ?? "none")" }
        return nil
    }

    /// The cookie name the `session-cookie` target looks for (the companion's default, with its `__Host-` prefix).
    static let cookieName = "__Host-switchback_session"

    /// `RequestReading.sessionID` against Foundation's split and trim: the text is read as a `Cookie` header,
    /// then as an `Authorization` header beside a cookie that holds a valid ID.
    public static func sessionCookie(_ text: String) -> String? {
        let id = RequestReading.sessionID(authorization: nil, cookie: text, cookieName: cookieName)
        let pairs = text.components(separatedBy: ";").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) }
        let first = pairs.first { $0.hasPrefix(cookieName + "=") }.map { String($0.dropFirst(cookieName.count + 1)) }
        let expected = first.flatMap { $0.utf8.count == 43 && $0.utf8.allSatisfy(isBase64URL) ? $0 : nil }
        guard id == expected else { return "the cookie header gives \(id ?? "none"), Foundation's split \(expected ?? "none")" }
        let other = String(repeating: "A", count: 43)
        let header = RequestReading.sessionID(authorization: text, cookie: "\(cookieName)=\(other)", cookieName: cookieName)
        if text.lowercased().hasPrefix("session ") {
            let token = String(text.dropFirst(8))
            let valid = token.utf8.count == 43 && token.utf8.allSatisfy(isBase64URL)
            guard header == (valid ? token : nil) else { return "an Authorization: Session header gives \(header ?? "none")" }
        } else {
            guard header == other else { return "an Authorization header of another scheme hid the cookie" }
        }
        return nil
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
    }

    /// `RequestReading.authorizationResponse` (the response page's query) against URLComponents, and the link
    /// it forwards read back by the app.
    public static func responseQuery(_ text: String) -> String? {
        let forwarded: [(String, String)]
        do {
            forwarded = try RequestReading.authorizationResponse(query: text)
        } catch {
            return nil
        }
        let names = forwarded.map(\.0)
        guard names == RequestReading.responseMembers.filter(names.contains) else { return "forwarded members out of order or repeated: \(names)" }
        guard names.contains("state"), names.contains("code") || names.contains("error") else { return "forwarded a query that is not a response" }
        // Where the query is one an HTTP request can carry (RFC 3986 §3.4's characters; URLComponents would
        // percent-encode anything else, `%` included) and URLComponents reads it, its items (with form rules)
        // agree with what is forwarded.
        let queryCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:@/?".utf8)
        if text.utf8.allSatisfy(queryCharacters.contains),
            let items = URLComponents(string: "https://companion.example/response?" + text)?.percentEncodedQueryItems
        {
            for (name, value) in forwarded {
                let read = items.filter { ($0.name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") == name }
                    .map { ($0.value ?? "").replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
                guard read == [value] else { return "\(name) is forwarded as \(value.debugDescription), URLComponents reads \(read)" }
            }
        }
        // The app reads the link the page's button opens with URLComponents: the same members, the same values.
        let link = "https://app.example.com/response?" + FormEncoding.encode(forwarded)
        guard let components = URLComponents(string: link), let items = components.queryItems else { return "the forwarded link is not a URL" }
        guard items.map(\.name) == names, items.map({ $0.value ?? "" }) == forwarded.map(\.1) else {
            return "the app reads the forwarded link as \(items), not \(forwarded)"
        }
        return nil
    }

    /// The IACA the `crl` target checks lists against: its name is the seeds' issuer, its key is made once
    /// per process and signs nothing the fuzzer writes, so no list may be believed.
    static let iaca: Certificate = {
        let key = P256.Signing.PrivateKey()
        let name = try! DistinguishedName {
            CommonName("Test IACA")
            CountryName("NO")
        }
        let extensions = try! Certificate.Extensions {
            Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
            Critical(KeyUsage(keyCertSign: true, cRLSign: true))
        }
        return try! Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date(timeIntervalSince1970: 1_700_000_000), notValidAfter: Date(timeIntervalSince1970: 2_000_000_000), issuer: name,
            subject: name, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: Certificate.PrivateKey(key))
    }()

    /// `RevocationList` (after an even first byte) and a certificate's CRL distribution points (after an odd one).
    public static func revocationList(_ input: [UInt8]) -> String? {
        guard let mode = input.first else { return nil }
        let bytes = Array(input.dropFirst())
        if mode % 2 == 1 {
            guard let certificate = try? Certificate(derEncoded: bytes), let points = try? certificate.revocationListURIs() else { return nil }
            for url in points where !["http", "https"].contains(url.scheme?.lowercased() ?? "") || url.host == nil {
                return "a distribution point \(url) is not http(s) with a host"
            }
            return nil
        }
        let list: RevocationList
        do {
            list = try RevocationList(der: bytes)
        } catch {
            return error is RevocationList.Refused ? nil : "RevocationList threw \(type(of: error))"
        }
        guard list.signed.startIndex >= 0, list.signed.endIndex <= bytes.count, bytes[list.signed.indices].elementsEqual(list.signed) else {
            return "the signed part is not the input's own bytes"
        }
        guard list.revoked.allSatisfy({ !$0.isEmpty && ($0.count == 1 || $0[0] != 0) }) else { return "a revoked serial keeps a leading zero" }
        guard let again = try? RevocationList(der: bytes), again.revoked == list.revoked, again.issuer == list.issuer,
            again.thisUpdate == list.thisUpdate, again.nextUpdate == list.nextUpdate
        else { return "the same bytes read as another list" }
        do {
            try list.verify(issuer: iaca, now: Date(timeIntervalSince1970: 1_796_000_000))
            return "a list the IACA never signed was believed"
        } catch is RevocationList.Refused {
            return nil
        } catch {
            return "verify threw \(type(of: error))"
        }
    }
}
