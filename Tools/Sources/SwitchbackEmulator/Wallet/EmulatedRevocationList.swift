public import Foundation
public import Crypto
import SwiftASN1
public import X509

/// A certificate revocation list as an IACA publishes one (RFC 5280 §5.1, v2, ECDSA with SHA-256): the
/// emulated issuer's, and, with its fields changed, the malformed or hostile lists the verifier's tests
/// need (another signer, no `nextUpdate`, a critical extension the verifier does not act on).
public struct EmulatedRevocationList: Sendable {
    public var issuer: DistinguishedName
    public var key: P256.Signing.PrivateKey
    public var revoked: [Certificate.SerialNumber]
    public var thisUpdate: Date
    public var nextUpdate: Date?
    /// Adds a critical issuing distribution point (2.5.29.28), which a verifier that does not act on it
    /// must not use the list with.
    public var criticalIssuingDistributionPoint = false

    public init(
        issuer: DistinguishedName, key: P256.Signing.PrivateKey, revoked: [Certificate.SerialNumber] = [], thisUpdate: Date = Date() - 60,
        nextUpdate: Date? = Date() + 86_400
    ) {
        self.issuer = issuer
        self.key = key
        self.revoked = revoked
        self.thisUpdate = thisUpdate
        self.nextUpdate = nextUpdate
    }

    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]

    /// The list, DER.
    public func der() throws -> Data {
        var body = DER.Serializer()
        try body.appendConstructedNode(identifier: .sequence) { tbs in
            try tbs.serialize(1)
            try tbs.appendConstructedNode(identifier: .sequence) { try $0.serialize(Self.ecdsaWithSHA256) }
            try tbs.serialize(issuer)
            try Self.serialize(thisUpdate, into: &tbs)
            if let nextUpdate { try Self.serialize(nextUpdate, into: &tbs) }
            if !revoked.isEmpty {
                try tbs.appendConstructedNode(identifier: .sequence) { list in
                    for serial in revoked {
                        try list.appendConstructedNode(identifier: .sequence) { entry in
                            try entry.serialize(serial.bytes)
                            try Self.serialize(thisUpdate, into: &entry)
                        }
                    }
                }
            }
            try tbs.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)) { wrapper in
                try wrapper.appendConstructedNode(identifier: .sequence) { extensions in
                    var number = DER.Serializer()
                    try number.serialize(1)
                    try extensions.serialize(Certificate.Extension(oid: [2, 5, 29, 20], critical: false, value: number.serializedBytes[...]))
                    if criticalIssuingDistributionPoint {
                        var point = DER.Serializer()
                        point.appendConstructedNode(identifier: .sequence) { _ in }
                        try extensions.serialize(Certificate.Extension(oid: [2, 5, 29, 28], critical: true, value: point.serializedBytes[...]))
                    }
                }
            }
        }
        let signed = body.serializedBytes
        let signature = try key.signature(for: signed).derRepresentation
        var list = DER.Serializer()
        try list.appendConstructedNode(identifier: .sequence) { outer in
            outer.serializeRawBytes(signed)
            try outer.appendConstructedNode(identifier: .sequence) { try $0.serialize(Self.ecdsaWithSHA256) }
            try outer.serialize(ASN1BitString(bytes: Array(signature)[...]))
        }
        return Data(list.serializedBytes)
    }

    /// A `Time`: UTCTime through 2049, GeneralizedTime after (RFC 5280 §5.1.2.4).
    private static func serialize(_ date: Date, into serializer: inout DER.Serializer) throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let (year, month, day, hour, minute, second) = (parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!, parts.second!)
        if year < 2050 {
            try serializer.serialize(try UTCTime(year: year, month: month, day: day, hours: hour, minutes: minute, seconds: second))
        } else {
            try serializer.serialize(
                try GeneralizedTime(year: year, month: month, day: day, hours: hour, minutes: minute, seconds: second, fractionalSeconds: 0))
        }
    }
}
