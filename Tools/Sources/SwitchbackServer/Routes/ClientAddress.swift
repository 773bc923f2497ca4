import Foundation
import NIOCore

/// A client's IP address as a proxy header or a connection names it, parsed rather than compared as text:
/// `a.b.c.d`, `a.b.c.d:port`, an IPv6 address with or without brackets, zone or port (`[2001:db8::1]:443`),
/// and an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, which NIO reports when it listens on `::`) taken as
/// the IPv4 address it is.
struct ClientAddress: Equatable, Sendable {
    enum Value: Equatable, Sendable {
        case v4([UInt8])
        case v6([UInt16])
    }

    let value: Value

    init?(_ text: some StringProtocol) {
        var text = Substring(text).trimmingSpaces()
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.hasPrefix("[") {
            // [v6] or [v6]:port
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && Self.isPort(rest.dropFirst())) else { return nil }
            text = text[text.index(after: text.startIndex)..<close]
            guard let groups = Self.ipv6(text) else { return nil }
            self.init(v6: groups)
            return
        }
        let colons = text.filter { $0 == ":" }.count
        if colons == 0 {
            guard let bytes = Self.ipv4(text) else { return nil }
            self.init(value: .v4(bytes))
        } else if colons == 1 {
            // v4:port (a bare IPv6 address always has at least two colons)
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard Self.isPort(parts[1]), let bytes = Self.ipv4(parts[0]) else { return nil }
            self.init(value: .v4(bytes))
        } else {
            guard let groups = Self.ipv6(text) else { return nil }
            self.init(v6: groups)
        }
    }

    /// A connection's address, read from its socket address rather than printed and parsed again; nil for a
    /// Unix domain socket.
    init?(_ address: SocketAddress) {
        switch address {
        case .v4(let v4):
            self.init(value: .v4(withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }))
        case .v6(let v6):
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            self.init(v6: stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) })
        case .unixDomainSocket:
            return nil
        }
    }

    private init(value: Value) {
        self.value = value
    }

    private init(v6 groups: [UInt16]) {
        // ::ffff:a.b.c.d is the IPv4 client a.b.c.d.
        if groups.prefix(5).allSatisfy({ $0 == 0 }), groups[5] == 0xFFFF {
            self.init(value: .v4([UInt8(groups[6] >> 8), UInt8(groups[6] & 0xFF), UInt8(groups[7] >> 8), UInt8(groups[7] & 0xFF)]))
        } else {
            self.init(value: .v6(groups))
        }
    }

    /// The rate limits' key: an IPv4 address itself, an IPv6 address by its /64 (which one subscriber
    /// usually holds whole).
    var bucket: String {
        switch value {
        case .v4(let bytes): bytes.map(String.init).joined(separator: ".")
        case .v6(let groups): groups.prefix(4).map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
        }
    }

    /// The address in network order: 4 bytes for IPv4, 16 for IPv6.
    var bytes: [UInt8] {
        switch value {
        case .v4(let bytes): bytes
        case .v6(let groups): groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        }
    }

    /// Whether the address lies in `network` (`a.b.c.d/n`, `v6/n`, or a single address).
    func isIn(_ network: Network) -> Bool {
        let bytes = bytes
        guard bytes.count == network.bytes.count else { return false }
        let whole = network.prefixLength / 8
        let rest = network.prefixLength % 8
        guard bytes.prefix(whole) == network.bytes.prefix(whole) else { return false }
        guard rest > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - rest)
        return bytes[whole] & mask == network.bytes[whole] & mask
    }

    /// An address range a proxy's connections come from.
    struct Network: Equatable, Sendable {
        let base: ClientAddress
        let prefixLength: Int
        /// The base's bytes, computed once: a proxy check runs on every rate-limited request.
        let bytes: [UInt8]

        init?(_ text: String) {
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let base = ClientAddress(parts[0]) else { return nil }
            let bits = if case .v4 = base.value { 32 } else { 128 }
            if parts.count == 2 {
                guard let length = Int(parts[1]), (0...bits).contains(length), parts[1].allSatisfy(\.isNumber) else { return nil }
                prefixLength = length
            } else {
                prefixLength = bits
            }
            self.base = base
            bytes = base.bytes
        }
    }

    private static func isPort(_ text: Substring) -> Bool {
        (1...5).contains(text.count) && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) && (Int(text).map { $0 <= 65535 } ?? false)
    }

    private static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            // No leading zero: inet_pton refuses one, and inet_aton reads it as octal (`010` is 8), so another
            // reader of the same header could count the request against another address (a fuzz finding).
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }), part.count == 1 || part.first != "0",
                let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    private static func ipv6(_ text: Substring) -> [UInt16]? {
        // A zone (`%eth0`) names the link, not the address.
        let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let halves = address.components(separatedBy: "::")
        guard (1...2).contains(halves.count) else { return nil }
        // A dotted IPv4 part may end the address only (RFC 4291 §2.2): `203.0.113.70::443` is no address (a fuzz finding).
        func groups(_ half: String, endsAddress: Bool) -> [UInt16]? {
            guard !half.isEmpty else { return [] }
            var result: [UInt16] = []
            let parts = half.split(separator: ":", omittingEmptySubsequences: false)
            for (index, part) in parts.enumerated() {
                if endsAddress, index == parts.count - 1, part.contains("."), let v4 = ipv4(part) {
                    result += [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
                } else {
                    guard (1...4).contains(part.count), part.allSatisfy(\.isHexDigit), let value = UInt16(part, radix: 16) else { return nil }
                    result.append(value)
                }
            }
            return result
        }
        guard let head = groups(halves[0], endsAddress: halves.count == 1), let tail = halves.count == 2 ? groups(halves[1], endsAddress: true) : []
        else { return nil }
        if halves.count == 1 { return head.count == 8 ? head : nil }
        let missing = 8 - head.count - tail.count
        guard missing >= 1 else { return nil }
        return head + Array(repeating: 0, count: missing) + tail
    }
}
