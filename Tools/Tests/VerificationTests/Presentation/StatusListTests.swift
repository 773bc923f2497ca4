import Crypto
import Foundation
import Logging
import SwitchbackTesting
import Testing
@_spi(SwitchbackInternals) import Switchback
@testable import SwitchbackVerification

/// Token Status Lists (draft-ietf-oauth-status-list-20): the inflater on zlib's own output, the
/// specification's examples read entry by entry, and a credential's status checked end to end.
@Suite("Token Status Lists")
struct StatusListTests {
    /// zlib's output (Python's `zlib.compress`) for each block type, and what it holds.
    static let vectors: [(name: String, compressed: String, plain: [UInt8])] = [
        ("empty, fixed codes", "eJwDAAAAAAE", []),
        ("stored (level 0)", "eAEBEgDt_2hlbGxvLCBzdGF0dXMgbGlzdEBFBuE", Array("hello, status list".utf8)),
        ("fixed codes with back-references", "eJzLSM3JyVfIQCcBaAMIsQ", Array("hello hello hello hello".utf8)),
        (
            "dynamic codes (level 9)",
            "eNrt11dbDgAchvEUQmRXQiWysldSCBUhkVG2UJlFRWY0aCtEpYxCiuxNIanMkCgVMooklRWOHLz_g_sruK73C9wnz-_kUVHXbNuhc8_-Q0da20"
                + "6bs2jZ6nVbtodHxSWmnLlyM_tRfvG7ipo6tSYt2xl06zPYfMz4KY7zXVau2eQfsjPmYNLJC9dv33ta-Ka86oeKIjPA1GLspOmS2bEn_vDxs5L5"
                + "XPu7vkYryUywn7nA1U0yx05dTMu8L5lGzbU6djGWzOLlHuu3BkrmVk7u85L3kunUve-Q4ZaS2RwQuiv2kGReln78-rOeZIaNGmc3Y65k9u4_cu"
                + "LcVcl8-9OgaWtdyUyd5bTEfa1kTl9Kv_MgTzIttPWMeg2UzArPDb5BEZK5-_jFqw-VkunRz2SE1UTJbAvbvS8hWTJvP1X_Um0smdE2kx3mOUvm"
                + "wNHU89cyJPO3YbM27Q0lM3vh0lXePpK5fCPr4bMiyejod-09yEwyXhv9giOjJfOk4HXZl--SUYwpGcWYklGMKRnFmJJRjCkZmphNE5dpQocmvG"
                + "jiCU30p4lwmqigifE0kUQT6jSxiCZu0oQBTWyiiUKaMKWJPTRRSxP2NHGKJprTxHKayKGJ7jQRQBOlNDGKJvbTxB-amEUTl2hCmyY8aeIxTfSj"
                + "iTCa-EQTNjRxlCYa0sRCmrhBE_o0sZEmCmhiKE1E0UQNTUyhiZM0oUkTy2gimya60YQ_TbyhCQuaiKeJ3zQxkyYu0oQWTXjQRC5N9KWJUJr4SB"
                + "PjaOIITTSgCSeaSKcJPZrYQBMvaMKEJnbTRDVNTKaJVJpoRhNLaSKLJrrShB9NvKaJkTQRRxN1NOFIExdooi1NrKaJRzTRhyZCaKKcJsbSxGGa"
                + "qE8TC2gijSY60sR6mnhOE0NoYhdNfKUJO5o4QRNNaWIJTdyhCSOa8KWJVzQxgib20cQvmnCgifM00YYmVtHEQ5roTRPBNFFGE9Y0kUgTajQxny"
                + "au00QHmlhHE_k0MZgmdtJEFU1MoonjNKFBE640kUkTXWhiK02U0MRwmoiliZ80MYMmztFEa5pwp4kHNNGLJoJo4gNNWNFEAk2o0sQ8mrhGE-1p"
                + "wpsmntHEIJqIpIkvNGFLEyk00YQmXGjiNk10poktNFFME-Y0EUMTP2hiOk2cpYlWNOFGE_dpwpgmAmniPU1Y0sQhmqhHE3Np4ipN6NLEWprIo4"
                + "mBNBFBE5U0MZEmkmmiMU0400QGTRjShA9NFNGEGU1E08R3FeV9Ud4X5X1R3hflfVHel__5vvwD2MmJow",
            pattern
        ),
    ]
    /// 5000 bytes of a pattern that compresses into dynamic blocks.
    static let pattern: [UInt8] = (0..<5000).map { UInt8(($0 * 7 + $0 / 13) % 251) }

    @Test("zlib's stored, fixed and dynamic blocks inflate to what was compressed")
    func inflatesZlib() throws {
        for (name, compressed, plain) in Self.vectors {
            #expect(try Inflate.zlib(try #require(Base64URL.decode(compressed)), limit: 1 << 20) == plain, "\(name)")
        }
    }

    @Test("hostile streams are refused, never a crash: cut, a wrong checksum or header, past the limit, and mutated bytes")
    func hostileStreams() throws {
        let dynamic = try #require(Base64URL.decode(Self.vectors[3].compressed))
        #expect(throws: Inflate.Failure.self) { try Inflate.zlib(dynamic.prefix(dynamic.count - 10), limit: 1 << 20) }
        var checksum = dynamic
        checksum[checksum.count - 1] ^= 1
        #expect(throws: Inflate.Failure("the Adler-32 checksum does not match")) { try Inflate.zlib(checksum, limit: 1 << 20) }
        var header = dynamic
        header[0] = 0x79
        #expect(throws: Inflate.Failure.self) { try Inflate.zlib(header, limit: 1 << 20) }
        #expect(throws: Inflate.Failure("the output is larger than 1000 bytes")) { try Inflate.zlib(dynamic, limit: 1000) }
        #expect(throws: Inflate.Failure.self) { try Inflate.zlib(dynamic + [0], limit: 1 << 20) }
        // Every single-byte change of the dynamic stream fails, or changes only the last byte's unused bits
        // and inflates to the same bytes: nothing else passes the Adler-32 check, and nothing crashes.
        for index in 2..<(dynamic.count - 4) {
            var mutated = dynamic
            mutated[index] ^= 0x5A
            if let output = try? Inflate.zlib(mutated, limit: 1 << 20) {
                #expect(output == Self.pattern, "a change at \(index) inflated to other bytes and passed the checksum")
            }
        }
    }

    @Test("the specification's examples (§4.1): bits 1 and bits 2, entry by entry, nothing past the end")
    func specificationExamples() throws {
        let one = try StatusList(bits: 1, lst: "eNrbuRgAAhcBXQ")
        #expect((0..<16).map { one.status(at: $0) } == [1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1])
        #expect(one.status(at: 16) == nil && one.status(at: -1) == nil)
        let two = try StatusList(bits: 2, lst: "eNo76fITAAPfAgc")
        #expect((0..<12).map { two.status(at: $0) } == [1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3])
        #expect(throws: SwitchbackError.self) { try StatusList(bits: 3, lst: "eNrbuRgAAhcBXQ") }
    }

    // MARK: A credential's status, end to end

    static let uri = "https://issuer.example.com/statuslists/1"

    /// A credential of the example's issuer whose status is entry `index` of the list at `uri`.
    static func presentation(index: Int) throws -> String {
        try Forge.credential([
            "iss": "https://issuer.example.com", "vct": "urn:eudi:pid:1",
            "status": .object(["status_list": .object(["idx": .number(Double(index)), "uri": .string(uri)])]),
        ]) + "~"
    }

    /// The specification's bits-1 list in a Status List Token, signed with `key` (the issuer's by default).
    static func statusListToken(
        sub: String = uri, exp: Double = 2_291_720_170, typ: String = "statuslist+jwt", key: P256.Signing.PrivateKey = Forge.issuer,
        iat: Bool = true
    ) throws -> String {
        var claims: [String: JSONValue] = [
            "sub": .string(sub), "exp": .number(exp), "ttl": .number(600), "status_list": .object(["bits": .number(1), "lst": "eNrbuRgAAhcBXQ"]),
        ]
        if iat { claims["iat"] = .number(1_686_920_170) }
        return try Forge.jws(["alg": "ES256", "typ": .string(typ)], claims, key: key)
    }

    static func verifier(_ transport: StubTransport?, clock: ManualClock) throws -> SDJWTVerifier {
        let keys = try JWKSCache(jwksJSON: Data(RFC9901Example.issuerJWKS.utf8), clock: clock, logger: Logger(label: "test"))
        let checker = transport.map { StatusListChecker(transport: $0, issuers: FixedIssuerKeys(keys), clock: clock) }
        return SDJWTVerifier(issuerKeys: keys, type: "dc+sd-jwt", clock: clock, statusLists: checker)
    }

    @Test("a credential's status: valid passes, revoked is refused, an index past the list is refused; the list is kept for its ttl")
    func credentialStatus() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let transport = StubTransport { request in
            #expect(request.url.absoluteString == Self.uri && request.headers["Accept"] == "application/statuslist+jwt")
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/statuslist+jwt"], body: Data(try Self.statusListToken().utf8))
        }
        let verifier = try Self.verifier(transport, clock: clock)
        // Entry 1 is 0 (VALID); entry 0 is 1 (INVALID).
        _ = try await verifier.verify(try Self.presentation(index: 1), keyBinding: nil)
        let revoked = await #expect(throws: SwitchbackError.self) { _ = try await verifier.verify(try Self.presentation(index: 0), keyBinding: nil) }
        #expect(revoked?.message.contains("revoked") == true)
        let outside = await #expect(throws: SwitchbackError.self) { _ = try await verifier.verify(try Self.presentation(index: 16), keyBinding: nil) }
        #expect(outside?.message.contains("outside") == true)
        #expect(transport.requests.count == 1, "the list is kept")
        clock.advance(by: 599)
        _ = try await verifier.verify(try Self.presentation(index: 1), keyBinding: nil)
        #expect(transport.requests.count == 1, "kept within its ttl (600 s)")
        clock.advance(by: 2)
        _ = try await verifier.verify(try Self.presentation(index: 1), keyBinding: nil)
        #expect(transport.requests.count == 2, "fetched again after its ttl, before the checker's own hour")

        let unchecked = await #expect(throws: SwitchbackError.self) {
            _ = try await Self.verifier(nil, clock: clock).verify(try Self.presentation(index: 1), keyBinding: nil)
        }
        #expect(unchecked?.message.contains("not set up") == true, "a status nobody checks is not taken as valid")
    }

    @Test("a list that takes longer than the deadline in all (a trickled body), or is larger than 1 MiB, leaves the status unknown: refused")
    func boundedFetch() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let keys = try JWKSCache(jwksJSON: Data(RFC9901Example.issuerJWKS.utf8), clock: clock, logger: Logger(label: "test"))
        // A transport that answers after 60 s, and does not stop when cancelled.
        let slow = StubTransport { _ in
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 60) { continuation.resume() }
            }
            return HTTPResponse(status: 200, body: Data(try Self.statusListToken().utf8))
        }
        let checker = StatusListChecker(transport: slow, issuers: FixedIssuerKeys(keys), clock: clock, deadline: .milliseconds(300))
        let started = ContinuousClock.now
        let late = await #expect(throws: SwitchbackError.self) {
            _ = try await checker.status(uri: Self.uri, index: 1, issuer: "https://example.com/issuer")
        }
        #expect(late?.message.contains("did not arrive within") == true, "\(String(describing: late))")
        // Well before the transport's minute, with room for a loaded machine's scheduling.
        #expect(ContinuousClock.now - started < .seconds(30), "the deadline, not the transport, ended the wait")

        let large = StubTransport { _ in HTTPResponse(status: 200, body: Data(count: (1 << 20) + 1)) }
        let big = await #expect(throws: SwitchbackError.self) {
            _ = try await StatusListChecker(transport: large, issuers: FixedIssuerKeys(keys), clock: clock).status(
                uri: Self.uri, index: 1, issuer: "https://example.com/issuer")
        }
        #expect(big?.message.contains("larger than 1 MiB") == true)
    }

    @Test("a Status List Token for another uri, expired, signed by another key, or not there leaves the status unknown: refused")
    func untrustedLists() async throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_800_000_000))
        let answers: [(String, @Sendable () throws -> HTTPResponse)] = [
            (
                "another uri",
                { HTTPResponse(status: 200, body: Data(try Self.statusListToken(sub: "https://issuer.example.com/statuslists/2").utf8)) }
            ),
            ("expired", { HTTPResponse(status: 200, body: Data(try Self.statusListToken(exp: 1_700_000_000).utf8)) }),
            ("another typ", { HTTPResponse(status: 200, body: Data(try Self.statusListToken(typ: "JWT").utf8)) }),
            ("another key", { HTTPResponse(status: 200, body: Data(try Self.statusListToken(key: P256.Signing.PrivateKey()).utf8)) }),
            ("not there", { HTTPResponse(status: 404) }),
            ("no iat", { HTTPResponse(status: 200, body: Data(try Self.statusListToken(iat: false).utf8)) }),
        ]
        for (name, answer) in answers {
            let verifier = try Self.verifier(StubTransport { _ in try answer() }, clock: clock)
            await #expect(throws: SwitchbackError.self, "\(name)") { _ = try await verifier.verify(try Self.presentation(index: 1), keyBinding: nil) }
        }
        // A redirect is followed to https on the list's own host only: the others would answer a good list.
        for (location, followed) in [
            ("http://issuer.example.com/list", false), ("https://lists.example.com/1", false), ("https://169.254.169.254/latest", false),
            ("https://issuer.example.com:8443/1", false), ("https://ISSUER.example.com/statuslists/current", true), ("/statuslists/moved", true),
        ] {
            let transport = StubTransport { request in
                guard request.url.absoluteString == Self.uri else {
                    return HTTPResponse(status: 200, body: Data(try Self.statusListToken().utf8))
                }
                return HTTPResponse(status: 302, headers: ["Location": location])
            }
            let verifier = try Self.verifier(transport, clock: clock)
            if followed {
                _ = try await verifier.verify(try Self.presentation(index: 1), keyBinding: nil)
            } else {
                await #expect(throws: SwitchbackError.self, "a redirect to \(location)") {
                    _ = try await verifier.verify(try Self.presentation(index: 1), keyBinding: nil)
                }
            }
        }
    }
}
